/*
 * statuswriter: the status ConfigMap on the API server — create-or-update
 * with conflicts retried, a read, and a thread writing the latest status at
 * most once per interval while the process acts. Its content is engine/status's.
 */
#ifndef LUASCALE_STATUSWRITER_H
#define LUASCALE_STATUSWRITER_H

#include <stdbool.h>
#include <stdint.h>

#include "errbuf.h"
#include "kube/client.h"
#include "log.h"

/*
 * Creates ConfigMap 'ns'/'name' with the 'n' keys and values of 'keys'
 * and 'values' as its data, or replaces its data when it exists (GET, then
 * PUT with its resourceVersion; a 409 from a writer in between is tried
 * again, up to 5 times). Labels it app.kubernetes.io/managed-by=luascale
 * and annotates luascale.io/last-updated with 'now' (unix seconds).
 * Returns 0, or -1 with "ConfigMap ns/name: why" in 'err'.
 */
int kube_configmap_put(struct kube_client *c, const char *ns, const char *name,
		       const char *const *keys, const char *const *values, size_t n,
		       int64_t now, struct errbuf *err);

/*
 * Reads key 'key' of ConfigMap 'ns'/'name' into '*out' (malloc'd, the
 * caller frees). Returns 0; 1 when the ConfigMap does not exist (with
 * what to check in 'err'); -1 with why (no answer, a status, no such key).
 */
int kube_configmap_get_key(struct kube_client *c, const char *ns, const char *name,
			   const char *key, char **out, struct errbuf *err);

struct statuswriter;

struct statuswriter_opts {
	struct kube_client *client;   /* borrowed, outlives the writer */
	const char *ns, *name;        /* copied */
	int64_t interval_ns;          /* at most one write per; > 0 */
	const struct logger *log;     /* borrowed; failures, at most one a minute */
};

/* A writer with its thread started, active (writing) from the start.
 * NULL with why. */
struct statuswriter *statuswriter_new(const struct statuswriter_opts *o, struct errbuf *err);

/* Stops the thread (a write in flight ends as the client's requests do)
 * and frees. NULL is a no-op. */
void statuswriter_free(struct statuswriter *w);

/* Hands the latest status (copied; replaces one not yet written). Never
 * blocks on the network. */
void statuswriter_submit(struct statuswriter *w, const char *text, const char *json);

/* Whether this process writes (the one that acts): a standby keeps what
 * it is handed but writes nothing until made active. Any thread. */
void statuswriter_set_active(struct statuswriter *w, bool active);

/* Writes done and failed so far (tests, metrics). */
void statuswriter_counts(struct statuswriter *w, uint64_t *written, uint64_t *failed);

#endif
