/*
 * cloudcall: a provider call's status, the calls counted by kind, the
 * token buckets calls take from, the provider's HTTP client, and the
 * cancellable waits between calls — alike in every cloud — and a bearer
 * call's prepare and classify. Knows no wire format and sends nothing
 * (cloudhttp sends).
 */
#include "providers/cloudhttp/cloudcall.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "errbuf.h"
#include "log.h"
#include "providers/cloudhttp/oauth.h"
#include "runtime/clock.h"

#define WAIT_STEP_NS (200 * CLOCK_NS_PER_MS)

void cloudcall_status(struct provider_status *st, enum provider_error code, const char *fmt, ...)
{
	va_list ap;

	st->code = code;
	va_start(ap, fmt);
	vsnprintf(st->message, sizeof(st->message), fmt, ap);
	va_end(ap);
}

struct cloudhttp *cloudcall_http_new(const char *cloud, struct clock *clock, const struct logger *log,
				     const char *ca_file, int max_attempts, const atomic_bool *cancel,
				     struct errbuf *err)
{
	struct cloudhttp_opts ho = { .clock = clock, .log = log, .ca_file = ca_file, .max_attempts = max_attempts,
				     .request_timeout_ms = 30000, .cancel = cancel };
	struct cloudhttp *h;
	struct errbuf e;

	if (!(h = cloudhttp_new(&ho, &e)))
		errbuf_set(err, "%s: %s", cloud, e.msg);
	return h;
}

void cloudcall_counts_init(struct cloudcall_counts *c)
{
	memset(c->v, 0, sizeof(c->v));
	pthread_mutex_init(&c->mu, NULL);
}

void cloudcall_counts_destroy(struct cloudcall_counts *c)
{
	pthread_mutex_destroy(&c->mu);
}

void cloudcall_counts_add(struct cloudcall_counts *c, const char *what)
{
	char kind[CLOUDCALL_KIND_MAX];
	size_t i;

	snprintf(kind, sizeof(kind), "%s", what);
	pthread_mutex_lock(&c->mu);
	for (i = 0; i < CLOUDCALL_KINDS; i++) {
		if (!c->v[i].what[0])
			snprintf(c->v[i].what, sizeof(c->v[i].what), "%s", kind);
		if (!strcmp(c->v[i].what, kind)) {
			c->v[i].n++;
			break;
		}
	}
	pthread_mutex_unlock(&c->mu);
}

uint64_t cloudcall_counts_get(struct cloudcall_counts *c, const char *what)
{
	uint64_t n = 0;
	size_t i;

	pthread_mutex_lock(&c->mu);
	for (i = 0; i < CLOUDCALL_KINDS; i++)
		if (!strcmp(c->v[i].what, what))
			n = c->v[i].n;
	pthread_mutex_unlock(&c->mu);
	return n;
}

int cloudcall_buckets_new(struct provider *p, struct clock *clock, const struct config *c)
{
	struct provider_limits lim;

	provider_limits_from(&lim, c);
	p->mutating = ratelimit_new(clock, lim.mutating_qps, lim.mutating_burst);
	p->reads = ratelimit_new(clock, lim.read_qps, lim.read_burst);
	return p->mutating && p->reads ? 0 : -1;
}

void cloudcall_buckets_free(struct provider *p)
{
	ratelimit_free(p->mutating);
	ratelimit_free(p->reads);
	p->mutating = p->reads = NULL;
}

int cloudcall_wait_until(struct clock *clock, const atomic_bool *cancel, int64_t end_ns)
{
	while (clock_now(clock) < end_ns) {
		int64_t step = end_ns - clock_now(clock);

		if (cancel && atomic_load(cancel))
			return -1;
		if (step > WAIT_STEP_NS)
			step = WAIT_STEP_NS;
		if (clock->ops->sleep_until(clock, clock_now(clock) + step) != 0)
			return -1;
	}
	return 0;
}

int cloudcall_bearer_prepare(struct cloudcall_bearer *c, int64_t wait_ns, struct cloudhttp_headers *extra,
			     struct errbuf *err)
{
	if (c->bucket && !c->token_taken &&
	    provider_take_token(c->bucket, clock_now(c->clock) + wait_ns, c->clock, c->st) < 0)
		return errbuf_set(err, "%s", c->st->message);
	if (!c->auth || oauth_source_prepare(c->auth, extra, err) == 0)
		return 0;
	c->st->code = PROVIDER_AUTH;
	errbuf_prefix(err, "no access token");
	/* the token endpoint's error whole, its code first */
	oauth_source_last_error(c->auth, c->st->message, sizeof(c->st->message));
	return -1;
}

enum cloudhttp_verdict cloudcall_bearer_verdict(struct cloudcall_bearer *c, const struct cloudhttp_response *r,
						bool throttled, const char *code)
{
	if (r->status >= 200 && r->status < 300) {
		if (c->bucket)
			ratelimit_succeeded(c->bucket);
		return CLOUDHTTP_DONE;
	}
	if (throttled) {
		if (c->bucket)
			ratelimit_throttled(c->bucket);
		log_at(c->log, LOG_WARN, clock_wall(c->clock),
		       "%s: %s throttled (HTTP %ld%s%s); retrying, calls now at %.3g a second", c->cloud, c->what,
		       r->status, code[0] ? " " : "", code, c->bucket ? ratelimit_rate(c->bucket) : 0.0);
		return CLOUDHTTP_RETRY_THROTTLED;
	}
	if (r->status == 401 && c->auth && !c->auth_retried) {
		c->auth_retried = true;
		oauth_source_invalidate(c->auth);
		return CLOUDHTTP_RETRY;
	}
	return r->status >= 500 ? CLOUDHTTP_RETRY : CLOUDHTTP_DONE;
}
