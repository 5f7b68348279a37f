/*
 * provider: what all providers share — error names, the group array, and
 * the turns and claims that keep launches of one group from racing.
 */
#include "providers/provider.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

const char *provider_error_str(enum provider_error e)
{
	switch (e) {
	case PROVIDER_OK: return "ok";
	case PROVIDER_THROTTLED: return "throttled";
	case PROVIDER_NO_CAPACITY: return "no capacity";
	case PROVIDER_QUOTA: return "quota exceeded";
	case PROVIDER_NOT_FOUND: return "not found";
	case PROVIDER_INVALID: return "invalid request";
	case PROVIDER_TRANSIENT: return "transient error";
	case PROVIDER_AUTH: return "authentication failed";
	case PROVIDER_CANCELLED: return "cancelled";
	}
	return "unknown error";
}

bool provider_error_backs_off_group(enum provider_error e)
{
	return e == PROVIDER_NO_CAPACITY || e == PROVIDER_QUOTA || e == PROVIDER_INVALID ||
	       e == PROVIDER_AUTH;
}

/* Grows '*arr' (of 'size' bytes each) by one; returns the new slot or NULL. */
static void *grow(void *arr, size_t n, size_t size, void **out)
{
	void *p = realloc(arr, (n + 1) * size);

	*out = p;
	if (!p)
		return NULL;
	memset((char *)p + n * size, 0, size);
	return (char *)p + n * size;
}

int provider_template_label(struct provider_template *t, const char *key, const char *value)
{
	struct provider_label *l = NULL;
	char *k, *v;
	size_t i;
	void *arr;

	for (i = 0; i < t->n_labels; i++)
		if (!strcmp(t->labels[i].key, key))
			l = &t->labels[i];
	if (!(v = strdup(value)))
		return -1;
	if (l) {
		free(l->value);
		l->value = v;
		return 0;
	}
	if (!(k = strdup(key)) || !(l = grow(t->labels, t->n_labels, sizeof(*l), &arr))) {
		free(k);
		free(v);
		return -1;
	}
	t->labels = arr;
	t->n_labels++;
	l->key = k;
	l->value = v;
	return 0;
}

int provider_template_taint(struct provider_template *t, const char *key, const char *value,
			    const char *effect)
{
	struct provider_taint *tt = NULL;
	char *k, *v;
	size_t i;
	void *arr;

	if (strcmp(effect, "NoSchedule") && strcmp(effect, "PreferNoSchedule") &&
	    strcmp(effect, "NoExecute"))
		return -1;
	for (i = 0; i < t->n_taints; i++)
		if (!strcmp(t->taints[i].key, key) && !strcmp(t->taints[i].effect, effect))
			tt = &t->taints[i];
	if (!(v = strdup(value)))
		return -1;
	if (tt) {
		free(tt->value);
		tt->value = v;
		return 0;
	}
	if (!(k = strdup(key)) || !(tt = grow(t->taints, t->n_taints, sizeof(*tt), &arr))) {
		free(k);
		free(v);
		return -1;
	}
	t->taints = arr;
	t->n_taints++;
	tt->key = k;
	tt->value = v;
	snprintf(tt->effect, sizeof(tt->effect), "%s", effect);
	return 0;
}

int provider_template_resource(struct provider_template *t, const char *name, int64_t value)
{
	struct provider_resource *r;
	char *nm;
	size_t i;
	void *arr;

	for (i = 0; i < t->n_resources; i++)
		if (!strcmp(t->resources[i].name, name)) {
			t->resources[i].value = value;
			return 0;
		}
	if (!(nm = strdup(name)) || !(r = grow(t->resources, t->n_resources, sizeof(*r), &arr))) {
		free(nm);
		return -1;
	}
	t->resources = arr;
	t->n_resources++;
	r->name = nm;
	r->value = value;
	return 0;
}

int64_t provider_reserved_cpu_m(int cpus)
{
	int64_t r = 0;
	int i;

	for (i = 1; i <= cpus; i++)
		r += i == 1 ? 600 : i == 2 ? 100 : i <= 4 ? 50 : 25;
	return r / 10;
}

