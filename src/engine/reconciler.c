/*
 * reconciler: the policy in place, its limits, and reloads between rounds.
 * The decision itself is decide.c's; loading and trying policies host.c's.
 */
#include "engine/reconciler.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/host.h"

struct reconciler {
	const struct config *cfg;
	struct policy *pol;
	struct sandbox_limits limits;
	struct safety_limits safety;
	struct drain_opts drain;
	atomic_int reload_requested; /* set from the signal thread */
	const atomic_bool *cancel; /* borrowed, may be NULL */
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
	free(r);
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

int reconciler_run(struct reconciler *r, const struct snapshot *s, bool node_reports,
		   struct decision *out, struct reload_result *rr, struct errbuf *err)
{
	struct decide_opts o = {&r->safety, &r->drain, node_reports};
	struct reload_result local;

	if (!rr)
		rr = &local;
	memset(rr, 0, sizeof(*rr));
	if (atomic_exchange(&r->reload_requested, 0)) {
		char dropped[ERRBUF_MAX / 2] = "";
		struct errbuf rerr;

		rr->attempted = true;
		if (reconciler_reload(r, NULL, s, dropped, sizeof(dropped), &rerr) < 0) {
			snprintf(rr->message, sizeof(rr->message), "%s", rerr.msg);
		} else {
			rr->ok = true;
			if (dropped[0])
				snprintf(rr->message, sizeof(rr->message),
					 "store entries that are not data were not carried over: %s",
					 dropped);
		}
	}
	return engine_decide(r->pol, s, &o, out, err);
}
