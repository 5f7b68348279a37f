/*
 * sim/apiserver_fault: parsing the simulated API server's fault specs
 * ("throttle=0.5:create:pods/eviction", "down=20s@1m", ...) into a struct
 * apiserver_faults, and taking an "expire the next watch" fault. Applying
 * them is the server's business (apiserver.c).
 */
#include "sim/apiserver/apiserver_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "runtime/clock.h"

static int duration_ns(const char *text, int64_t *out)
{
	int64_t ms;

	if (config_parse_duration(text, &ms) < 0 || ms < 0)
		return -1;
	*out = ms * CLOCK_NS_PER_MS;
	return 0;
}

static const char *const verbs[] = {"get", "list", "watch", "create", "update", "patch",
				    "delete", NULL};

static bool known_verb(const char *v)
{
	size_t i;

	for (i = 0; verbs[i]; i++)
		if (strcmp(v, verbs[i]) == 0)
			return true;
	return false;
}

/* "R[:VERB[:RES[:CODE]]]" into a rule. */
static int parse_rule(struct apiserver_fault_rule *r, const char *value, bool throttle,
		      const char *spec, struct errbuf *err)
{
	char buf[160], *parts[4] = {NULL, NULL, NULL, NULL}, *p, *end;
	size_t n = 0;

	if (strlen(value) >= sizeof(buf))
		return errbuf_set(err, "fault \"%s\": too long", spec);
	snprintf(buf, sizeof(buf), "%s", value);
	parts[n++] = buf;
	for (p = buf; *p && n < 4; p++) {
		if (*p == ':') {
			*p = '\0';
			parts[n++] = p + 1;
		}
	}
	if (strchr(parts[n - 1], ':'))
		return errbuf_set(err, "fault \"%s\": at most RATE:VERB:RESOURCE%s", spec,
				  throttle ? "" : ":CODE");
	memset(r, 0, sizeof(*r));
	r->code = throttle ? 429 : 500;
	n = strlen(parts[0]);
	if (n > 1 && parts[0][n - 1] == 'x') {
		long c = strtol(parts[0], &end, 10);

		if (end != parts[0] + n - 1 || c <= 0 || c > 1000000)
			return errbuf_set(err, "fault \"%s\": \"%s\" is not a count like \"3x\"", spec,
					  parts[0]);
		r->count = (int)c;
	} else {
		r->rate = strtod(parts[0], &end);
		if (end == parts[0] || *end || !(r->rate > 0 && r->rate <= 1))
			return errbuf_set(err, "fault \"%s\": rate \"%s\" is not in (0, 1] (or a count \"3x\")",
					  spec, parts[0]);
	}
	if (parts[1] && parts[1][0] && strcmp(parts[1], "*") != 0) {
		if (!known_verb(parts[1]))
			return errbuf_set(err, "fault \"%s\": unknown verb \"%s\" (get list watch create update patch delete)",
					  spec, parts[1]);
		snprintf(r->verb, sizeof(r->verb), "%s", parts[1]);
	}
	if (parts[2] && parts[2][0] && strcmp(parts[2], "*") != 0) {
		if (strlen(parts[2]) >= sizeof(r->resource))
			return errbuf_set(err, "fault \"%s\": resource too long", spec);
		snprintf(r->resource, sizeof(r->resource), "%s", parts[2]);
	}
	if (parts[3]) {
		long code = strtol(parts[3], &end, 10);

		if (throttle || *end || code < 500 || code > 599)
			return errbuf_set(err, "fault \"%s\": the code must be a 5xx (errors only)", spec);
		r->code = (int)code;
	}
	return 0;
}

