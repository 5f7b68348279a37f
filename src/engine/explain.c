/*
 * explain: the last explanation pass, node by node, kept sorted by name so
 * that the next pass finds each node's previous state and reason; its JSON
 * and its summary. The node reports themselves are engine_decide's.
 */
#include "engine/explain.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/clock.h"

struct entry {
	char *name;
	char *group;   /* NULL: not in a managed group */
	enum explain_state state;
	char *reason;  /* at most EXPLAIN_REASON_MAX bytes ("..." included) */
	int64_t since; /* unix seconds */
};

struct explainer {
	pthread_mutex_t mu;
	int64_t interval_ns;
	bool tried;             /* a pass was tried (last_try_ns holds) */
	int64_t last_try_ns;
	uint64_t passes;        /* passes taken in */
	int64_t built_at;       /* unix seconds of the last pass taken in */
	struct entry *entries;  /* sorted by name */
	size_t n;
	int64_t failed_at;      /* the last try's policy failed then; 0: it did not */
	char failure[EXPLAIN_REASON_MAX + 1];
	struct explain_summary summary;
};

static const char *const state_names[EXPLAIN_STATES] = {"kept", "candidate", "removing"};

const char *explain_state_str(enum explain_state s)
{
	return (unsigned)s < EXPLAIN_STATES ? state_names[s] : "unknown";
}

struct explainer *explainer_new(int64_t interval_ns)
{
	struct explainer *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	pthread_mutex_init(&e->mu, NULL);
	e->interval_ns = interval_ns > 0 ? interval_ns : 0;
	e->summary.interval_ms = e->interval_ns / CLOCK_NS_PER_MS;
	return e;
}

static void entries_free(struct entry *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].group);
		free(v[i].reason);
	}
	free(v);
}

void explainer_free(struct explainer *e)
{
	if (!e)
		return;
	entries_free(e->entries, e->n);
	pthread_mutex_destroy(&e->mu);
	free(e);
}

void explainer_set_interval(struct explainer *e, int64_t interval_ns)
{
	pthread_mutex_lock(&e->mu);
	e->interval_ns = interval_ns > 0 ? interval_ns : 0;
	e->summary.interval_ms = e->interval_ns / CLOCK_NS_PER_MS;
	pthread_mutex_unlock(&e->mu);
}

bool explainer_due(struct explainer *e, int64_t now_ns)
{
	bool due;

	pthread_mutex_lock(&e->mu);
	due = e->interval_ns > 0 && (!e->tried || now_ns - e->last_try_ns >= e->interval_ns);
	pthread_mutex_unlock(&e->mu);
	return due;
}

uint64_t explainer_passes(struct explainer *e)
{
	uint64_t n;

	pthread_mutex_lock(&e->mu);
	n = e->passes;
	pthread_mutex_unlock(&e->mu);
	return n;
}

/*
 * Copies 'src' into 'dst' ('cap' bytes with the NUL, at least 4): whole
 * when it fits, else cut at a character boundary with "..." after. With
 * 'numbers', each number ("12", "0.42") becomes "#". Returns 'dst'.
 */
