/*
 * cli/run_ops: file watches that reload the policy or the config, the config
 * read again at a round boundary (every config read stays alive to the end:
 * what was built at start borrows from it), and the reporting threads' feed.
 */
#include "cli/run_ops.h"

#include <stdlib.h>
#include <string.h>

#include "config_reload.h"
#include "engine/podevents.h"
#include "engine/status.h"
#include "kube/recorder.h"
#include "kube/statuswriter.h"
#include "runtime/clock.h"
#include "runtime/filewatch.h"

enum { WATCH_CONFIG = 0, WATCH_POLICY = 1 };

/* Pods told about one round at most (the recorder's buckets and queue
 * bound the writes further). */
#define EVENTS_PODS_MAX 500

/* A config read again, kept to the end (see the file comment). */
struct kept {
	struct config *c;
	struct kept *next;
};

struct run_ops {
	const char *config_path;
	const struct config *first;
	const struct config *cur;
	const struct logger *log;
	struct kept *kept;
	struct filewatch *fw;
	struct reconciler *rec;   /* set by run_ops_watch */
	struct batcher *batch;
	atomic_bool config_pending;
	/* reporting */
	struct status_board *board;
	struct statuswriter *status;
	struct recorder *events;
	atomic_bool active;
};

struct run_ops *run_ops_new(const char *config_path, const struct config *cfg,
			    const struct logger *log)
{
	struct run_ops *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->config_path = config_path;
	o->first = o->cur = cfg;
	o->log = log;
	atomic_init(&o->config_pending, false);
	atomic_init(&o->active, true);
	return o;
}

void run_ops_free(struct run_ops *o)
{
	if (!o)
		return;
	run_ops_stop(o);
	statuswriter_free(o->status);
	recorder_free(o->events);
	status_board_free(o->board);
	while (o->kept) {
		struct kept *k = o->kept;

		o->kept = k->next;
		config_free(k->c);
		free(k);
	}
	free(o);
}

void run_ops_stop(struct run_ops *o)
{
	if (!o)
		return;
	filewatch_free(o->fw);
	o->fw = NULL;
}

const struct config *run_ops_config(const struct run_ops *o)
{
	return o->cur;
}

void run_ops_request_config(struct run_ops *o)
{
	atomic_store(&o->config_pending, true);
	if (o->batch)
		batcher_request(o->batch);
}

/* From the watcher's thread. */
static void on_files(void *ctx, uint32_t changed)
{
	struct run_ops *o = ctx;
	int64_t now = clock_wall(clock_real());

	if (changed & (1u << WATCH_CONFIG)) {
		log_at(o->log, LOG_INFO, now,
		       "the config %s changed: it will be read again before the next round",
		       o->config_path);
		/* the config's reload loads the policy too */
		run_ops_request_config(o);
	} else if (changed & (1u << WATCH_POLICY)) {
		log_at(o->log, LOG_INFO, now,
		       "the policy %s changed: it will be reloaded before the next round",
		       filewatch_path(o->fw, WATCH_POLICY));
		reconciler_request_reload(o->rec);
		batcher_request(o->batch);
	}
}

int run_ops_watch(struct run_ops *o, struct reconciler *rec, struct batcher *batch,
		  struct errbuf *err)
{
	o->rec = rec;
	o->batch = batch;
	if (!o->first->reload_watch)
		return 0;
	o->fw = filewatch_new(o->first->reload_debounce_ms * CLOCK_NS_PER_MS, err);
	if (!o->fw)
		return -1;
	if (filewatch_add(o->fw, o->config_path, WATCH_CONFIG, err) < 0 ||
	    filewatch_add(o->fw, reconciler_policy_path(rec), WATCH_POLICY, err) < 0 ||
	    filewatch_start(o->fw, on_files, o, err) < 0) {
		filewatch_free(o->fw);
		o->fw = NULL;
		return -1;
	}
	log_at(o->log, LOG_INFO, clock_wall(clock_real()),
	       "watching %s and %s: a change reloads them", o->config_path,
	       reconciler_policy_path(rec));
	return 0;
}