int apiserver_faults_parse(struct apiserver_faults *f, const char *spec, struct errbuf *err)
{
	const char *eq = strchr(spec, '=');
	char key[32];
	const char *value;
	size_t klen = eq ? (size_t)(eq - spec) : strlen(spec);

	if (klen == 0 || klen >= sizeof(key))
		return errbuf_set(err, "fault \"%s\": expected NAME=VALUE", spec);
	memcpy(key, spec, klen);
	key[klen] = '\0';
	value = eq ? eq + 1 : NULL;
	if (strcmp(key, "clear") == 0 && !value) {
		f->clear = true;
		return 0;
	}
	if (!value || !value[0])
		return errbuf_set(err, "fault \"%s\": %s needs a value", spec, key);
	if (strcmp(key, "drop-watches") == 0) {
		if (strcmp(value, "now") == 0) {
			f->drop_watches_now = true;
			return 0;
		}
		if (duration_ns(value, &f->drop_watches_ns) < 0 || f->drop_watches_ns <= 0)
			return errbuf_set(err, "fault \"%s\": \"%s\" is not a duration like \"30s\" (or \"now\")",
					  spec, value);
		return 0;
	}
	if (strcmp(key, "expire-watches") == 0) {
		char *end;
		long n = strtol(value, &end, 10);

		if (*end || n <= 0 || n > 1000000)
			return errbuf_set(err, "fault \"%s\": \"%s\" is not a count", spec, value);
		f->expire_watches += (int)n;
		return 0;
	}
	if (strcmp(key, "latency") == 0) {
		if (duration_ns(value, &f->latency_ns) < 0)
			return errbuf_set(err, "fault \"%s\": \"%s\" is not a duration", spec, value);
		if (f->latency_ns > 60 * CLOCK_NS_PER_S)
			return errbuf_set(err, "fault \"%s\": at most 1m", spec);
		return 0;
	}
	if (strcmp(key, "down") == 0) {
		char dur[64];
		const char *at = strchr(value, '@');
		size_t dlen = at ? (size_t)(at - value) : strlen(value);

		if (dlen >= sizeof(dur))
			return errbuf_set(err, "fault \"%s\": too long", spec);
		memcpy(dur, value, dlen);
		dur[dlen] = '\0';
		if (duration_ns(dur, &f->down_for_ns) < 0 || f->down_for_ns <= 0)
			return errbuf_set(err, "fault \"%s\": \"%s\" is not a duration like \"20s\"", spec,
					  dur);
		f->down_after_ns = 0;
		if (at && duration_ns(at + 1, &f->down_after_ns) < 0)
			return errbuf_set(err, "fault \"%s\": \"%s\" is not a duration", spec, at + 1);
		return 0;
	}
	if (strcmp(key, "kubelet-down") == 0 || strcmp(key, "kubelet-up") == 0) {
		if (f->n_kubelets == APISERVER_MAX_RULES)
			return errbuf_set(err, "fault \"%s\": at most %d kubelet faults at once", spec,
					  APISERVER_MAX_RULES);
		if (strlen(value) >= sizeof(f->kubelets[0].node))
			return errbuf_set(err, "fault \"%s\": the node name is too long", spec);
		snprintf(f->kubelets[f->n_kubelets].node, sizeof(f->kubelets[0].node), "%s", value);
		f->kubelets[f->n_kubelets].up = strcmp(key, "kubelet-up") == 0;
		f->n_kubelets++;
		return 0;
	}
	if (strcmp(key, "throttle") == 0 || strcmp(key, "error") == 0) {
		if (f->n_rules == APISERVER_MAX_RULES)
			return errbuf_set(err, "fault \"%s\": at most %d request rules", spec,
					  APISERVER_MAX_RULES);
		if (parse_rule(&f->rules[f->n_rules], value, key[0] == 't', spec, err) < 0)
			return -1;
		f->n_rules++;
		return 0;
	}
	return errbuf_set(err, "fault \"%s\": unknown fault \"%s\" (drop-watches, expire-watches, throttle, error, latency, down, kubelet-down, kubelet-up, clear)",
			  spec, key);
}

bool apiserver_take_expire(struct apiserver *s)
{
	if (s->expire_watches <= 0)
		return false;
	s->expire_watches--;
	return true;
}
