/*
 * sim/apiserver: the HTTP side of the simulated API server — the listening
 * socket and libmicrohttpd daemon (a thread per connection, so watches
 * block only themselves), routing, discovery, the faults it injects, the
 * cloud's sim.luascale.io endpoints, the ticker (PDB status, watch drops,
 * the down window) and the kubeconfig. Resources are apiserver_objects.c's.
 *
 * Lock order: the cloud's lock, then the store's, then s->mu; never back
 * (the full rule is at the top of apiserver_objects.c).
 */
#include "sim/apiserver/apiserver.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "runtime/clock.h"
#include "sim/apiserver/apiserver_internal.h"
#include "sim/apiserver/apiserver_openapi.h"
#include "sim/apiserver/apiserver_events.h"
#include "sim/apiserver/apiserver_proto.h"
#include "sim/world/workloads.h"
#include "sim/apiserver/apiserver_render.h"
#include "sim/clouds/cloud.h"
#include "sim/world/reacting.h"

#define MAX_BODY (4u << 20)
#define SIM_GROUP "sim.luascale.io"
#define AUTHZ_GROUP "authorization.k8s.io"
#define CALL_TIMEOUT_NS (600 * CLOCK_NS_PER_S)

void apiserver_opts_default(struct apiserver_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->history = 10000;
	o->history_window_s = 300;
	o->bookmark_ns = 60 * CLOCK_NS_PER_S;
	o->pdb_sync_ns = CLOCK_NS_PER_S;
	snprintf(o->default_cpu, sizeof(o->default_cpu), "500m");
	snprintf(o->default_memory, sizeof(o->default_memory), "512Mi");
	o->max_watch_ns = 1800 * CLOCK_NS_PER_S;
	o->max_events = 5000;
	o->event_ttl_s = 3600;
	o->seed = 1;
}

/* ---- faults ---- */

static double draw(struct apiserver *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return (double)(s->rng >> 11) / 9007199254740992.0;
}

void apiserver_inject(struct apiserver *s, const struct apiserver_faults *f)
{
	int64_t now = apiserver_now_ns();
	size_t i;
	bool drop = f->drop_watches_now;

	pthread_mutex_lock(&s->mu);
	if (f->clear) {
		s->n_rules = 0;
		s->latency_ns = 0;
		s->drop_every_ns = 0;
		s->expire_watches = 0;
		s->down_until_ns = 0;
	}
	if (f->drop_watches_ns > 0) {
		s->drop_every_ns = f->drop_watches_ns;
		s->next_drop_ns = now + f->drop_watches_ns;
	}
	s->expire_watches += f->expire_watches;
	if (f->latency_ns > 0)
		s->latency_ns = f->latency_ns;
	if (f->down_for_ns > 0) {
		s->down_from_ns = now + f->down_after_ns;
		s->down_until_ns = s->down_from_ns + f->down_for_ns;
	}
	for (i = 0; i < f->n_rules; i++) {
		if (s->n_rules == APISERVER_MAX_RULES) {
			memmove(&s->rules[0], &s->rules[1], (APISERVER_MAX_RULES - 1) * sizeof(s->rules[0]));
			s->n_rules--;
		}
		s->rules[s->n_rules++] = f->rules[i];
	}
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	if (drop) {
		apiserver_store_lock(s->store);
		apiserver_store_drop_watches(s->store);
		apiserver_store_unlock(s->store);
	}
	for (i = 0; i < f->n_kubelets; i++)
		if (sim_cluster_set_kubelet(s->cluster, f->kubelets[i].node, f->kubelets[i].up) < 0)
			log_at(s->o.log, LOG_WARN, apiserver_now_wall(),
			       "sim apiserver: fault: no node \"%s\" for its kubelet", f->kubelets[i].node);
}

/* Does a rule make this request fail? Its code, or 0. */
static int fault_code(struct apiserver *s, const char *verb, const char *resource)
{
	size_t i;
	int code = 0;

	pthread_mutex_lock(&s->mu);
	for (i = 0; i < s->n_rules && !code; i++) {
		struct apiserver_fault_rule *r = &s->rules[i];

		if ((r->verb[0] && strcmp(r->verb, verb) != 0) ||
		    (r->resource[0] && strcmp(r->resource, resource) != 0))
			continue;
		if (r->count > 0) {
			code = r->code;
			if (--r->count == 0) {
				memmove(r, r + 1, (s->n_rules - i - 1) * sizeof(*r));
				s->n_rules--;
			}
		} else if (draw(s) < r->rate) {
			code = r->code;
		}
	}
	pthread_mutex_unlock(&s->mu);
	return code;
}

/* ---- the listening socket and the daemon ---- */

static int listen_on(int port, struct errbuf *err)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return errbuf_set(err, "socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 128) < 0) {
		errbuf_set(err, "127.0.0.1:%d: %s", port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls);
static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe);

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct apiserver *s = cls;
	char msg[400];
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	log_at(s->o.log, LOG_DEBUG, apiserver_now_wall(), "sim apiserver: http: %s", msg);
}

static struct MHD_Daemon *start_daemon(struct apiserver *s, int fd)
{
	return MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD |
				MHD_USE_ITC | MHD_USE_ERROR_LOG,
				0, NULL, NULL, on_request, s,
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)600,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
				MHD_OPTION_END);
}

/* Stops a daemon: refuses new connections at once, then ends the others. */
static void stop_daemon(struct MHD_Daemon *d)
{
	MHD_socket fd;

	if (!d)
		return;
	fd = MHD_quiesce_daemon(d);
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
	MHD_stop_daemon(d);
}

/* ---- the ticker: PDB status, watch drops, the down window ---- */

static void go_down(struct apiserver *s)
{
	struct MHD_Daemon *d;

	d = s->daemon;
	s->daemon = NULL;
	s->down = true;
	pthread_mutex_unlock(&s->mu);
	log_at(s->o.log, LOG_WARN, apiserver_now_wall(),
	       "sim apiserver: fault: down (connection refused on 127.0.0.1:%d)", s->port);
	apiserver_store_lock(s->store);
	apiserver_store_drop_watches(s->store);
	apiserver_store_unlock(s->store);
	stop_daemon(d);
	pthread_mutex_lock(&s->mu);
}