static char *copy_cut(char *dst, size_t cap, const char *src, bool numbers)
{
	const char *p = src ? src : "";
	size_t o = 0, keep = 0; /* keep: the last end where "..." still fits */

	while (*p) {
		char one[4];
		size_t len;

		if (numbers && *p >= '0' && *p <= '9') {
			while ((*p >= '0' && *p <= '9') || (*p == '.' && p[1] >= '0' && p[1] <= '9'))
				p++;
			one[0] = '#';
			len = 1;
		} else {
			len = buf_utf8_seq(p);
			if (!len)
				len = 1; /* a stray byte: the JSON and the terminal escape it */
			memcpy(one, p, len);
			p += len;
		}
		if (o + len >= cap) {
			memcpy(dst + keep, "...", 3);
			o = keep + 3;
			break;
		}
		memcpy(dst + o, one, len);
		o += len;
		if (o + 3 < cap)
			keep = o;
	}
	dst[o] = '\0';
	return dst;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

static const struct entry *find(const struct entry *v, size_t n, const char *name)
{
	struct entry key;

	key.name = (char *)name;
	return n ? bsearch(&key, v, n, sizeof(*v), by_name) : NULL;
}

/* The first action of 'p' that starts or carries out the removal of 'node'. */
static const struct action *removal_of(const struct plan *p, const char *node)
{
	size_t i;

	for (i = 0; p && i < p->n_actions; i++)
		if (round_is_removal(&p->actions[i]) && p->actions[i].node &&
		    strcmp(p->actions[i].node, node) == 0)
			return &p->actions[i];
	return NULL;
}

/* The first refused removal of 'node'. */
static const struct rejection *refusal_of(const struct verdict *vd, const char *node)
{
	size_t i;

	for (i = 0; vd && i < vd->n_rejected; i++) {
		const struct action *a = &vd->rejected[i].action;

		if (round_is_removal(a) && a->node && strcmp(a->node, node) == 0)
			return &vd->rejected[i];
	}
	return NULL;
}

/* One node's state and reason ('why', EXPLAIN_REASON_MAX + 1 bytes). */
static enum explain_state judge(const struct snapshot *s, size_t i, const struct round_view *v,
				char *why, size_t len)
{
	const struct node *n = &s->nodes[i];
	const struct node_report *r = &v->nodes[i];
	const char *note = r->why && r->why[0] ? r->why : "no policy note";
	const struct action *rm = removal_of(v->accepted, n->name);
	const struct rejection *no;
	char text[2 * PLAN_MAX_REASON];

	if (rm) {
		snprintf(text, sizeof(text), "being removed (%s): %s", action_type_str(rm->type),
			 rm->reason);
		copy_cut(why, len, text, false);
		return EXPLAIN_REMOVING;
	}
	if (n->removing) {
		copy_cut(why, len, "a drain or delete by luascale is in progress", false);
		return EXPLAIN_REMOVING;
	}
	if ((no = refusal_of(v->verdict, n->name))) {
		snprintf(text, sizeof(text), "refused by the safety checks: %s (the policy asked to %s: %s)",
			 no->why, action_type_str(no->action.type), no->action.reason);
		copy_cut(why, len, text, false);
		return EXPLAIN_KEPT;
	}
	if (r->removable && v->held) {
		snprintf(text, sizeof(text), "no removal while the cluster cache is stale (%s); %s",
			 v->held, note);
		copy_cut(why, len, text, false);
		return EXPLAIN_CANDIDATE;
	}
	copy_cut(why, len, note, false);
	return r->removable ? EXPLAIN_CANDIDATE : EXPLAIN_KEPT;
}

/* A grouped reason of the summary: its state and masked text. */
struct group_key {
	enum explain_state state;
	const char *reason;  /* masked */
	const char *example;
};

static int by_key(const void *a, const void *b)
{
	const struct group_key *x = a, *y = b;
	int c;

	if (x->state != y->state)
		return x->state < y->state ? -1 : 1;
	c = strcmp(x->reason, y->reason);
	return c ? c : strcmp(x->example, y->example);
}

/* Whether reason group 'a' goes before 'b' in the summary: more nodes
 * first, then by state and text, for a stable order. */
static bool before(const struct explain_reason *a, const struct explain_reason *b)
{
	int c;

	if (a->count != b->count)
		return a->count > b->count;
	if (a->state != b->state)
		return a->state < b->state;
	c = strcmp(a->reason, b->reason);
	return c ? c < 0 : strcmp(a->example, b->example) < 0;
}

/* Keeps 'g' in the summary's top when it is among the EXPLAIN_TOP first. */
static void top_offer(struct explain_summary *sum, const struct explain_reason *g)
{
	size_t k;

	if (sum->n_top == EXPLAIN_TOP) {
		sum->more_reasons++;
		if (!before(g, &sum->top[EXPLAIN_TOP - 1]))
			return;
		sum->n_top--; /* the last one drops out */
	}
	for (k = sum->n_top; k > 0 && before(g, &sum->top[k - 1]); k--)
		sum->top[k] = sum->top[k - 1];
	sum->top[k] = *g;
	sum->n_top++;
}

/* The summary of 'v' (sorted by name). -1 when out of memory. */
static int summarize(const struct entry *v, size_t n, struct explain_summary *sum)
{
	struct group_key *keys = calloc(n ? n : 1, sizeof(*keys));
	char *texts = malloc((n ? n : 1) * (EXPLAIN_SUMMARY_REASON + 1));
	size_t i, j;

	if (!keys || !texts) {
		free(keys);
		free(texts);
		return -1;
	}
	sum->nodes = n;
	memset(sum->by_state, 0, sizeof(sum->by_state));
	sum->n_top = sum->more_reasons = 0;
	for (i = 0; i < n; i++) {
		char *t = texts + i * (EXPLAIN_SUMMARY_REASON + 1);

		sum->by_state[v[i].state]++;
		keys[i].state = v[i].state;
		keys[i].reason = copy_cut(t, EXPLAIN_SUMMARY_REASON + 1, v[i].reason, true);
		keys[i].example = v[i].name;
	}
	qsort(keys, n, sizeof(*keys), by_key);
	for (i = 0; i < n; i = j) {
		struct explain_reason g;

		for (j = i + 1; j < n && keys[j].state == keys[i].state &&
				strcmp(keys[j].reason, keys[i].reason) == 0; j++)
			;
		memset(&g, 0, sizeof(g));
		g.state = keys[i].state;
		g.count = j - i;
		/* masked into EXPLAIN_SUMMARY_REASON + 1 bytes: it fits */
		memcpy(g.reason, keys[i].reason, strlen(keys[i].reason) + 1);
		copy_cut(g.example, sizeof(g.example), keys[i].example, false);
		top_offer(sum, &g);
	}
	free(keys);
	free(texts);
	return 0;
}

int explainer_record(struct explainer *e, const struct snapshot *s, const struct round_view *v,
		     int64_t now_ns)
{
	struct entry *next = NULL;
	struct explain_summary sum;
	size_t i, n = 0;
	char why[EXPLAIN_REASON_MAX + 1];

	if (!v->nodes)
		return 0;
	if (v->policy_error) {
		pthread_mutex_lock(&e->mu);
		e->tried = true;
		e->last_try_ns = now_ns;
		e->failed_at = s->now;
		copy_cut(e->failure, sizeof(e->failure), v->policy_error, false);
		pthread_mutex_unlock(&e->mu);
		return 0;
	}
	next = calloc(s->n_nodes ? s->n_nodes : 1, sizeof(*next));
	if (!next)
		goto oom;
	/* the previous entries are read without the lock: only the recording
	 * thread changes them */
	for (i = 0; i < s->n_nodes && i < v->n_nodes; i++) {
		const struct entry *old;
		struct entry *x = &next[n];

		x->state = judge(s, i, v, why, sizeof(why));
		x->name = strdup(s->nodes[i].name);
		x->group = v->nodes[i].group ? strdup(v->nodes[i].group) : NULL;
		x->reason = strdup(why);
		n++;
		if (!x->name || !x->reason || (v->nodes[i].group && !x->group))
			goto oom;
		old = find(e->entries, e->n, x->name);
		x->since = old && old->state == x->state && strcmp(old->reason, x->reason) == 0
				   ? old->since : s->now;
	}
	qsort(next, n, sizeof(*next), by_name);
	memset(&sum, 0, sizeof(sum));
	if (summarize(next, n, &sum) < 0)
		goto oom;
	pthread_mutex_lock(&e->mu);
	entries_free(e->entries, e->n);
	e->entries = next;
	e->n = n;
	e->tried = true;
	e->last_try_ns = now_ns;
	e->passes++;
	e->built_at = s->now;
	e->failed_at = 0;
	e->failure[0] = '\0';
	sum.interval_ms = e->interval_ns / CLOCK_NS_PER_MS;
	sum.built_at = s->now;
	e->summary = sum;
	pthread_mutex_unlock(&e->mu);
	return 0;
oom:
	entries_free(next, n);
	return -1;
}

static void json_time(struct buf *b, int64_t t)
{
	char ts[32];

	model_format_time(t, ts, sizeof(ts));
	buf_json_string(b, ts);
}

int explainer_json(struct explainer *e, struct buf *b)
{
	size_t i, k;
	int code = 200;

	pthread_mutex_lock(&e->mu);
	if (!e->interval_ns) {
		buf_puts(b, "{\"error\":\"node explanations are off (intervals.explain is 0)\"}\n");
		code = 404;
		goto out;
	}
	if (!e->passes) {
		buf_puts(b, "{\"error\":");
		buf_json_string(b, e->failed_at
			? "no node explanations yet: the policy failed in the last explaining round "
			  "(see policyError); the next try comes an interval after it"
			: "no node explanations yet: the first pass comes with the first round after "
			  "the cluster is read, while this process leads");
		buf_printf(b, ",\"intervalSeconds\":%.15g", (double)e->interval_ns / CLOCK_NS_PER_S);
		code = 503;
		goto policy_error;
	}
	buf_puts(b, "{\"time\":");
	json_time(b, e->built_at);
	buf_printf(b, ",\"intervalSeconds\":%.15g,\"passes\":%llu,\"counts\":{",
		   (double)e->interval_ns / CLOCK_NS_PER_S, (unsigned long long)e->passes);
	for (k = 0; k < EXPLAIN_STATES; k++)
		buf_printf(b, "%s\"%s\":%zu", k ? "," : "", state_names[k], e->summary.by_state[k]);
	buf_puts(b, "},\"nodes\":[");
	for (i = 0; i < e->n; i++) {
		const struct entry *x = &e->entries[i];

		buf_puts(b, i ? ",\n{\"name\":" : "\n{\"name\":");
		buf_json_string(b, x->name);
		buf_puts(b, ",\"group\":");
		if (x->group)
			buf_json_string(b, x->group);
		else
			buf_puts(b, "null");
		buf_printf(b, ",\"state\":\"%s\",\"reason\":", state_names[x->state]);
		buf_json_string(b, x->reason);
		buf_puts(b, ",\"since\":");
		json_time(b, x->since);
		buf_puts(b, "}");
	}
	buf_puts(b, "]");
policy_error:
	if (e->failed_at) {
		buf_puts(b, ",\"policyError\":{\"time\":");
		json_time(b, e->failed_at);
		buf_puts(b, ",\"message\":");
		buf_json_string(b, e->failure);
		buf_puts(b, "}");
	}
	buf_puts(b, "}\n");
out:
	pthread_mutex_unlock(&e->mu);
	return b->oom ? 500 : code;
}

void explainer_summary(struct explainer *e, struct explain_summary *out)
{
	pthread_mutex_lock(&e->mu);
	*out = e->summary;
	pthread_mutex_unlock(&e->mu);
}
