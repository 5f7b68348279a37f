/*
 * interruptions: a small table of the provider's interruption notices by
 * instance, merged (the stronger kind wins), marked on each round's nodes
 * by providerID or instance id, logged and counted once, forgotten when
 * their node is gone or they are old. Policy decisions are Lua's.
 */
#include "engine/interruptions.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/instruments.h"

struct entry {
	struct provider_interruption n;
	bool seen;      /* a node had it in an earlier mark */
	bool logged;    /* logged and counted at its present kind */
};

struct interruptions {
	struct entry *v;
	size_t n, cap;
};

struct interruptions *interruptions_new(void)
{
	return calloc(1, sizeof(struct interruptions));
}

void interruptions_free(struct interruptions *t)
{
	if (!t)
		return;
	free(t->v);
	free(t);
}

size_t interruptions_count(const struct interruptions *t)
{
	return t->n;
}

int interruptions_kind_rank(enum provider_interruption_kind k)
{
	switch (k) {
	case PROVIDER_INTERRUPT_TERMINATED: return 5;
	case PROVIDER_INTERRUPT_STOPPING: return 4;
	case PROVIDER_INTERRUPT_SPOT_INTERRUPTION: return 3;
	case PROVIDER_INTERRUPT_SCHEDULED_CHANGE: return 2;
	case PROVIDER_INTERRUPT_REBALANCE: return 1;
	}
	return 0;
}

static struct entry *find(struct interruptions *t, const char *instance)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->v[i].n.instance_id, instance) == 0)
			return &t->v[i];
	return NULL;
}

/* Removes entry i (order is not kept). */
static void drop(struct interruptions *t, size_t i)
{
	t->v[i] = t->v[--t->n];
}

/* Makes room for one more: the oldest received goes when full. */
static int room(struct interruptions *t)
{
	if (t->n >= INTERRUPTIONS_MAX) {
		size_t i, old = 0;

		for (i = 1; i < t->n; i++)
			if (t->v[i].n.received_wall < t->v[old].n.received_wall)
				old = i;
		drop(t, old);
	}
	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 16;
		struct entry *nv = realloc(t->v, nc * sizeof(*nv));

		if (!nv)
			return -1;
		t->v = nv;
		t->cap = nc;
	}
	return 0;
}

int interruptions_add(struct interruptions *t, const struct provider_interruption *v, size_t n)
{
	int changed = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		struct entry *e;

		if (!v[i].instance_id[0])
			continue;
		e = find(t, v[i].instance_id);
		if (e) {
			if (interruptions_kind_rank(v[i].kind) <= interruptions_kind_rank(e->n.kind))
				continue;
			e->n.kind = v[i].kind;
			if (v[i].deadline_wall > 0)
				e->n.deadline_wall = v[i].deadline_wall;
			if (v[i].provider_id[0])
				memcpy(e->n.provider_id, v[i].provider_id, sizeof(e->n.provider_id));
			if (v[i].group[0])
				memcpy(e->n.group, v[i].group, sizeof(e->n.group));
			e->logged = false;
			changed++;
			continue;
		}
		if (room(t) < 0)
			return -1;
		e = &t->v[t->n++];
		memset(e, 0, sizeof(*e));
		e->n = v[i];
		e->n.instance_id[sizeof(e->n.instance_id) - 1] = '\0';
		e->n.provider_id[sizeof(e->n.provider_id) - 1] = '\0';
		e->n.group[sizeof(e->n.group) - 1] = '\0';
		changed++;
	}
	return changed;
}

int interruptions_poll(struct interruptions *t, struct provider *p, const struct logger *log,
		       int64_t now)
{
	struct provider_interruption *v = NULL;
	struct provider_status st;
	size_t n = 0;
	int rc;

	if (!p || !p->ops->interruptions)
		return 0;
	if (p->ops->interruptions(p, &v, &n, &st) < 0) {
		log_at(log, LOG_WARN, now,
		       "cannot read the cloud's interruption notices (%s: %s); the notices known stay",
		       provider_error_str(st.code), st.message);
		return -1;
	}
	rc = interruptions_add(t, v, n);
	free(v);
	if (rc < 0) {
		log_at(log, LOG_WARN, now, "interruption notices: out of memory, some were not kept");
		return -1;
	}
	return (int)n;
}

/* Whether node 'n' is the instance of notice 'e'. */
static bool matches(const struct entry *e, const struct node *n)
{
	const char *slash;

	if (!n->provider_id || !n->provider_id[0])
		return false;
	if (e->n.provider_id[0] && strcmp(e->n.provider_id, n->provider_id) == 0)
		return true;
	slash = strrchr(n->provider_id, '/');
	return slash && strcmp(slash + 1, e->n.instance_id) == 0;
}

/* A notice is old once INTERRUPTIONS_KEEP_S passed since its deadline or
 * its receipt, whichever is later. */
static bool is_old(const struct entry *e, int64_t now)
{
	int64_t from = e->n.deadline_wall > e->n.received_wall ? e->n.deadline_wall
							       : e->n.received_wall;

	return from > 0 && now - from > INTERRUPTIONS_KEEP_S;
}

size_t interruptions_mark(struct interruptions *t, struct snapshot *s, const struct logger *log,
			  const struct instruments *ins)
{
	size_t i = 0, k, marked = 0;

	while (i < t->n) {
		struct entry *e = &t->v[i];
		struct node *hit = NULL;
		const char *kind = provider_interruption_kind_str(e->n.kind);

		for (k = 0; k < s->n_nodes; k++)
			if (matches(e, &s->nodes[k])) {
				hit = &s->nodes[k];
				break;
			}
		if ((!hit && e->seen) || is_old(e, s->now)) {
			drop(t, i);
			continue;
		}
		if (hit) {
			e->seen = true;
			if (!hit->interruption_kind) {
				hit->interruption_kind = kind;
				hit->interruption_deadline = e->n.deadline_wall;
				marked++;
			}
		}
		if (!e->logged) {
			const char *group = e->n.group;
			char when[32] = "not known";

			if (!group[0] && hit && hit->group >= 0 && (size_t)hit->group < s->n_groups)
				group = s->groups[hit->group].name;
			if (e->n.deadline_wall > 0)
				model_format_time(e->n.deadline_wall, when, sizeof(when));
			log_at(log, LOG_INFO, s->now,
			       "interruption notice: instance %s, node %s, group %s: %s, deadline %s",
			       e->n.instance_id, hit ? hit->name : "(none in the cluster)",
			       group[0] ? group : "(none)", kind, when);
			if (ins)
				metric_inc2(ins->interruptions, group, kind);
			e->logged = true;
		}
		i++;
	}
	return marked;
}