void provider_template_clear(struct provider_template *t)
{
	size_t i;

	for (i = 0; i < t->n_labels; i++) {
		free(t->labels[i].key);
		free(t->labels[i].value);
	}
	for (i = 0; i < t->n_taints; i++) {
		free(t->taints[i].key);
		free(t->taints[i].value);
	}
	for (i = 0; i < t->n_resources; i++)
		free(t->resources[i].name);
	free(t->labels);
	free(t->taints);
	free(t->resources);
	t->labels = NULL;
	t->taints = NULL;
	t->resources = NULL;
	t->n_labels = t->n_taints = t->n_resources = 0;
}

void provider_groups_free(struct provider_group *groups, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(groups[i].instances);
		provider_template_clear(&groups[i].tmpl);
	}
	free(groups);
}

void provider_limits_from(struct provider_limits *out, const struct config *c)
{
	out->mutating_qps = c->provider_qps;
	out->mutating_burst = (int)c->provider_burst;
	out->read_qps = c->provider_read_qps;
	out->read_burst = (int)c->provider_read_burst;
}

/* ---- turns and claims ---- */

struct provider_claim_entry {
	char group[64];
	char id[128];
};

struct provider_turns {
	pthread_mutex_t turn[PROVIDER_TURNS];
	pthread_mutex_t mu; /* the claims */
	struct provider_claim_entry *claims; /* a ring of PROVIDER_CLAIMS_MAX */
	size_t n_claims, head;
};

struct provider_turns *provider_turns_new(void)
{
	struct provider_turns *t = calloc(1, sizeof(*t));
	size_t i;

	if (!t)
		return NULL;
	t->claims = calloc(PROVIDER_CLAIMS_MAX, sizeof(*t->claims));
	if (!t->claims) {
		free(t);
		return NULL;
	}
	for (i = 0; i < PROVIDER_TURNS; i++)
		pthread_mutex_init(&t->turn[i], NULL);
	pthread_mutex_init(&t->mu, NULL);
	return t;
}

void provider_turns_free(struct provider_turns *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < PROVIDER_TURNS; i++)
		pthread_mutex_destroy(&t->turn[i]);
	pthread_mutex_destroy(&t->mu);
	free(t->claims);
	free(t);
}

static pthread_mutex_t *turn_of(struct provider_turns *t, const char *group)
{
	uint32_t h = 2166136261u;

	for (; *group; group++)
		h = (h ^ (unsigned char)*group) * 16777619u;
	return &t->turn[h % PROVIDER_TURNS];
}

void provider_turn_take(struct provider_turns *t, const char *group)
{
	pthread_mutex_lock(turn_of(t, group));
}

void provider_turn_give(struct provider_turns *t, const char *group)
{
	pthread_mutex_unlock(turn_of(t, group));
}

bool provider_claim(struct provider_turns *t, const char *group, const char *id)
{
	size_t i, at;
	bool ok = true;

	pthread_mutex_lock(&t->mu);
	for (i = 0; i < t->n_claims && ok; i++)
		if (!strcmp(t->claims[i].id, id) && !strcmp(t->claims[i].group, group))
			ok = false;
	if (ok) {
		at = t->n_claims < PROVIDER_CLAIMS_MAX ? t->n_claims++ : t->head++ % PROVIDER_CLAIMS_MAX;
		snprintf(t->claims[at].group, sizeof(t->claims[at].group), "%s", group);
		snprintf(t->claims[at].id, sizeof(t->claims[at].id), "%s", id);
	}
	pthread_mutex_unlock(&t->mu);
	return ok;
}

int provider_take_token(struct ratelimit *rl, int64_t deadline_ns, struct clock *c,
			struct provider_status *st)
{
	int64_t start = clock_now(c);
	int rc = ratelimit_acquire(rl, deadline_ns);

	if (rc == 0)
		return 0;
	st->retry_after_s = 0;
	if (rc == RATELIMIT_FENCED) {
		st->code = PROVIDER_CANCELLED;
		snprintf(st->message, sizeof(st->message),
			 "not sent: this process does not hold the leader Lease");
	} else {
		st->code = PROVIDER_THROTTLED;
		snprintf(st->message, sizeof(st->message),
			 "no token of the provider's rate limit within %.0fs",
			 (double)(deadline_ns - start) / CLOCK_NS_PER_S);
	}
	return -1;
}