static void come_back(struct apiserver *s)
{
	struct errbuf err;
	struct MHD_Daemon *d;
	int fd = listen_on(s->port, &err);

	if (fd < 0) {
		log_at(s->o.log, LOG_WARN, apiserver_now_wall(),
		       "sim apiserver: cannot listen again yet: %s", err.msg);
		return;
	}
	d = start_daemon(s, fd);
	if (!d) {
		close(fd);
		log_at(s->o.log, LOG_WARN, apiserver_now_wall(),
		       "sim apiserver: cannot start serving again yet");
		return;
	}
	s->daemon = d;
	s->down = false;
	log_at(s->o.log, LOG_INFO, apiserver_now_wall(),
	       "sim apiserver: fault over: serving on 127.0.0.1:%d again", s->port);
}

static void *ticker(void *arg)
{
	struct apiserver *s = arg;
	int64_t next_pdb = 0;

	pthread_mutex_lock(&s->mu);
	while (!s->stopping) {
		int64_t now = apiserver_now_ns(), wake = now + 100 * CLOCK_NS_PER_MS;
		struct timespec ts;

		if (now >= next_pdb) {
			pthread_mutex_unlock(&s->mu);
			apiserver_sync_static(s, false);
			apiserver_store_lock(s->store);
			apiserver_store_compact(s->store, apiserver_now_wall(), s->o.history_window_s);
			apiserver_events_expire(s->events);
			apiserver_store_unlock(s->store);
			pthread_mutex_lock(&s->mu);
			next_pdb = now + s->o.pdb_sync_ns;
		}
		if (s->drop_every_ns > 0 && now >= s->next_drop_ns) {
			s->next_drop_ns = now + s->drop_every_ns;
			pthread_mutex_unlock(&s->mu);
			log_at(s->o.log, LOG_INFO, apiserver_now_wall(),
			       "sim apiserver: fault: dropping every open watch");
			apiserver_store_lock(s->store);
			apiserver_store_drop_watches(s->store);
			apiserver_store_unlock(s->store);
			pthread_mutex_lock(&s->mu);
		}
		if (s->down_until_ns && !s->down && now >= s->down_from_ns && now < s->down_until_ns)
			go_down(s);
		if (s->down && (!s->down_until_ns || now >= s->down_until_ns) && !s->stopping) {
			come_back(s);
			if (!s->down)
				s->down_until_ns = 0;
		}
		if (s->stopping)
			break;
		ts.tv_sec = (time_t)(wake / CLOCK_NS_PER_S);
		ts.tv_nsec = (long)(wake % CLOCK_NS_PER_S);
		pthread_cond_timedwait(&s->cv, &s->mu, &ts);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* ---- discovery ---- */

static void version_json(struct reply *out)
{
	out->code = 200;
	buf_puts(&out->body, "{\"major\":\"1\",\"minor\":\"32\",\"gitVersion\":\"v1.32.0-luascale-sim\","
		 "\"gitCommit\":\"0000000000000000000000000000000000000000\",\"gitTreeState\":\"clean\","
		 "\"buildDate\":\"2025-01-01T00:00:00Z\",\"goVersion\":\"go1.23\",\"compiler\":\"gc\","
		 "\"platform\":\"linux/amd64\"}");
}

static void verbs_json(struct buf *b, const char *verbs)
{
	const char *p = verbs;
	bool first = true;

	buf_puts(b, "[");
	while (*p) {
		const char *sp = strchr(p, ' ');
		size_t n = sp ? (size_t)(sp - p) : strlen(p);

		buf_printf(b, "%s\"%.*s\"", first ? "" : ",", (int)n, p);
		first = false;
		p += n + (sp ? 1 : 0);
	}
	buf_puts(b, "]");
}

static void resource_json(struct buf *b, bool *first, const char *name, const char *singular,
			  bool namespaced, const char *group, const char *version, const char *kind,
			  const char *verbs, const char *short_name, const char *category)
{
	buf_printf(b, "%s{\"name\":\"%s\",\"singularName\":\"%s\",\"namespaced\":%s,", *first ? "" : ",",
		   name, singular, namespaced ? "true" : "false");
	if (group)
		buf_printf(b, "\"group\":\"%s\",\"version\":\"%s\",", group, version);
	buf_printf(b, "\"kind\":\"%s\",\"verbs\":", kind);
	verbs_json(b, verbs);
	if (short_name)
		buf_printf(b, ",\"shortNames\":[\"%s\"]", short_name);
	if (category)
		buf_printf(b, ",\"categories\":[\"%s\"]", category);
	buf_puts(b, "}");
	*first = false;
}

/* APIResourceList of group 'group' ("" core) version v1; 0, or -1 when unknown. */
static int resource_list(struct reply *out, const char *group)
{
	struct buf *b = &out->body;
	bool first = true, any = false;
	size_t i;

	buf_printf(b, "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":\"%s%sv1\","
		   "\"resources\":[", group, group[0] ? "/" : "");
	if (strcmp(group, AUTHZ_GROUP) == 0) {
		resource_json(b, &first, "selfsubjectaccessreviews", "", false, NULL, NULL,
			      "SelfSubjectAccessReview", "create", NULL, NULL);
		resource_json(b, &first, "selfsubjectrulesreviews", "", false, NULL, NULL,
			      "SelfSubjectRulesReview", "create", NULL, NULL);
		any = true;
	}
	if (strcmp(group, SIM_GROUP) == 0) {
		resource_json(b, &first, "groups", "group", false, NULL, NULL, "NodeGroup", "list",
			      NULL, NULL);
		resource_json(b, &first, "launch", "launch", false, NULL, NULL, "Launch", "create",
			      NULL, NULL);
		resource_json(b, &first, "terminate", "terminate", false, NULL, NULL, "Terminate",
			      "create", NULL, NULL);
		resource_json(b, &first, "faults", "fault", false, NULL, NULL, "Faults", "create", NULL,
			      NULL);
		resource_json(b, &first, "stats", "stats", false, NULL, NULL, "Stats", "get", NULL,
			      NULL);
		resource_json(b, &first, "reacting", "reacting", false, NULL, NULL, "Reacting", "get",
			      NULL, NULL);
		any = true;
	}
	for (i = 0; i < APISERVER_N_RESOURCES; i++) {
		const struct apiserver_resdef *d = &apiserver_resources[i];
		char sub[64];

		if (strcmp(d->group, group) != 0)
			continue;
		any = true;
		resource_json(b, &first, d->name, d->singular, d->namespaced, NULL, NULL, d->kind,
			      d->verbs, d->short_name,
			      i == APISERVER_PODS || i == APISERVER_DAEMONSETS ||
			      i == APISERVER_DEPLOYMENTS || i == APISERVER_REPLICASETS ||
			      i == APISERVER_JOBS ? "all" : NULL);
		if (i == APISERVER_NODES || i == APISERVER_PODS || i == APISERVER_PDBS) {
			snprintf(sub, sizeof(sub), "%s/status", d->name);
			resource_json(b, &first, sub, "", d->namespaced, NULL, NULL, d->kind,
				      i == APISERVER_NODES ? "get patch" : "get", NULL, NULL);
		}
		if (i == APISERVER_DEPLOYMENTS || i == APISERVER_REPLICASETS || i == APISERVER_JOBS) {
			snprintf(sub, sizeof(sub), "%s/status", d->name);
			resource_json(b, &first, sub, "", true, NULL, NULL, d->kind, "get patch update",
				      NULL, NULL);
		}
		if (i == APISERVER_DEPLOYMENTS || i == APISERVER_REPLICASETS) {
			snprintf(sub, sizeof(sub), "%s/scale", d->name);
			resource_json(b, &first, sub, "", true, "autoscaling", "v1", "Scale",
				      "get patch update", NULL, NULL);
		}
		if (i == APISERVER_PODS) {
			resource_json(b, &first, "pods/eviction", "", true, "policy", "v1", "Eviction",
				      "create", NULL, NULL);
			resource_json(b, &first, "pods/binding", "", true, NULL, NULL, "Binding",
				      "create", NULL, NULL);
		}
	}
	buf_puts(b, "]}");
	out->code = 200;
	return any ? 0 : -1;
}

static const char *const groups[] = {"apps", "batch", "policy", "coordination.k8s.io", "events.k8s.io",
				     "storage.k8s.io", AUTHZ_GROUP, SIM_GROUP, NULL};

/*
 * authorization.k8s.io/v1 self reviews: the simulated server checks no
 * credentials, so everything is allowed, and the reviews say so.
 */
static void self_review(const char *what, const char *ctype, const char *body, size_t len,
			struct reply *out)
{
	cJSON *o, *status;
	char *txt;
	bool rules = strcmp(what, "selfsubjectrulesreviews") == 0;

	if (!ctype || strncmp(ctype, "application/json", 16) != 0) {
		apiserver_reply_status(out, 415, "UnsupportedMediaType",
				       "the body of the request was in an unknown format - accepted media types include: application/json",
				       NULL, NULL);
		return;
	}
	o = cJSON_ParseWithLength(body, len);

	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		apiserver_reply_status(out, 400, "BadRequest", "the body is not a JSON object", NULL,
				       NULL);
		return;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(o, "status");
	cJSON_DeleteItemFromObjectCaseSensitive(o, "apiVersion");
	cJSON_DeleteItemFromObjectCaseSensitive(o, "kind");
	cJSON_AddStringToObject(o, "apiVersion", AUTHZ_GROUP "/v1");
	cJSON_AddStringToObject(o, "kind", rules ? "SelfSubjectRulesReview" : "SelfSubjectAccessReview");
	if (!cJSON_GetObjectItemCaseSensitive(o, "metadata"))
		cJSON_AddObjectToObject(o, "metadata");
	status = cJSON_AddObjectToObject(o, "status");
	if (rules && status) {
		cJSON *rr = cJSON_AddArrayToObject(status, "resourceRules");
		cJSON *nr = cJSON_AddArrayToObject(status, "nonResourceRules");
		cJSON *r1 = cJSON_CreateObject(), *r2 = cJSON_CreateObject();
		const char *star[] = {"*"};

		if (rr && nr && r1 && r2) {
			cJSON_AddItemToObject(r1, "verbs", cJSON_CreateStringArray(star, 1));
			cJSON_AddItemToObject(r1, "apiGroups", cJSON_CreateStringArray(star, 1));
			cJSON_AddItemToObject(r1, "resources", cJSON_CreateStringArray(star, 1));
			cJSON_AddItemToArray(rr, r1);
			cJSON_AddItemToObject(r2, "verbs", cJSON_CreateStringArray(star, 1));
			cJSON_AddItemToObject(r2, "nonResourceURLs", cJSON_CreateStringArray(star, 1));
			cJSON_AddItemToArray(nr, r2);
			r1 = r2 = NULL;
		}
		cJSON_Delete(r1);
		cJSON_Delete(r2);
		cJSON_AddFalseToObject(status, "incomplete");
	} else if (status) {
		cJSON_AddTrueToObject(status, "allowed");
		cJSON_AddStringToObject(status, "reason", "the simulated API server allows every request");
	}
	txt = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!txt) {
		apiserver_reply_status(out, 500, "InternalError", "out of memory", NULL, NULL);
		return;
	}
	out->code = 201;
	buf_puts(&out->body, txt);
	free(txt);
}

static void group_json(struct buf *b, const char *g)
{
	buf_printf(b, "{\"name\":\"%s\",\"versions\":[{\"groupVersion\":\"%s/v1\",\"version\":\"v1\"}],"
		   "\"preferredVersion\":{\"groupVersion\":\"%s/v1\",\"version\":\"v1\"}}", g, g, g);
}

static bool known_group(const char *g)
{
	size_t i;

	for (i = 0; groups[i]; i++)
		if (strcmp(groups[i], g) == 0)
			return true;
	return false;
}

static void group_list(struct reply *out)
{
	size_t i;

	out->code = 200;
	buf_puts(&out->body, "{\"kind\":\"APIGroupList\",\"apiVersion\":\"v1\",\"groups\":[");
	for (i = 0; groups[i]; i++) {
		if (i)
			buf_puts(&out->body, ",");
		group_json(&out->body, groups[i]);
	}
	buf_puts(&out->body, "]}");
}

/* ---- the cloud's endpoints ---- */

struct call {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int refs;
	bool done;
	int count;
	struct provider_status st;
	struct buf launched;       /* JSON items */
	struct sim_reacting *rx;   /* where the call's nodes are recorded */
	long rx_call;
};

static struct call *call_new(void)
{
	struct call *c = calloc(1, sizeof(*c));
	pthread_condattr_t ca;

	if (!c)
		return NULL;
	c->refs = 2; /* the handler and the cloud's callbacks */
	pthread_mutex_init(&c->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cv, &ca);
	pthread_condattr_destroy(&ca);
	return c;
}

static void call_release(struct call *c)
{
	bool last;

	pthread_mutex_lock(&c->mu);
	last = --c->refs == 0;
	pthread_mutex_unlock(&c->mu);
	if (!last)
		return;
	buf_free(&c->launched);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	free(c);
}

static void call_instance(void *ctx, const struct sim_instance *inst)
{
	struct call *c = ctx;

	pthread_mutex_lock(&c->mu);
	buf_printf(&c->launched, "%s{\"id\":", c->launched.len ? "," : "");
	buf_json_string(&c->launched, inst->id);
	buf_puts(&c->launched, ",\"providerID\":");
	buf_json_string(&c->launched, inst->provider_id);
	buf_puts(&c->launched, "}");
	pthread_mutex_unlock(&c->mu);
	if (c->rx)
		sim_reacting_node(c->rx, c->rx_call, inst->node_name);
}

static void call_done(void *ctx, int count, const struct provider_status *st)
{
	struct call *c = ctx;

	pthread_mutex_lock(&c->mu);
	c->done = true;
	c->count = count;
	if (st)
		c->st = *st;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	call_release(c);
}

static bool stopping(struct apiserver *s)
{
	bool st;

	pthread_mutex_lock(&s->mu);
	st = s->stopping;
	pthread_mutex_unlock(&s->mu);
	return st;
}

/* Waits for the cloud's answer; 0, or -1 when it took too long or the
 * server is stopping. Call lock held. */
static int call_wait(struct apiserver *s, struct call *c)
{
	int64_t deadline = apiserver_now_ns() + CALL_TIMEOUT_NS;

	while (!c->done) {
		int64_t now = apiserver_now_ns(), wake = now + 200 * CLOCK_NS_PER_MS;
		struct timespec ts;

		if (now >= deadline || stopping(s))
			return -1;
		ts.tv_sec = (time_t)(wake / CLOCK_NS_PER_S);
		ts.tv_nsec = (long)(wake % CLOCK_NS_PER_S);
		pthread_cond_timedwait(&c->cv, &c->mu, &ts);
	}
	return 0;
}

static const char *state_str(enum instance_state st)
{
	switch (st) {
	case INSTANCE_PENDING: return "pending";
	case INSTANCE_RUNNING: return "running";
	case INSTANCE_STOPPING: return "stopping";
	case INSTANCE_GONE: return "gone";
	}
	return "?";
}

static void sim_groups(struct apiserver *s, struct reply *out)
{
	struct buf *b = &out->body;
	char why[192];
	size_t i, k, n;

	out->code = 200;
	buf_puts(b, "{\"kind\":\"NodeGroupList\",\"apiVersion\":\"" SIM_GROUP "/v1\",\"items\":[");
	sim_cloud_lock(s->cloud);
	for (i = 0; i < sim_cloud_n_groups(s->cloud); i++) {
		const struct node_group *g = sim_cloud_group(s->cloud, i);
		struct sim_instance *const *inst = sim_cloud_instances(s->cloud, i, &n);

		buf_printf(b, "%s{\"name\":", i ? "," : "");
		buf_json_string(b, g->name);
		buf_printf(b, ",\"min\":%d,\"max\":%d,\"target\":%d,\"pricePerHour\":%g,\"instances\":[",
			   g->min, g->max, sim_cloud_target(s->cloud, i), g->price_per_hour);
		for (k = 0; k < n; k++) {
			buf_printf(b, "%s{\"id\":", k ? "," : "");
			buf_json_string(b, inst[k]->id);
			buf_puts(b, ",\"providerID\":");
			buf_json_string(b, inst[k]->provider_id);
			buf_printf(b, ",\"state\":\"%s\",\"launched\":%lld", state_str(inst[k]->state),
				   (long long)inst[k]->created_wall);
			if (sim_cloud_instance_outdated(s->cloud, inst[k], why, sizeof(why))) {
				buf_puts(b, ",\"outdated\":");
				buf_json_string(b, why);
			}
			buf_puts(b, "}");
		}
		buf_puts(b, "]}");
	}
	sim_cloud_unlock(s->cloud);
	buf_puts(b, "]}");
}

/* The machine-readable name of a cloud error in the sim.luascale.io answers. */
static const char *error_code(enum provider_error e)
{
	switch (e) {
	case PROVIDER_OK: return "";
	case PROVIDER_THROTTLED: return "Throttled";
	case PROVIDER_NO_CAPACITY: return "NoCapacity";
	case PROVIDER_QUOTA: return "Quota";
	case PROVIDER_NOT_FOUND: return "NotFound";
	case PROVIDER_INVALID: return "Invalid";
	case PROVIDER_TRANSIENT: return "Transient";
	case PROVIDER_AUTH: return "Auth";
	case PROVIDER_CANCELLED: return "Cancelled";
	}
	return "Transient";
}

static void call_result(struct reply *out, struct call *c, const char *group, int requested,
			bool launch)
{
	struct buf *b = &out->body;

	out->code = 200;
	buf_puts(b, "{\"group\":");
	buf_json_string(b, group);
	buf_printf(b, ",\"requested\":%d,", requested);
	if (launch) {
		buf_puts(b, "\"launched\":[");
		if (c->launched.len)
			buf_append(b, c->launched.data, c->launched.len);
		buf_puts(b, "],");
	} else {
		buf_printf(b, "\"terminated\":%d,", c->count);
	}
	buf_printf(b, "\"error\":\"%s\",", error_code(c->st.code));
	if (c->st.retry_after_s > 0)
		buf_printf(b, "\"retryAfterSeconds\":%lld,", (long long)c->st.retry_after_s);
	buf_puts(b, "\"message\":");
	buf_json_string(b, c->st.code == PROVIDER_OK ? "" : c->st.message);
	buf_puts(b, "}");
}

static void sim_call(struct apiserver *s, const char *body, size_t len, bool launch,
		     struct reply *out)
{
	cJSON *req = cJSON_ParseWithLength(body, len);
	const cJSON *group = cJSON_GetObjectItemCaseSensitive(req, "group");
	const cJSON *count = cJSON_GetObjectItemCaseSensitive(req, "count");
	const cJSON *ids = cJSON_GetObjectItemCaseSensitive(req, "ids");
	const char **idv = NULL;
	struct call *c = NULL;
	int requested = 0, rc;

	if (!cJSON_IsString(group) ||
	    (launch ? !cJSON_IsNumber(count) || count->valuedouble < 1 || count->valuedouble > 10000 :
		      !cJSON_IsArray(ids))) {
		apiserver_reply_status(out, 400, "BadRequest",
				       launch ? "launch takes {\"group\": NAME, \"count\": N}" :
				       "terminate takes {\"group\": NAME, \"ids\": [ID, ...]}", NULL, NULL);
		goto out;
	}
	c = call_new();
	if (!c)
		goto oom;
	if (launch) {
		requested = (int)count->valuedouble;
		c->rx = s->reacting;
		c->rx_call = sim_reacting_launch(s->reacting, group->valuestring, requested,
						 clock_now(clock_real()));
		rc = sim_cloud_launch(s->cloud, group->valuestring, requested, call_instance, call_done,
				      c);
	} else {
		const cJSON *id;

		requested = cJSON_GetArraySize(ids);
		idv = calloc((size_t)(requested ? requested : 1), sizeof(*idv));
		if (!idv)
			goto oom;
		requested = 0;
		cJSON_ArrayForEach(id, ids) {
			if (!cJSON_IsString(id)) {
				apiserver_reply_status(out, 400, "BadRequest", "ids are strings", NULL,
						       NULL);
				goto out;
			}
			idv[requested++] = id->valuestring;
		}
		rc = sim_cloud_terminate(s->cloud, group->valuestring, idv, (size_t)requested,
					 call_done, c);
	}
	if (rc < 0) {
		c->refs--; /* no callback will run */
		apiserver_reply_status(out, 503, "ServiceUnavailable",
				       "the simulated cloud is shutting down", NULL, NULL);
		goto out;
	}
	pthread_mutex_lock(&c->mu);
	if (call_wait(s, c) < 0)
		apiserver_reply_status(out, 504, "Timeout", "the simulated cloud did not answer in time",
				       NULL, NULL);
	else
		call_result(out, c, group->valuestring, requested, launch);
	pthread_mutex_unlock(&c->mu);
	goto out;
oom:
	apiserver_reply_status(out, 500, "InternalError", "out of memory", NULL, NULL);
out:
	if (c)
		call_release(c);
	free(idv);
	cJSON_Delete(req);
}

static void sim_faults(struct apiserver *s, const char *body, size_t len, struct reply *out)
{
	cJSON *req = cJSON_ParseWithLength(body, len);
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(req, "faults"), *f;
	struct apiserver_faults faults;
	struct errbuf err;
	int n = 0;

	memset(&faults, 0, sizeof(faults));
	if (!cJSON_IsArray(list)) {
		apiserver_reply_status(out, 400, "BadRequest", "faults takes {\"faults\": [SPEC, ...]}",
				       NULL, NULL);
		goto out;
	}
	cJSON_ArrayForEach(f, list) {
		if (!cJSON_IsString(f) || apiserver_faults_parse(&faults, f->valuestring, &err) < 0) {
			apiserver_reply_status(out, 400, "BadRequest",
					       cJSON_IsString(f) ? err.msg : "faults are strings", NULL,
					       NULL);
			goto out;
		}
		n++;
	}
	apiserver_inject(s, &faults);
	log_at(s->o.log, LOG_INFO, apiserver_now_wall(), "sim apiserver: %d fault(s) injected", n);
	out->code = 200;
	buf_printf(&out->body, "{\"applied\":%d}", n);
out:
	cJSON_Delete(req);
}

static void sim_stats(struct apiserver *s, struct reply *out)
{
	struct sim_stats st;
	struct sim_counts c;

	sim_cluster_get_stats(s->cluster, &st);
	sim_cluster_counts(s->cluster, &c);
	out->code = 200;
	buf_printf(&out->body,
		   "{\"podsCreated\":%llu,\"podsBound\":%llu,\"podsSucceeded\":%llu,\"podsRecreated\":%llu,"
		   "\"evictions\":%llu,\"evictionsBlocked\":%llu,\"podsKilled\":%llu,\"barePodsLost\":%llu,"
		   "\"protectedDisrupted\":%llu,\"nodesRegistered\":%llu,\"nodesRemoved\":%llu,"
		   "\"cordons\":%llu,\"uncordons\":%llu,\"nodeDeletes\":%llu,\"events\":%llu,"
		   "\"nodes\":%d,\"nodesReady\":%d,\"nodesCordoned\":%d,\"podsPending\":%d,"
		   "\"podsUnschedulable\":%d,\"podsRunning\":%d,\"podsTerminating\":%d,"
		   "\"podsFinished\":%d,\"resourceVersion\":\"%llu\"}",
		   (unsigned long long)st.pods_created, (unsigned long long)st.pods_bound,
		   (unsigned long long)st.pods_succeeded, (unsigned long long)st.pods_recreated,
		   (unsigned long long)st.evictions, (unsigned long long)st.evictions_blocked,
		   (unsigned long long)st.pods_killed, (unsigned long long)st.bare_pods_lost,
		   (unsigned long long)st.protected_disrupted,
		   (unsigned long long)st.nodes_registered, (unsigned long long)st.nodes_removed,
		   (unsigned long long)st.cordons, (unsigned long long)st.uncordons,
		   (unsigned long long)st.node_deletes, (unsigned long long)st.events, c.nodes,
		   c.nodes_ready, c.nodes_cordoned, c.pods_pending, c.pods_unschedulable,
		   c.pods_running, c.pods_terminating, c.pods_finished,
		   (unsigned long long)apiserver_resource_version(s));
}

static void sim_reacting_get(struct apiserver *s, struct reply *out)
{
	out->code = 200;
	sim_reacting_json(s->reacting, clock_now(clock_real()), &out->body);
}

static void handle_sim(struct apiserver *s, const char *method, const char *what,
		       const char *body, size_t len, struct reply *out)
{
	bool get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0;

	if (strcmp(what, "groups") == 0 && get)
		sim_groups(s, out);
	else if (strcmp(what, "launch") == 0 && post)
		sim_call(s, body, len, true, out);
	else if (strcmp(what, "terminate") == 0 && post)
		sim_call(s, body, len, false, out);
	else if (strcmp(what, "faults") == 0 && post)
		sim_faults(s, body, len, out);
	else if (strcmp(what, "stats") == 0 && get)
		sim_stats(s, out);
	else if (strcmp(what, "reacting") == 0 && get)
		sim_reacting_get(s, out);
	else
		apiserver_reply_status(out, 404, "NotFound", "the server could not find the requested resource",
				       NULL, NULL);
}

/* ---- routing ---- */

#define MAX_SEGS 10

struct req {
	struct buf body;
	bool too_big;
	const char *body_type;       /* the body's type once decoded (protobuf arrives as JSON), or NULL */
};

static int find_resource(const char *group, const char *name)
{
	size_t i;

	for (i = 0; i < APISERVER_N_RESOURCES; i++)
		if (strcmp(apiserver_resources[i].group, group) == 0 &&
		    strcmp(apiserver_resources[i].name, name) == 0)
			return (int)i;
	return -1;
}

static const char *verb_of(const char *method, bool named, bool watch)
{
	if (strcmp(method, "GET") == 0)
		return named ? "get" : watch ? "watch" : "list";
	if (strcmp(method, "POST") == 0)
		return "create";
	if (strcmp(method, "PUT") == 0)
		return "update";
	if (strcmp(method, "PATCH") == 0)
		return "patch";
	if (strcmp(method, "DELETE") == 0)
		return "delete";
	return "";
}

static void not_found_path(struct reply *out)
{
	apiserver_reply_status(out, 404, "NotFound", "the server could not find the requested resource",
			       NULL, NULL);
}

/* A protobuf body becomes the JSON the handlers take (decoded once the
 * path is known, as a real server routes before it decodes): 0, or -1
 * with 'out' answered. */
static int decode_body(const char *method, struct MHD_Connection *conn, struct req *rq,
		       struct reply *out)
{
	int rc = apiserver_proto_request(method, MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
									 "Content-Type"),
					 &rq->body, out);

	if (rc > 0)
		rq->body_type = "application/json";
	return rc < 0 ? -1 : 0;
}

