/*
 * clock: where time comes from. A real clock reads the system; a virtual
 * clock only moves when its owner (the virtual executor, a test) moves it.
 * Everything that waits or measures asks a struct clock, never the system.
 */
#ifndef LUASCALE_CLOCK_H
#define LUASCALE_CLOCK_H

#include <stdint.h>

#define CLOCK_NS_PER_S 1000000000LL
#define CLOCK_NS_PER_MS 1000000LL

struct clock;

struct clock_ops {
	int64_t (*now_ns)(const struct clock *c);   /* monotonic nanoseconds */
	int64_t (*wall_s)(const struct clock *c);   /* unix seconds */
	/* Blocks the calling thread until now_ns() >= t. Real clocks sleep;
	 * a virtual clock cannot block (its time moves only by events) and
	 * returns -1 when t is in the future. */
	int (*sleep_until)(struct clock *c, int64_t t);
};

struct clock {
	const struct clock_ops *ops;
};

static inline int64_t clock_now(const struct clock *c) { return c->ops->now_ns(c); }
static inline int64_t clock_wall(const struct clock *c) { return c->ops->wall_s(c); }

/* The process's real clock (CLOCK_MONOTONIC and CLOCK_REALTIME). Shared, never freed. */
struct clock *clock_real(void);

/* A virtual clock starting at monotonic 0 and wall time 'wall_start'. */
struct clock *vclock_new(int64_t wall_start);
void vclock_free(struct clock *c);

/* Moves a virtual clock to 't' (never backwards: a smaller t is ignored). */
void vclock_set(struct clock *c, int64_t t);

#endif
