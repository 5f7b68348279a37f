/*
 * pricing: the price cache every provider shares (see pricing.h). One
 * mutex guards the entries; a refresh copies out what it must fetch,
 * calls the cloud without the lock, and writes the answers back.
 */
#include "providers/pricing.h"

#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PRICING_MAX_KEYS 4096

struct entry {
	struct pricing_key key;
	double price;        /* last fetched, 0 when none */
	bool checked;        /* a refresh has answered for it */
	int64_t checked_ns;  /* when */
};

struct pricing {
	struct pricing_opts o;
	char provider[16];
	pthread_mutex_t mu;
	pthread_cond_t idle;
	struct entry *e;
	size_t n, cap;
	bool running;
	int64_t retry_at_ns;  /* no refresh before, after a failure */
	uint64_t failures;
};

const char *pricing_capacity_str(enum pricing_capacity c)
{
	return c == PRICING_SPOT ? "spot" : "on-demand";
}

struct pricing *pricing_new(const struct pricing_opts *o)
{
	struct pricing *pr;

	if (!o || !o->fetch || !o->clock)
		return NULL;
	pr = calloc(1, sizeof(*pr));
	if (!pr)
		return NULL;
	pr->o = *o;
	snprintf(pr->provider, sizeof(pr->provider), "%s", o->provider ? o->provider : "?");
	pr->o.provider = pr->provider;
	if (pr->o.on_demand_ttl_ns <= 0)
		pr->o.on_demand_ttl_ns = PRICING_ON_DEMAND_TTL_NS;
	if (pr->o.spot_ttl_ns <= 0)
		pr->o.spot_ttl_ns = PRICING_SPOT_TTL_NS;
	if (pr->o.retry_ns <= 0)
		pr->o.retry_ns = PRICING_RETRY_NS;
	pthread_mutex_init(&pr->mu, NULL);
	pthread_cond_init(&pr->idle, NULL);
	return pr;
}

struct pricing *pricing_from_config(const char *provider, pricing_fetch_fn fetch, void *ctx,
				    struct clock *clock, const struct logger *log,
				    const struct config *c)
{
	struct pricing_opts o = {
		.provider = provider, .fetch = fetch, .ctx = ctx, .clock = clock, .log = log,
		.on_demand_ttl_ns = c ? c->pricing_on_demand_ttl_ms * CLOCK_NS_PER_MS : 0,
		.spot_ttl_ns = c ? c->pricing_spot_ttl_ms * CLOCK_NS_PER_MS : 0,
	};

	return pricing_new(&o);
}

void pricing_free(struct pricing *pr)
{
	if (!pr)
		return;
	pthread_mutex_lock(&pr->mu);
	while (pr->running)
		pthread_cond_wait(&pr->idle, &pr->mu);
	pthread_mutex_unlock(&pr->mu);
	pthread_cond_destroy(&pr->idle);
	pthread_mutex_destroy(&pr->mu);
	free(pr->e);
	free(pr);
}

static bool same_key(const struct pricing_key *a, const struct pricing_key *b)
{
	return a->capacity == b->capacity && !strcmp(a->type, b->type) &&
	       !strcmp(a->location, b->location);
}

static bool expired(const struct pricing *pr, const struct entry *e, int64_t now)
{
	int64_t ttl = e->key.capacity == PRICING_SPOT ? pr->o.spot_ttl_ns : pr->o.on_demand_ttl_ns;

	return !e->checked || now - e->checked_ns >= ttl;
}

