/*
 * health: the liveness and readiness rules and their texts.
 */
#include "runtime/health.h"

#include "buf.h"
#include "runtime/clock.h"

int64_t health_limit_ns(int64_t reconcile_ms, int64_t policy_timeout_ms)
{
	int64_t ms = 3 * reconcile_ms;

	if (ms < 30000)
		ms = 30000;
	return (ms + policy_timeout_ms) * CLOCK_NS_PER_MS;
}

void health_init(struct health *h, struct clock *clock, int64_t limit_ns)
{
	h->clock = clock;
	h->limit_ns = limit_ns;
	atomic_init(&h->looping, false);
	atomic_init(&h->progress_ns, 0);
	atomic_init(&h->synced, false);
}

void health_progress(struct health *h)
{
	atomic_store(&h->progress_ns, clock_now(h->clock));
	atomic_store(&h->looping, true);
}

void health_synced(struct health *h)
{
	atomic_store(&h->synced, true);
}

int health_live(struct health *h, struct buf *body)
{
	int64_t age;

	if (!atomic_load(&h->looping)) {
		buf_puts(body, "ok: starting (reading the cluster)\n");
		return 200;
	}
	age = clock_now(h->clock) - atomic_load(&h->progress_ns);
	if (age > h->limit_ns) {
		buf_printf(body, "unhealthy: the reconcile loop has not come round for %.1fs (limit %.0fs)\n",
			   (double)age / CLOCK_NS_PER_S, (double)h->limit_ns / CLOCK_NS_PER_S);
		return 503;
	}
	buf_printf(body, "ok: the loop came round %.1fs ago\n", (double)age / CLOCK_NS_PER_S);
	return 200;
}

int health_ready(struct health *h, const struct health_election *e, struct buf *body)
{
	if (!atomic_load(&h->synced)) {
		buf_puts(body, "not ready: the cluster caches are not synced yet\n");
		return 503;
	}
	if (e && e->stale && e->stale[0]) {
		/* still ready (the cache is there, a restart would not help),
		 * but not in sync: say how stale */
		buf_printf(body, "ok: %s, but the cache is stale: %s\n",
			   !e->on ? "no leader election" : e->leading ? "leading" : "standby", e->stale);
		return e->on && !e->observed ? 503 : 200;
	}
	if (!e || !e->on) {
		buf_puts(body, "ok: synced (no leader election)\n");
		return 200;
	}
	if (!e->observed) {
		buf_puts(body, "not ready: the Lease has not been read yet\n");
		return 503;
	}
	if (e->leading) {
		buf_puts(body, "ok: leading, synced\n");
		return 200;
	}
	buf_printf(body, "ok: standby, synced (leader: %s)\n",
		   e->holder && e->holder[0] ? e->holder : "none");
	return 200;
}
