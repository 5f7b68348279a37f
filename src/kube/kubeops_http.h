/*
 * kubeops_http: the actuator's Kubernetes writes (engine/kubeops.h) over a
 * real API server through a kube_client: cordon, labels, annotations,
 * taints, evictions, node deletion, a node's pods, Events and pod bindings. It owns no
 * connection (the client does) and retries only 409 conflicts on taints.
 */
#ifndef LUASCALE_KUBE_KUBEOPS_HTTP_H
#define LUASCALE_KUBE_KUBEOPS_HTTP_H

#include "engine/kubeops.h"

struct clock;
struct kube_client;

struct kubeops_http_opts {
	struct clock *clock;      /* Event timestamps and names; NULL: clock_real() */
	int conflict_retries;     /* taint read-modify-write attempts after a 409; 0: 5 */
	int page_limit;           /* node_pods page size; 0: 500 */
	const char *event_namespace; /* where Events on Nodes go; NULL: "default" */
	const char *component;    /* Event source; NULL: "luascale" */
};

struct kubeops_http;

/*
 * Returns the writer over 'client' (borrowed; it must outlive the writer)
 * or NULL when out of memory. 'opts' may be NULL for defaults.
 */
struct kubeops_http *kubeops_http_new(struct kube_client *client,
				      const struct kubeops_http_opts *opts);

void kubeops_http_free(struct kubeops_http *h);

/* Fills 'out' with the kubeops interface backed by 'h' (borrowed). */
void kubeops_http_bind(struct kubeops_http *h, struct kubeops *out);

#endif