double pricing_get(struct pricing *pr, const struct pricing_key *k)
{
	double price = 0;
	size_t i;

	if (!pr || !k->type[0])
		return 0;
	pthread_mutex_lock(&pr->mu);
	for (i = 0; i < pr->n && !same_key(&pr->e[i].key, k); i++)
		;
	if (i < pr->n) {
		price = pr->e[i].price;
	} else if (pr->n < PRICING_MAX_KEYS) {
		if (pr->n == pr->cap) {
			size_t cap = pr->cap ? pr->cap * 2 : 16;
			struct entry *e = realloc(pr->e, cap * sizeof(*e));

			if (!e)
				goto out;
			pr->e = e;
			pr->cap = cap;
		}
		memset(&pr->e[pr->n], 0, sizeof(pr->e[pr->n]));
		pr->e[pr->n++].key = *k;
	}
out:
	pthread_mutex_unlock(&pr->mu);
	return price;
}

/* Under mu. */
static bool due_locked(const struct pricing *pr, int64_t now)
{
	size_t i;

	if (pr->running || now < pr->retry_at_ns)
		return false;
	for (i = 0; i < pr->n; i++)
		if (expired(pr, &pr->e[i], now))
			return true;
	return false;
}

bool pricing_due(struct pricing *pr)
{
	bool due;

	if (!pr)
		return false;
	pthread_mutex_lock(&pr->mu);
	due = due_locked(pr, clock_now(pr->o.clock));
	pthread_mutex_unlock(&pr->mu);
	return due;
}

/* The refresh proper; the caller has set 'running'. */
static int refresh(struct pricing *pr, struct provider_status *st)
{
	struct pricing_key *keys = NULL;
	double *prices = NULL;
	size_t i, j, n = 0;
	int64_t now = clock_now(pr->o.clock);
	int rc = 0;

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&pr->mu);
	if (pr->n) {
		keys = calloc(pr->n, sizeof(*keys));
		prices = calloc(pr->n, sizeof(*prices));
	}
	if (pr->n && (!keys || !prices)) {
		pthread_mutex_unlock(&pr->mu);
		st->code = PROVIDER_TRANSIENT;
		snprintf(st->message, sizeof(st->message), "out of memory");
		rc = -1;
		goto failed;
	}
	for (i = 0; i < pr->n; i++)
		if (expired(pr, &pr->e[i], now))
			keys[n++] = pr->e[i].key;
	pthread_mutex_unlock(&pr->mu);
	if (!n)
		goto out;
	if (pr->o.fetch(pr->o.ctx, keys, n, prices, st) < 0) {
		if (st->code == PROVIDER_OK)
			st->code = PROVIDER_TRANSIENT;
		rc = -1;
		goto failed;
	}
	now = clock_now(pr->o.clock);
	pthread_mutex_lock(&pr->mu);
	for (i = 0; i < n; i++)
		for (j = 0; j < pr->n; j++)
			if (same_key(&pr->e[j].key, &keys[i])) {
				/* a price the cloud no longer lists keeps the last one */
				if (prices[i] > 0 && prices[i] < 1e9)
					pr->e[j].price = prices[i];
				pr->e[j].checked = true;
				pr->e[j].checked_ns = now;
				if (prices[i] <= 0 && pr->e[j].price <= 0)
					log_at(pr->o.log, LOG_WARN, clock_wall(pr->o.clock),
					       "%s: the cloud lists no %s price of %s in %s", pr->provider,
					       pricing_capacity_str(keys[i].capacity), keys[i].type,
					       keys[i].location);
				break;
			}
	pthread_mutex_unlock(&pr->mu);
	log_at(pr->o.log, LOG_INFO, clock_wall(pr->o.clock), "%s: prices refreshed (%zu asked)",
	       pr->provider, n);
	goto out;
failed:
	pthread_mutex_lock(&pr->mu);
	pr->failures++;
	pr->retry_at_ns = clock_now(pr->o.clock) + pr->o.retry_ns;
	pthread_mutex_unlock(&pr->mu);
	log_at(pr->o.log, LOG_WARN, clock_wall(pr->o.clock),
	       "%s: cannot refresh the prices (%s: %s); keeping the last ones, trying again in %lld s",
	       pr->provider, provider_error_str(st->code), st->message,
	       (long long)(pr->o.retry_ns / CLOCK_NS_PER_S));