/* Resource paths after /api/v1 or /apis/G/v1: segs[0..n); a leading
 * "watch" segment is the legacy form of ?watch=true. */
static void route_resource(struct apiserver *s, struct MHD_Connection *conn, const char *method,
			   const char *group, char **segs, int n, struct req *rq,
			   struct reply *out)
{
	bool legacy_watch = n >= 2 && strcmp(segs[0], "watch") == 0;

	struct resreq r;
	const char *accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept");
	const char *ct = rq->body_type ? rq->body_type :
			 MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
	const char *w = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "watch");
	char resname[96];
	int ri, code;

	memset(&r, 0, sizeof(r));
	r.method = method;
	r.conn = conn;
	r.body = rq->body.data ? rq->body.data : "";
	r.body_len = rq->body.len;
	r.content_type = ct ? ct : "";
	r.table = accept && strstr(accept, "as=Table") != NULL;
	if (legacy_watch) {
		if (strcmp(method, "GET") != 0)
			goto notfound;
		segs++;
		n--;
	}
	r.watch = legacy_watch || apiserver_param_bool(w);
	if (rq->body.len && ct && strncmp(ct, "application/json", 16) != 0 &&
	    strstr(ct, "json") == NULL && strcmp(method, "PATCH") != 0 &&
	    !apiserver_proto_is_media(ct)) {
		/* (a PATCH's content type is its patch type: the handler judges it) */
		/* protobuf is decoded below; CBOR and the rest get the real
		 * server's 415 (clients do not fall back to JSON) */
		apiserver_reply_status(out, 415, "UnsupportedMediaType",
				       "the body of the request was in an unknown format - accepted media types include: application/json, application/vnd.kubernetes.protobuf",
				       NULL, NULL);
		return;
	}
	if (n == 2 && group[0] == '\0' && strcmp(segs[0], "namespaces") == 0) {
		/* /api/v1/namespaces/NAME */
		ri = APISERVER_NAMESPACES;
		r.name = segs[1];
	} else if (n >= 3 && strcmp(segs[0], "namespaces") == 0) {
		ri = find_resource(group, segs[2]);
		if (ri < 0 || !apiserver_resources[ri].namespaced || n > 5)
			goto notfound;
		r.ns = segs[1];
		r.name = n >= 4 ? segs[3] : NULL;
		r.sub = n == 5 ? segs[4] : NULL;
	} else if (n >= 1 && n <= 3) {
		ri = find_resource(group, segs[0]);
		if (ri < 0 || (apiserver_resources[ri].namespaced && n > 1))
			goto notfound;
		r.name = n >= 2 ? segs[1] : NULL;
		r.sub = n == 3 ? segs[2] : NULL;
	} else {
		goto notfound;
	}
	r.res = (enum apiserver_resource)ri;
	if (decode_body(method, conn, rq, out) < 0) /* protobuf: once the path is known */
		return;
	r.body = rq->body.data ? rq->body.data : "";
	r.body_len = rq->body.len;
	if (rq->body_type)
		r.content_type = rq->body_type;
	snprintf(resname, sizeof(resname), "%s%s%s", apiserver_resources[ri].name, r.sub ? "/" : "",
		 r.sub ? r.sub : "");
	code = fault_code(s, verb_of(method, r.name != NULL && !r.watch, r.watch), resname);
	if (code) {
		char msg[200];

		snprintf(msg, sizeof(msg), "fault injected by the simulator: %s %s", method, resname);
		if (code == 429) {
			apiserver_reply_status(out, 429, "TooManyRequests", msg, NULL, NULL);
			out->retry_after = "1";
		} else {
			apiserver_reply_status(out, code, code == 503 ? "ServiceUnavailable" :
					       "InternalError", msg, NULL, NULL);
		}
		return;
	}
	apiserver_handle_resource(s, &r, out);
	return;
