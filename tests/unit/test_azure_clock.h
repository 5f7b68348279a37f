/*
 * A virtual clock for the Azure provider tests whose sleep_until moves time
 * forward at once (and records each wait), so code that waits for a
 * Retry-After or a poll interval runs without sleeping. Test-only.
 */
#ifndef LUASCALE_TEST_AZURE_CLOCK_H
#define LUASCALE_TEST_AZURE_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "runtime/clock.h"

#define SC_MAX_SLEEPS 256

struct step_clock {
	struct clock base;       /* first: a struct clock * is a struct step_clock * */
	struct clock *v;         /* the virtual clock underneath */
	pthread_mutex_t mu;
	int64_t sleeps[SC_MAX_SLEEPS]; /* each wait's length (ns), in order */
	size_t n_sleeps;
	int64_t slept;           /* their sum */
};

static int64_t sc_now(const struct clock *c)
{
	return clock_now(((const struct step_clock *)c)->v);
}

static int64_t sc_wall(const struct clock *c)
{
	return clock_wall(((const struct step_clock *)c)->v);
}

static int sc_sleep(struct clock *c, int64_t t)
{
	struct step_clock *s = (struct step_clock *)c;
	int64_t now;

	pthread_mutex_lock(&s->mu);
	now = clock_now(s->v);
	if (t > now) {
		if (s->n_sleeps < SC_MAX_SLEEPS)
			s->sleeps[s->n_sleeps++] = t - now;
		s->slept += t - now;
		vclock_set(s->v, t);
	}
	pthread_mutex_unlock(&s->mu);
	return 0;
}

static const struct clock_ops sc_ops = { sc_now, sc_wall, sc_sleep };

static __attribute__((unused)) struct step_clock *sc_new(int64_t wall_start)
{
	struct step_clock *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->base.ops = &sc_ops;
	s->v = vclock_new(wall_start);
	pthread_mutex_init(&s->mu, NULL);
	return s;
}

static __attribute__((unused)) void sc_free(struct step_clock *s)
{
	if (!s)
		return;
	vclock_free(s->v);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/* Moves the clock to 'wall' unix seconds (never back). */
static __attribute__((unused)) void sc_set_wall(struct step_clock *s, int64_t wall_start, int64_t wall)
{
	vclock_set(s->v, (wall - wall_start) * CLOCK_NS_PER_S);
}

#endif