out:
	free(keys);
	free(prices);
	return rc;
}

static void end_running(struct pricing *pr)
{
	pthread_mutex_lock(&pr->mu);
	pr->running = false;
	pthread_cond_broadcast(&pr->idle);
	pthread_mutex_unlock(&pr->mu);
}

int pricing_refresh(struct pricing *pr, struct provider_status *st)
{
	int rc;

	pthread_mutex_lock(&pr->mu);
	if (pr->running) {
		pthread_mutex_unlock(&pr->mu);
		memset(st, 0, sizeof(*st));
		return 0;
	}
	pr->running = true;
	pthread_mutex_unlock(&pr->mu);
	rc = refresh(pr, st);
	end_running(pr);
	return rc;
}

static void refresh_task(void *arg, bool cancelled)
{
	struct pricing *pr = arg;
	struct provider_status st;

	if (!cancelled)
		refresh(pr, &st);
	end_running(pr);
}

void pricing_schedule(struct pricing *pr, struct executor *ex)
{
	bool go;

	if (!pr || !ex)
		return;
	pthread_mutex_lock(&pr->mu);
	go = due_locked(pr, clock_now(pr->o.clock));
	if (go)
		pr->running = true;
	pthread_mutex_unlock(&pr->mu);
	if (go && executor_submit(ex, refresh_task, pr) < 0)
		end_running(pr);
}

uint64_t pricing_failures(struct pricing *pr)
{
	uint64_t n;

	if (!pr)
		return 0;
	pthread_mutex_lock(&pr->mu);
	n = pr->failures;
	pthread_mutex_unlock(&pr->mu);
	return n;
}

static const char *label(const struct provider_template *t, const char *key)
{
	size_t i;

	for (i = 0; i < t->n_labels; i++)
		if (t->labels[i].key && !strcmp(t->labels[i].key, key))
			return t->labels[i].value ? t->labels[i].value : "";
	return NULL;
}

enum pricing_capacity pricing_capacity_of(const struct provider_template *t)
{
	static const char *const spot[][2] = {
		{"karpenter.sh/capacity-type", "spot"},
		{"eks.amazonaws.com/capacityType", "spot"},
		{"cloud.google.com/gke-spot", "true"},
		{"cloud.google.com/gke-preemptible", "true"},
		{"kubernetes.azure.com/scalesetpriority", "spot"},
		{"node.kubernetes.io/lifecycle", "spot"},
	};
	size_t i;

	for (i = 0; i < sizeof(spot) / sizeof(spot[0]); i++) {
		const char *v = label(t, spot[i][0]);

		if (v && !strcasecmp(v, spot[i][1]))
			return PRICING_SPOT;
	}
	return PRICING_ON_DEMAND;
}

void pricing_price_groups(struct pricing *pr, const char *location, struct provider_group *groups,
			  size_t n, const bool *spot, struct executor *ex)
{
	struct pricing_key k;
	double price;
	size_t i;

	if (!pr)
		return;
	for (i = 0; i < n; i++) {
		size_t j;

		/* the group's template, then each of its types' */
		for (j = 0; j <= groups[i].n_types; j++) {
			struct provider_template *t = j ? &groups[i].types[j - 1] : &groups[i].tmpl;

			if (!t->instance_type[0])
				continue;
			memset(&k, 0, sizeof(k));
			snprintf(k.type, sizeof(k.type), "%s", t->instance_type);
			snprintf(k.location, sizeof(k.location), "%s", location ? location : "");
			k.capacity = spot ? (spot[i] ? PRICING_SPOT : PRICING_ON_DEMAND)
					  : pricing_capacity_of(&groups[i].tmpl);
			price = pricing_get(pr, &k);
			if (price > 0)
				t->price_per_hour = price;
		}
	}
	pricing_schedule(pr, ex);
}
