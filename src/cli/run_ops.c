/*
 * cli/run_ops: file watches that ask the reconciler for a reload (the one
 * path SIGHUP takes too: the reconciler reads the config again, keeps it
 * and reports the outcome with the round), and the reporting threads' feed.
 */
#include "cli/run_ops.h"

#include <stdlib.h>
#include <string.h>

#include "engine/explain.h"
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

struct run_ops {
	const char *config_path;
	const struct config *first;
	const struct config *cur;
	const struct logger *log;
	struct filewatch *fw;
	struct reconciler *rec;   /* set by run_ops_watch */
	struct batcher *batch;
	/* reporting */
	struct status_board *board;
	struct statuswriter *status;
	struct recorder *events;
	atomic_bool active;
	bool dry_run;             /* the status goes to the log, nothing is written */
	char *last_logged;        /* the status text last logged (dry run) */
	struct explainer *explain; /* the node explanations; NULL: none */
	struct clock *clock;       /* what explanations are due by */
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
	free(o->last_logged);
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
	if (o->rec)
		reconciler_request_reload(o->rec);
	if (o->batch)
		batcher_request(o->batch);
}

/* From the watcher's thread: the same reload as SIGHUP's. */
static void on_files(void *ctx, uint32_t changed)
{
	struct run_ops *o = ctx;
	int64_t now = clock_wall(clock_real());

	if (changed & (1u << WATCH_CONFIG))
		log_at(o->log, LOG_INFO, now,
		       "the config %s changed: it will be read again before the next round",
		       o->config_path);
	else if (changed & (1u << WATCH_POLICY))
		log_at(o->log, LOG_INFO, now,
		       "the policy %s changed: it will be reloaded before the next round",
		       filewatch_path(o->fw, WATCH_POLICY));
	if (changed & ((1u << WATCH_CONFIG) | (1u << WATCH_POLICY)))
		run_ops_request_config(o);
}

int run_ops_watch(struct run_ops *o, struct reconciler *rec, struct batcher *batch,
		  struct errbuf *err)
{
	o->rec = rec;
	o->batch = batch;
	/* every reload, SIGHUP's too, reads the config file again */
	if (reconciler_follow_config(rec, o->config_path, err) < 0)
		return -1;
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
	const char *watched = o->fw ? filewatch_path(o->fw, WATCH_POLICY) : NULL;
	int changed = reconciler_reload_pending(rec, s);

	o->cur = reconciler_config(rec);
	if (changed && watched && strcmp(o->cur->policy_path, watched) != 0)
		log_at(o->log, LOG_WARN, now,
		       "config reload: the new policy file %s is loaded, but only a restart "
		       "watches it for changes (SIGHUP reloads it)", o->cur->policy_path);
	return changed;
}

int run_ops_report_dry(struct run_ops *o, struct errbuf *err)
{
	o->dry_run = true;
	if (o->first->status_enabled && !(o->board = status_board_new()))
		return errbuf_set(err, "out of memory");
	return 0;
}

/* A dry run's status: logged when it changed since it was last logged. */
static void log_status(struct run_ops *o, const char *text)
{
	if (!text || (o->last_logged && strcmp(o->last_logged, text) == 0))
		return;
	char *one = strdup(text), *p;
	size_t n;

	free(o->last_logged);
	o->last_logged = strdup(text);
	if (!one)
		return;
	/* one log line: the text's lines joined */
	for (p = one; *p; p++)
		if (*p == '\n')
			*p = p[1] ? ';' : '\0';
	n = strlen(one);
	log_at(o->log, LOG_INFO, clock_wall(clock_real()),
	       "dry run: the status ConfigMap %s/%s would say: %.*s", o->first->status_namespace,
	       o->first->status_name, (int)(n > 3000 ? 3000 : n), one);
	free(one);
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

/* A round that explained every node: its pass taken in. */
static void explained(struct run_ops *o, const struct snapshot *s, const struct round_view *v)
{
	struct explain_summary sum;

	if (explainer_record(o->explain, s, v, clock_now(o->clock)) < 0) {
		log_at(o->log, LOG_WARN, s->now,
		       "out of memory while keeping the node explanations: the last ones stay");
		return;
	}
	explainer_summary(o->explain, &sum);
	log_at(o->log, LOG_DEBUG, s->now, "explained %zu node(s)%s: kept=%zu candidate=%zu removing=%zu",
	       sum.nodes, v->policy_error ? " (the policy failed: the last ones stay)" : "",
	       sum.by_state[EXPLAIN_KEPT], sum.by_state[EXPLAIN_CANDIDATE],
	       sum.by_state[EXPLAIN_REMOVING]);
}

static void observe(void *ctx, const struct snapshot *s, const struct round_view *v)
{
	struct run_ops *o = ctx;

	if (o->explain && v->nodes)
		explained(o, s, v);
	if (o->board && (o->status || o->dry_run)) {
		struct buf text = BUF_INIT, json = BUF_INIT;

		status_board_round(o->board, s, v);
		if (o->explain) {
			struct explain_summary sum;

			explainer_summary(o->explain, &sum);
			status_board_nodes(o->board, &sum);
		}
		if (status_board_render(o->board, s, &text, &json) == 0) {
			if (o->dry_run)
				log_status(o, text.data);
			else
				statuswriter_submit(o->status, text.data, json.data);
		}
		buf_free(&text);
		buf_free(&json);
	}
	/* a failed policy decided nothing: no pod is told it was not chosen */
	if (o->events && !v->policy_error && atomic_load(&o->active))
		podevents_explain(s, v->accepted, EVENTS_PODS_MAX, pod_event, o);
}

void run_ops_explain(struct run_ops *o, struct explainer *e, struct clock *clock)
{
	o->explain = e;
	o->clock = clock;
}

void run_ops_round_opts(struct run_ops *o, struct round_opts *ro)
{
	ro->observe = observe;
	ro->observe_ctx = o;
	if (o->explain) {
		/* a reload may have changed the interval */
		explainer_set_interval(o->explain, o->cur->explain_interval_ms * CLOCK_NS_PER_MS);
		ro->explain = explainer_due(o->explain, clock_now(o->clock));
	}
}
