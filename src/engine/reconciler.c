/*
 * reconciler: the policy in place, its limits, and reloads between rounds:
 * one function (reload_now) for every trigger, its outcome kept until the
 * round reports it. The decision itself is decide.c's; loading and trying
 * policies host.c's; reading and comparing configs config.c's and
 * config_reload.c's.
 */
#include "engine/reconciler.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_reload.h"
#include "policy/host.h"

/* A config read again and put in place: kept to the end, since the
 * policy's params and the next config's restart-only settings borrow
 * from it. */
struct kept {
	struct config *c;
	struct kept *next;
};

struct reconciler {
	const struct config *cfg;
	struct policy *pol;
	struct sandbox_limits limits;
	struct safety_limits safety;
	struct drain_opts drain;
	atomic_int reload_requested; /* set from the signal thread */
	const atomic_bool *cancel; /* borrowed, may be NULL */
	char *config_path;         /* reconciler_follow_config; NULL: policy only */
	struct kept *kept;
	struct reload_result *report; /* a reload's outcome not reported yet, or NULL */
};

struct reconciler *reconciler_new(const struct config *cfg, const char *policy_path,
				  struct errbuf *err)
{
	return reconciler_new_cancellable(cfg, policy_path, NULL, err);
}

struct reconciler *reconciler_new_cancellable(const struct config *cfg,
					      const char *policy_path,
					      const atomic_bool *cancel, struct errbuf *err)
{
	struct reconciler *r = calloc(1, sizeof(*r));

	if (!r) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	r->cfg = cfg;
	atomic_init(&r->reload_requested, 0);
	r->limits.instructions = cfg->policy_instructions;
	r->limits.memory = cfg->policy_memory;
	r->limits.cpu_ms = cfg->policy_timeout_ms;
	r->cancel = cancel;
	r->limits.cancel = cancel; /* a set *cancel ends the running policy call */
	decide_limits(cfg, &r->safety, &r->drain);
	r->pol = policy_load(policy_path ? policy_path : cfg->policy_path, NULL, &r->limits,
			     &cfg->params, err);
	if (!r->pol) {
		free(r);
		return NULL;
	}
	return r;
}

void reconciler_free(struct reconciler *r)
{
	if (!r)
		return;
	policy_free(r->pol);
	while (r->kept) {
		struct kept *k = r->kept;

		r->kept = k->next;
		config_free(k->c);
		free(k);
	}
	free(r->config_path);
	free(r->report);
	free(r);
}

int reconciler_follow_config(struct reconciler *r, const char *path, struct errbuf *err)
{
	char *p = path ? strdup(path) : NULL;

	if (path && !p)
		return errbuf_set(err, "out of memory");
	free(r->config_path);
	r->config_path = p;
	return 0;
}

const struct config *reconciler_config(const struct reconciler *r)
{
	return r->cfg;
}

const char *reconciler_policy_path(const struct reconciler *r)
{
	return policy_path(r->pol);
}

void reconciler_request_reload(struct reconciler *r)
{
	atomic_store(&r->reload_requested, 1);
}

int reconciler_reload(struct reconciler *r, const char *path, const struct snapshot *s,
		      char *dropped, size_t dropped_len, struct errbuf *err)
{
	char current[PATH_MAX];
	struct policy *np;

	snprintf(current, sizeof(current), "%s", policy_path(r->pol));
	np = policy_reload(r->pol, path ? path : current, NULL, &r->limits, &r->cfg->params, s,
			   &r->drain, dropped, dropped_len, err);
	if (!np)
		return -1;
	policy_free(r->pol);
	r->pol = np;
	return 0;
}

int reconciler_apply_config(struct reconciler *r, const struct config *cfg,
			    const struct snapshot *s, char *dropped, size_t dropped_len,
			    struct errbuf *err)
{
	struct sandbox_limits lim = r->limits;
	struct safety_limits safety;
	struct drain_opts drain;
	struct policy *np;

	lim.instructions = cfg->policy_instructions;
	lim.memory = cfg->policy_memory;
	lim.cpu_ms = cfg->policy_timeout_ms;
	decide_limits(cfg, &safety, &drain);
	np = policy_reload(r->pol, cfg->policy_path, NULL, &lim, &cfg->params, s, &drain, dropped,
			   dropped_len, err);
	if (!np)
		return -1;
	policy_free(r->pol);
	r->pol = np;
	r->cfg = cfg;
	r->limits = lim;
	r->safety = safety;
	r->drain = drain;
	return 0;
}

/* The message of a reload that lost store entries ('dropped', may be ""). */
static void note_dropped(struct reload_result *rr, const char *dropped)
{
	if (dropped[0])
		snprintf(rr->message, sizeof(rr->message),
			 "store entries that are not data were not carried over: %s", dropped);
}

/*
 * The reload, whatever asked for it: the config file read again when one
 * is followed (invalid: nothing changes; the same text: the policy alone
 * is reloaded with the config in use; else the new config and its policy
 * through reconciler_apply_config, restart-only settings kept as they run
 * and loosened safety values noted), or the policy file alone. 'rr' gets
 * the outcome.
 */