notfound:
	not_found_path(out);
}

/* An authorization review, its body decoded first when in protobuf. */
static void review(struct MHD_Connection *conn, const char *method, const char *what,
		   struct req *rq, struct reply *out)
{
	if (decode_body(method, conn, rq, out) < 0)
		return;
	self_review(what, rq->body_type ? rq->body_type :
		    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type"),
		    rq->body.data ? rq->body.data : "", rq->body.len, out);
}

static void route(struct apiserver *s, struct MHD_Connection *conn, const char *url,
		  const char *method, struct req *rq, struct reply *out)
{
	char path[2048], *segs[MAX_SEGS], *p;
	int n = 0;
	bool get = strcmp(method, "GET") == 0;

	if (strlen(url) >= sizeof(path)) {
		not_found_path(out);
		return;
	}
	snprintf(path, sizeof(path), "%s", url);
	for (p = path; *p && n < MAX_SEGS;) {
		while (*p == '/')
			*p++ = '\0';
		if (!*p)
			break;
		segs[n++] = p;
		while (*p && *p != '/')
			p++;
	}
	if (*p) {
		not_found_path(out);
		return;
	}
	if (n == 1 && get && strcmp(segs[0], "version") == 0) {
		version_json(out);
	} else if (n >= 1 && get && strcmp(segs[0], "openapi") == 0) {
		apiserver_openapi_route(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept"),
					segs + 1, n - 1, out);
	} else if (n == 1 && get && (strcmp(segs[0], "healthz") == 0 || strcmp(segs[0], "readyz") == 0 ||
				     strcmp(segs[0], "livez") == 0)) {
		out->code = 200;
		out->content_type = "text/plain";
		buf_puts(&out->body, "ok");
	} else if (n >= 1 && strcmp(segs[0], "api") == 0) {
		if (n == 1 && get) {
			out->code = 200;
			buf_printf(&out->body, "{\"kind\":\"APIVersions\",\"versions\":[\"v1\"],"
				   "\"serverAddressByClientCIDRs\":[{\"clientCIDR\":\"0.0.0.0/0\","
				   "\"serverAddress\":\"127.0.0.1:%d\"}]}", s->port);
		} else if (n >= 2 && strcmp(segs[1], "v1") == 0) {
			if (n == 2 && get)
				resource_list(out, "");
			else if (n > 2)
				route_resource(s, conn, method, "", segs + 2, n - 2, rq, out);
			else
				not_found_path(out);
		} else {
			not_found_path(out);
		}
	} else if (n >= 1 && strcmp(segs[0], "apis") == 0) {
		if (n == 1 && get) {
			group_list(out);
		} else if (!known_group(segs[1])) {
			not_found_path(out);
		} else if (n == 2 && get) {
			out->code = 200;
			buf_printf(&out->body, "{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\",\"name\":\"%s\","
				   "\"versions\":[{\"groupVersion\":\"%s/v1\",\"version\":\"v1\"}],"
				   "\"preferredVersion\":{\"groupVersion\":\"%s/v1\",\"version\":\"v1\"}}",
				   segs[1], segs[1], segs[1]);
		} else if (n >= 3 && strcmp(segs[2], "v1") == 0) {
			if (n == 3 && get)
				resource_list(out, segs[1]);
			else if (strcmp(segs[1], AUTHZ_GROUP) == 0 && n == 4 &&
				 strcmp(method, "POST") == 0 &&
				 (strcmp(segs[3], "selfsubjectaccessreviews") == 0 ||
				  strcmp(segs[3], "selfsubjectrulesreviews") == 0))
				review(conn, method, segs[3], rq, out);
			else if (strcmp(segs[1], SIM_GROUP) == 0 && n == 4)
				handle_sim(s, method, segs[3], rq->body.data ? rq->body.data : "",
					   rq->body.len, out);
			else if (n > 3)
				route_resource(s, conn, method, segs[1], segs + 3, n - 3, rq, out);
			else
				not_found_path(out);
		} else {
			not_found_path(out);
		}
	} else {
		not_found_path(out);
	}
}

