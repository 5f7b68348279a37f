/*
 * backoff: exponential delays with jitter, the splitmix64 generator behind
 * the jitter, and a per-key failure tracker (a small open-addressing hash
 * table of copied keys). Does not sleep or schedule: callers ask when.
 */
#include "runtime/backoff.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64 (Steele, Lea, Flood 2014): one 64-bit state, full period. */
uint64_t backoff_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * See backoff.h. failures < 1, a non-positive initial or max give 0. The
 * result is always within [0, max_ns]; jitter outside [0, 1] is clamped.
 */
int64_t backoff_delay(const struct backoff_policy *p, int failures, uint64_t *rng)
{
	double d, jitter;

	if (failures < 1 || p->initial_ns <= 0 || p->max_ns <= 0)
		return 0;
	d = (double)p->initial_ns * pow(p->factor, (double)(failures - 1));
	if (!(d <= (double)p->max_ns)) /* also catches inf and NaN */
		d = (double)p->max_ns;
	if (d < 0)
		d = 0;
	jitter = p->jitter;
	if (!(jitter > 0))
		jitter = 0;
	if (jitter > 1)
		jitter = 1;
	if (rng && jitter > 0) {
		/* u uniform in [0, 1) from the top 53 bits */
		double u = (double)(backoff_rand(rng) >> 11) * (1.0 / 9007199254740992.0);

		d *= 1.0 - jitter * u;
	}
	if (d >= (double)p->max_ns)
		return p->max_ns;
	return (int64_t)d;
}

/* ---- tracker --------------------------------------------------------- */

struct entry {
	char *key; /* NULL: empty slot */
	int failures;
	int64_t until;
};

struct backoff_tracker {
	pthread_mutex_t mu;
	struct backoff_policy policy;
	uint64_t rng;
	struct entry *slots;
	size_t cap, n; /* cap a power of two, n <= cap / 2 */
};

static uint64_t hash_key(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* The slot holding 'key', or the empty slot where it would go. */
static struct entry *slot_for(struct entry *slots, size_t cap, const char *key)
{
	size_t i = (size_t)hash_key(key) & (cap - 1);

	while (slots[i].key && strcmp(slots[i].key, key) != 0)
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int grow(struct backoff_tracker *t)
{
	size_t cap = t->cap * 2, i;
	struct entry *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -1;
	for (i = 0; i < t->cap; i++)
		if (t->slots[i].key)
			*slot_for(slots, cap, t->slots[i].key) = t->slots[i];
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

/* See backoff.h. 'p' is copied. */
struct backoff_tracker *backoff_tracker_new(const struct backoff_policy *p, uint64_t seed)
{
	struct backoff_tracker *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cap = 16;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	if (!t->slots || pthread_mutex_init(&t->mu, NULL) != 0) {
		free(t->slots);
		free(t);
		return NULL;
	}
	t->policy = *p;
	t->rng = seed;
	return t;
}

/* Frees the tracker and its copied keys; NULL is ignored. */
void backoff_tracker_free(struct backoff_tracker *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->cap; i++)
		free(t->slots[i].key);
	free(t->slots);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

/* See backoff.h. */
int64_t backoff_tracker_fail(struct backoff_tracker *t, const char *key, int64_t now_ns)
{
	struct entry *e;
	int64_t until = -1, delay;

	pthread_mutex_lock(&t->mu);
	e = slot_for(t->slots, t->cap, key);
	if (!e->key) {
		if (t->n + 1 > t->cap / 2) {
			if (grow(t) != 0)
				goto out;
			e = slot_for(t->slots, t->cap, key);
		}
		e->key = strdup(key);
		if (!e->key)
			goto out;
		e->failures = 0;
		t->n++;
	}
	if (e->failures < INT_MAX)
		e->failures++;
	delay = backoff_delay(&t->policy, e->failures, &t->rng);
	e->until = delay > INT64_MAX - now_ns ? INT64_MAX : now_ns + delay;
	until = e->until;
out:
	pthread_mutex_unlock(&t->mu);
	return until;
}

/* See backoff.h. An unknown key is ignored. */
void backoff_tracker_succeed(struct backoff_tracker *t, const char *key)
{
	struct entry *e;

	pthread_mutex_lock(&t->mu);
	e = slot_for(t->slots, t->cap, key);
	if (e->key) {
		e->failures = 0;
		e->until = 0;
	}
	pthread_mutex_unlock(&t->mu);
}

/* See backoff.h. */
bool backoff_tracker_ready(struct backoff_tracker *t, const char *key, int64_t now_ns)
{
	struct entry *e;
	bool ready;

	pthread_mutex_lock(&t->mu);
	e = slot_for(t->slots, t->cap, key);
	ready = !e->key || e->failures == 0 || now_ns >= e->until;
	pthread_mutex_unlock(&t->mu);
	return ready;
}

/* See backoff.h. */
int backoff_tracker_failures(struct backoff_tracker *t, const char *key)
{
	struct entry *e;
	int n;

	pthread_mutex_lock(&t->mu);
	e = slot_for(t->slots, t->cap, key);
	n = e->key ? e->failures : 0;
	pthread_mutex_unlock(&t->mu);
	return n;
}