static void reload_now(struct reconciler *r, const struct snapshot *s, struct reload_result *rr)
{
	char dropped[ERRBUF_MAX / 2] = "";
	struct config_loosened loosened[CONFIG_LOOSENED_MAX];
	struct errbuf err;
	struct config *nc;
	struct kept *k;
	size_t n_loosened;

	memset(rr, 0, sizeof(*rr));
	rr->attempted = true;
	if (r->config_path) {
		rr->config_read = true;
		snprintf(rr->config_path, sizeof(rr->config_path), "%s", r->config_path);
		nc = config_load(r->config_path, &err);
		if (!nc) {
			rr->config_failed = true;
			snprintf(rr->message, sizeof(rr->message), "%s", err.msg);
			return;
		}
		if (nc->text_hash != r->cfg->text_hash) {
			rr->config_changed = true;
			n_loosened = config_safety_loosened(r->cfg, nc, loosened, CONFIG_LOOSENED_MAX);
			config_keep_restart_only(r->cfg, nc, rr->restart, sizeof(rr->restart));
			k = calloc(1, sizeof(*k));
			if (!k || reconciler_apply_config(r, nc, s, dropped, sizeof(dropped), &err) < 0) {
				snprintf(rr->message, sizeof(rr->message), "%s",
					 k ? err.msg : "out of memory");
				rr->restart[0] = '\0'; /* nothing changed */
				free(k);
				config_free(nc);
				return;
			}
			k->c = nc;
			k->next = r->kept;
			r->kept = k;
			rr->ok = true;
			rr->n_loosened = n_loosened;
			memcpy(rr->loosened, loosened, sizeof(loosened));
			note_dropped(rr, dropped);
			return;
		}
		config_free(nc); /* the same file: the config in use stays */
	}
	if (reconciler_reload(r, NULL, s, dropped, sizeof(dropped), &err) < 0) {
		snprintf(rr->message, sizeof(rr->message), "%s", err.msg);
		return;
	}
	rr->ok = true;
	note_dropped(rr, dropped);
}

int reconciler_reload_pending(struct reconciler *r, const struct snapshot *s)
{
	struct reload_result *rr;

	if (r->report || !atomic_exchange(&r->reload_requested, 0))
		return 0; /* one reload reported per round; a request stays for the next */
	rr = malloc(sizeof(*rr));
	if (!rr) {
		atomic_store(&r->reload_requested, 1); /* tried again at the next boundary */
		return 0;
	}
	reload_now(r, s, rr);
	r->report = rr;
	return rr->ok && rr->config_changed;
}

int reconciler_run(struct reconciler *r, const struct snapshot *s, bool node_reports,
		   struct decision *out, struct reload_result *rr, struct errbuf *err)
{
	struct decide_opts o = {&r->safety, &r->drain, node_reports};

	reconciler_reload_pending(r, s);
	if (rr) {
		if (r->report)
			*rr = *r->report;
		else
			memset(rr, 0, sizeof(*rr));
	}
	free(r->report);
	r->report = NULL;
	return engine_decide(r->pol, s, &o, out, err);
}

void reload_result_log(const struct reload_result *rr, const char *policy,
		       const struct logger *log, int64_t now)
{
	size_t i;

	if (!rr->attempted)
		return;
	if (!rr->ok) {
		if (rr->config_failed)
			log_at(log, LOG_ERROR, now,
			       "config reload failed, the config in use stays: %s", rr->message);
		else if (rr->config_changed)
			log_at(log, LOG_ERROR, now,
			       "policy reload failed with the config %s, %s and the config in use stay: %s",
			       rr->config_path, policy, rr->message);
		else
			log_at(log, LOG_ERROR, now, "policy reload failed, %s stays in place: %s",
			       policy, rr->message);
		return;
	}
	if (rr->config_changed)
		log_at(log, LOG_INFO, now, "config reloaded from %s; policy reloaded from %s%s%s",
		       rr->config_path, policy, rr->message[0] ? "; " : "", rr->message);
	else
		log_at(log, LOG_INFO, now, "policy reloaded from %s%s%s", policy,
		       rr->message[0] ? "; " : "", rr->message);
	if (rr->restart[0])
		log_at(log, LOG_WARN, now,
		       "config reload: these settings changed but need a restart, and keep "
		       "their running values: %s", rr->restart);
	for (i = 0; i < rr->n_loosened && i < CONFIG_LOOSENED_MAX; i++) {
		const struct config_loosened *l = &rr->loosened[i];

		log_at(log, LOG_WARN, now, "config reload loosens %s: %s -> %s%s", l->key, l->from,
		       l->to, l->restart ? " (at the next restart: the running value stays until then)"
					 : "");
	}
	if (rr->n_loosened > CONFIG_LOOSENED_MAX)
		log_at(log, LOG_WARN, now, "config reload loosens %zu more safety values",
		       rr->n_loosened - CONFIG_LOOSENED_MAX);
}

const char *reload_result_outcome(const struct reload_result *rr)
{
	if (!rr->ok)
		return "failed";
	return rr->n_loosened ? "loosened" : "ok";
}