/* ---- libmicrohttpd glue ---- */

static enum MHD_Result queue(struct MHD_Connection *conn, struct reply *out)
{
	struct MHD_Response *resp;
	enum MHD_Result rc;

	if (out->watch) {
		resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024,
							 apiserver_watch_read, out->watch,
							 apiserver_watch_free);
		if (!resp) {
			apiserver_watch_free(out->watch);
			return MHD_NO;
		}
		MHD_add_response_header(resp, "Content-Type",
					out->content_type ? out->content_type : "application/json");
		MHD_add_response_header(resp, "Cache-Control", "no-cache, private");
	} else {
		size_t len = out->body.len;
		char *data = buf_take(&out->body);

		if (!data)
			return MHD_NO;
		resp = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
		if (!resp) {
			free(data);
			return MHD_NO;
		}
		MHD_add_response_header(resp, "Content-Type",
					out->content_type ? out->content_type : "application/json");
		if (out->retry_after)
			MHD_add_response_header(resp, "Retry-After", out->retry_after);
		if (out->warning[0])
			MHD_add_response_header(resp, "Warning", out->warning);
	}
	MHD_add_response_header(resp, "Audit-Id", "luascale-sim");
	rc = MHD_queue_response(conn, (unsigned int)out->code, resp);
	MHD_destroy_response(resp);
	return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct apiserver *s = cls;
	struct req *rq = *con_cls;
	struct reply out;
	int64_t latency;
	enum MHD_Result rc;

	(void)version;
	if (!rq) {
		rq = calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		*con_cls = rq;
		return MHD_YES;
	}
	if (*upload_size) {
		if (rq->body.len + *upload_size > MAX_BODY)
			rq->too_big = true;
		else
			buf_append(&rq->body, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	memset(&out, 0, sizeof(out));
	pthread_mutex_lock(&s->mu);
	latency = s->latency_ns;
	pthread_mutex_unlock(&s->mu);
	if (latency > 0) {
		struct timespec ts = {(time_t)(latency / CLOCK_NS_PER_S),
				      (long)(latency % CLOCK_NS_PER_S)};

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	if (rq->too_big || rq->body.oom)
		apiserver_reply_status(&out, 413, "RequestEntityTooLarge", "the request body is too large",
				       NULL, NULL);
	else
		route(s, conn, url, method, rq, &out);
	/* protobuf answers for clients that prefer them */
	apiserver_proto_reply(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept"), &out);
	if (!out.code)
		apiserver_reply_status(&out, 500, "InternalError", "no answer", NULL, NULL);
	{
		const char *ua = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "User-Agent");

		log_at(s->o.log, LOG_DEBUG, apiserver_now_wall(), "sim apiserver: %s %s -> %d%s by %.200s",
		       method, url, out.code, out.watch ? " (watch)" : "", ua ? ua : "?");
	}
	rc = queue(conn, &out);
	buf_free(&out.body);
	return rc;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct req *rq = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (!rq)
		return;
	buf_free(&rq->body);
	free(rq);
	*con_cls = NULL;
}

/* ---- life cycle ---- */

struct apiserver *apiserver_new(struct sim_cluster *cluster, const struct apiserver_opts *o,
				struct errbuf *err)
{
	struct apiserver *s = calloc(1, sizeof(*s));
	pthread_condattr_t ca;
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	int fd;

	if (!s) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	if (o)
		s->o = *o;
	else
		apiserver_opts_default(&s->o);
	if (!s->o.history)
		s->o.history = 10000;
	if (s->o.bookmark_ns <= 0)
		s->o.bookmark_ns = 60 * CLOCK_NS_PER_S;
	if (s->o.pdb_sync_ns <= 0)
		s->o.pdb_sync_ns = CLOCK_NS_PER_S;
	if (s->o.max_watch_ns <= 0)
		s->o.max_watch_ns = 1800 * CLOCK_NS_PER_S;
	s->rng = s->o.seed ? s->o.seed : 1;
	s->cluster = cluster;
	s->cloud = sim_cluster_cloud(cluster);
	sim_cluster_kubeops(cluster, &s->kube);
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	s->store = apiserver_store_new(s->o.history, s->o.max_events);
	s->events = s->store ? apiserver_events_new(s->store, clock_real(), s->o.event_ttl_s) : NULL;
	if (!s->store || !s->events) {
		errbuf_set(err, "out of memory");
		goto fail;
	}
	s->wl = sim_workloads_new(cluster, s->store, s->rng);
	s->reacting = sim_reacting_new(100000);
	if (!s->wl || !s->reacting) {
		errbuf_set(err, "out of memory");
		goto fail;
	}
	if (s->o.port < 0 || s->o.port > 65535) {
		errbuf_set(err, "port %d out of range", s->o.port);
		goto fail;
	}
	sim_cluster_set_watch(cluster, apiserver_on_change, s);
	apiserver_sync_static(s, true);
	fd = listen_on(s->o.port, err);
	if (fd < 0) {
		errbuf_prefix(err, "sim apiserver");
		goto fail_watch;
	}
	if (getsockname(fd, (struct sockaddr *)&a, &alen) < 0) {
		errbuf_set(err, "sim apiserver: getsockname: %s", strerror(errno));
		close(fd);
		goto fail_watch;
	}
	s->port = ntohs(a.sin_port);
	s->daemon = start_daemon(s, fd);
	if (!s->daemon) {
		close(fd);
		errbuf_set(err, "sim apiserver: cannot start the HTTP daemon");
		goto fail_watch;
	}
	if (pthread_create(&s->ticker, NULL, ticker, s) != 0) {
		errbuf_set(err, "sim apiserver: cannot start its ticker thread");
		goto fail_watch;
	}
	s->ticker_started = true;
	log_at(s->o.log, LOG_INFO, apiserver_now_wall(), "sim apiserver: serving on http://127.0.0.1:%d",
	       s->port);
	return s;
fail_watch:
	sim_cluster_set_watch(cluster, NULL, NULL);
fail:
	apiserver_free(s);
	return NULL;
}

int apiserver_port(const struct apiserver *s)
{
	return s->port;
}

uint64_t apiserver_resource_version(struct apiserver *s)
{
	uint64_t rv;

	apiserver_store_lock(s->store);
	rv = apiserver_store_rv(s->store);
	apiserver_store_unlock(s->store);
	return rv;
}

int apiserver_write_kubeconfig(const struct apiserver *s, const char *path, struct errbuf *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	FILE *f;
	int rc = 0;

	if (fd < 0)
		return errbuf_set(err, "%s: %s", path, strerror(errno));
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return errbuf_set(err, "%s: %s", path, strerror(errno));
	}
	fprintf(f,
		"# Written by luascale sim: the simulated cluster on 127.0.0.1:%d.\n"
		"apiVersion: v1\n"
		"kind: Config\n"
		"clusters:\n"
		"- name: luascale-sim\n"
		"  cluster:\n"
		"    server: http://127.0.0.1:%d\n"
		"    insecure-skip-tls-verify: true\n"
		"users:\n"
		"- name: luascale-sim\n"
		"  user:\n"
		"    token: luascale-sim-not-checked\n"
		"contexts:\n"
		"- name: luascale-sim\n"
		"  context:\n"
		"    cluster: luascale-sim\n"
		"    user: luascale-sim\n"
		"    namespace: default\n"
		"current-context: luascale-sim\n",
		s->port, s->port);
	if (ferror(f))
		rc = errbuf_set(err, "%s: write failed", path);
	if (fclose(f) != 0 && rc == 0)
		rc = errbuf_set(err, "%s: %s", path, strerror(errno));
	return rc;
}

void apiserver_free(struct apiserver *s)
{
	struct MHD_Daemon *d;

	if (!s)
		return;
	if (s->cluster)
		sim_cluster_set_watch(s->cluster, NULL, NULL);
	pthread_mutex_lock(&s->mu);
	s->stopping = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	if (s->ticker_started)
		pthread_join(s->ticker, NULL);
	if (s->store) {
		apiserver_store_lock(s->store);
		apiserver_store_close(s->store);
		apiserver_store_unlock(s->store);
	}
	pthread_mutex_lock(&s->mu);
	d = s->daemon;
	s->daemon = NULL;
	pthread_mutex_unlock(&s->mu);
	stop_daemon(d);
	apiserver_events_free(s->events);
	sim_workloads_free(s->wl);
	apiserver_store_free(s->store);
	sim_reacting_free(s->reacting);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}