int run_ops_apply_config(struct run_ops *o, struct reconciler *rec, const struct snapshot *s,
			 int64_t now)
{
	char restart[512], dropped[ERRBUF_MAX / 2] = "";
	struct errbuf err;
	struct config *nc;
	struct kept *k;

	if (!atomic_exchange(&o->config_pending, false))
		return 0;
	nc = config_load(o->config_path, &err);
	if (!nc) {
		log_at(o->log, LOG_ERROR, now, "config reload failed, the config in use stays: %s",
		       err.msg);
		return 0;
	}
	if (config_keep_restart_only(o->cur, nc, restart, sizeof(restart)))
		log_at(o->log, LOG_WARN, now,
		       "config reload: these settings changed but need a restart, and keep "
		       "their running values: %s", restart);
	if (strcmp(nc->policy_path, reconciler_policy_path(rec)) != 0 && o->fw)
		log_at(o->log, LOG_WARN, now,
		       "config reload: the new policy file %s is loaded, but only a restart "
		       "watches it for changes (SIGHUP reloads it)", nc->policy_path);
	k = calloc(1, sizeof(*k));
	if (!k || reconciler_apply_config(rec, nc, s, dropped, sizeof(dropped), &err) < 0) {
		log_at(o->log, LOG_ERROR, now,
		       "config reload failed, the config and policy in use stay: %s",
		       k ? err.msg : "out of memory");
		free(k);
		config_free(nc);
		return 0;
	}
	k->c = nc;
	k->next = o->kept;
	o->kept = k;
	o->cur = nc;
	log_at(o->log, LOG_INFO, now, "config reloaded from %s; policy %s%s%s", o->config_path,
	       nc->policy_path, dropped[0] ? "; store entries that are not data were not carried over: " : "",
	       dropped);
	return 1;
}

int run_ops_report(struct run_ops *o, struct kube_client *client, struct errbuf *err)
{
	const struct config *c = o->first;

	if (c->status_enabled) {
		struct statuswriter_opts so = {client, c->status_namespace, c->status_name,
					       c->status_interval_ms * CLOCK_NS_PER_MS, o->log};

		o->board = status_board_new();
		if (!o->board)
			return errbuf_set(err, "out of memory");
		o->status = statuswriter_new(&so, err);
		if (!o->status)
			return -1;
		statuswriter_set_active(o->status, atomic_load(&o->active));
	}
	if (c->events_enabled) {
		struct recorder_opts ro;

		memset(&ro, 0, sizeof(ro));
		ro.client = client;
		ro.log = o->log;
		o->events = recorder_new(&ro, err);
		if (!o->events)
			return -1;
		recorder_set_active(o->events, atomic_load(&o->active));
	}
	return 0;
}

void run_ops_set_active(struct run_ops *o, bool active)
{
	if (!o)
		return;
	atomic_store(&o->active, active);
	if (o->status)
		statuswriter_set_active(o->status, active);
	if (o->events)
		recorder_set_active(o->events, active);
}

static void pod_event(void *ctx, const struct pod *p, const char *type, const char *reason,
		      const char *message)
{
	struct run_ops *o = ctx;

	recorder_pod_event(o->events, p->ns, p->name, p->uid, type, reason, message);
}

static void observe(void *ctx, const struct snapshot *s, const struct round_view *v)
{
	struct run_ops *o = ctx;

	if (o->board && o->status) {
		struct buf text = BUF_INIT, json = BUF_INIT;

		status_board_round(o->board, s, v);
		if (status_board_render(o->board, s, &text, &json) == 0)
			statuswriter_submit(o->status, text.data, json.data);
		buf_free(&text);
		buf_free(&json);
	}
	/* a failed policy decided nothing: no pod is told it was not chosen */
	if (o->events && !v->policy_error && atomic_load(&o->active))
		podevents_explain(s, v->accepted, EVENTS_PODS_MAX, pod_event, o);
}

void run_ops_round_opts(struct run_ops *o, struct round_opts *ro)
{
	ro->observe = observe;
	ro->observe_ctx = o;
}
