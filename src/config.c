/*
 * config: walks the luascale configuration (a YAML tree from ytree.c, every
 * node with its line:column) against the schema into struct config, then
 * applies LUASCALE_* environment overrides (refusing unknown LUASCALE_*
 * names), the range of every number and the checks that span fields.
 * It records the kubeconfig and policy paths; it never opens them.
 * Each cloud's sections (provider.<cloud>, a group's <cloud>:, its
 * LUASCALE_PROVIDER_<CLOUD>_*) are read by the cloud's own
 * providers/<cloud>/<cloud>_config.c with the readers config_parse.h
 * exports from here; the build lists the clouds.
 */
#include "config.h"
#include "config_parse.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "arena.h"
#include "buf.h"
#include "k8sname.h"
#include "log.h"
#include "runtime/httpserver.h"
#include "policy/plan.h"
#include "quantity.h"
#include "ytree.h"

#define MAX_NAME 63           /* node group names are label values */
#define DEFAULT_PODS 110
#define DEFAULT_INSTRUCTIONS 200000000
#define DEFAULT_MEMORY (512LL * 1024 * 1024)
#define GROUP_LABEL "luascale.io/node-group"

/* The sane ranges of the numeric keys: what is outside is a mistake. */
#define MAX_COUNT 1000000                 /* nodes, removals per round */
#define MIN_INSTRUCTIONS 1000
#define MAX_INSTRUCTIONS 1000000000000LL  /* hours of Lua */
#define MIN_MEMORY (1LL << 20)            /* a Lua state needs about 200Ki */
#define MAX_MEMORY (1LL << 40)
#define MIN_QPS 0.001                     /* one call in 17 minutes */
#define MAX_QPS 1e6
#define MAX_NUMBER 1e6                    /* price per hour */
#define SECOND 1000LL
#define HOUR (3600 * SECOND)
#define DAY (24 * HOUR)
#define ENV_PREFIX "LUASCALE_"
#define ENV_PREFIX_GROUPS "LUASCALE_NODE_GROUPS_"
#define ENV_PREFIX_PARAMS "LUASCALE_POLICY_PARAMS_"

/* ------------------------------------------------------------------ */
/* Messages                                                            */

/* Quotes 'text' for a message: at most ~48 characters, one line. */
const char *cfg_quoted(const char *text, char *out, size_t outlen)
{
	size_t i = 0, o = 0, max = outlen - 6;

	out[o++] = '"';
	for (; text[i] && o < max; i++)
		out[o++] = (unsigned char)text[i] < 0x20 ? '?' : text[i];
	if (text[i]) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o++] = '"';
	out[o] = '\0';
	return out;
}

/* ------------------------------------------------------------------ */
/* Durations                                                           */

int config_parse_duration(const char *text, int64_t *out_ms)
{
	static const struct {
		const char *unit;
		int64_t ms;
	} units[] = { {"ms", 1}, {"h", 3600000}, {"m", 60000}, {"s", 1000} };
	const char *s = text;
	int64_t total = 0;

	if (!s || !*s)
		return -1;
	while (*s) {
		uint64_t whole = 0, frac = 0, scale = 1;
		int64_t ms = 0, part;
		bool digits = false;
		size_t u, ulen = 0;

		for (; *s >= '0' && *s <= '9'; s++) {
			if (whole > (UINT64_MAX - 9) / 10)
				return -1;
			whole = whole * 10 + (uint64_t)(*s - '0');
			digits = true;
		}
		if (*s == '.') {
			s++;
			if (!(*s >= '0' && *s <= '9'))
				return -1;
			for (; *s >= '0' && *s <= '9'; s++) {
				if (scale >= 1000000000ULL) { /* more than 9 places */
					if (*s != '0')
						return -1;
					continue;
				}
				frac = frac * 10 + (uint64_t)(*s - '0');
				scale *= 10;
			}
			digits = true;
		}
		if (!digits)
			return -1;
		for (u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
			ulen = strlen(units[u].unit);
			if (!strncmp(s, units[u].unit, ulen))
				break;
		}
		if (u == sizeof(units) / sizeof(units[0]))
			return -1;
		/* "1m" must not be read as the start of "1ms": the table
		 * tries "ms" first; anything after the unit starts a number */
		s += ulen;
		ms = units[u].ms;
		if (whole > (uint64_t)INT64_MAX / (uint64_t)ms)
			return -1;
		part = (int64_t)whole * ms;
		if ((frac * (uint64_t)ms) % scale)
			return -1; /* finer than a millisecond */
		if (part > INT64_MAX - (int64_t)(frac * (uint64_t)ms / scale))
			return -1;
		part += (int64_t)(frac * (uint64_t)ms / scale);
		if (total > INT64_MAX - part)
			return -1;
		total += part;
	}
	*out_ms = total;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Names                                                               */

/* Node group names become label values and parts of environment variable
 * names: a DNS subdomain short enough to be a label value. */
static bool valid_group_name(const char *s)
{
	return strlen(s) <= MAX_NAME && k8sname_valid_dns_subdomain(s);
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static char upper(char c)
{
	return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* Levenshtein distance, case-insensitive; large for long strings. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t row[129];

	if (la > 128 || lb > 128)
		return (size_t)-1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (lower(a[i - 1]) != lower(b[j - 1]));

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* The known word closest to 'word' (distance ≤ 2, less than its length), or NULL. */
static const char *suggest(const char *word, const char *const *known)
{
	const char *best = NULL;
	size_t d, bestd = 3;

	for (; *known; known++) {
		d = edit_distance(word, *known);
		if (d < bestd && d < strlen(word)) {
			bestd = d;
			best = *known;
		}
	}
	return best;
}

/* ------------------------------------------------------------------ */
/* The schema walk                                                     */

/* The clouds of this build (generated/luascale_clouds.h), each with its
 * sections' readers (providers/<cloud>/<cloud>_config.c). */
#define CLOUD_COUNT(cloud) + 1
enum { N_CLOUDS = 0 LUASCALE_CLOUDS(CLOUD_COUNT) };
#undef CLOUD_COUNT
#define CLOUD_ENTRY(cloud) &config_cloud_##cloud,
static const struct config_cloud *const clouds[N_CLOUDS + 1] = { LUASCALE_CLOUDS(CLOUD_ENTRY) NULL };
#undef CLOUD_ENTRY
#define CLOUD_KEY(cloud) #cloud,

struct group_meta {
	struct config_loc node;    /* the group's mapping */
	struct config_loc min, max;
	bool max_set;
	bool min_set;
	bool template_set;
	struct config_loc cloud[N_CLOUDS + 1]; /* each cloud's section, when written */
	bool budgets_set;   /* its disruption.budgets, when written */
	const struct disruption_budget *budgets;
	size_t n_budgets;
	bool expire_set;    /* its disruption.expire_after, when written */
	int64_t expire_ms;
};

struct env {
	config_getenv_fn fn;
	void *ud;
	const char *const *envp;
	/* every LUASCALE_* name looked up: the known variables, whoever added them */
	struct arena *tmp;
	const char **seen;
	size_t n_seen, cap_seen;
};

struct config_ctx {
	struct config *c;
	struct arena *a;    /* the config's arena */
	struct arena *tmp;  /* the tree and bookkeeping, freed at the end */
	const char *src;
	struct errbuf *err;
	struct env env;
	unsigned flags;
	struct ytree_path path;

	struct config_loc root, cluster, kubeconfig, context, in_cluster;
	struct config_loc policy, policy_path, protected_sel, reconcile, batch_idle,
		batch_max, batch_new_pod, max_nodes_total, backoff_initial, backoff_max;
	struct config_loc provider_kind, provider_qps, provider_burst;
	struct config_loc provider_cloud[N_CLOUDS + 1]; /* each cloud's provider.<cloud>, when written */
	size_t cloud_index; /* provider.kind's in clouds[], once checked (N_CLOUDS: none, "sim") */
	void *scratch[N_CLOUDS + 1]; /* cfg_scratch's */
	struct config_loc le_enabled, le_namespace, le_name, le_duration, le_renew, le_retry, server_listen;
	struct group_meta *gm;
};

static int vfail(struct config_ctx *x, const struct config_loc *l, const char *fmt, va_list ap)
{
	char msg[ERRBUF_MAX];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (l->var)
		return errbuf_set(x->err, "%s: %s", l->var, msg);
	if (l->path && *l->path)
		return errbuf_set(x->err, "%s:%d:%d: %s: %s", x->src, l->line,
				  l->col, l->path, msg);
	return errbuf_set(x->err, "%s:%d:%d: %s", x->src, l->line, l->col, msg);
}

int cfg_fail_loc(struct config_ctx *x, const struct config_loc *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(x, l, fmt, ap);
	va_end(ap);
	return -1;
}

/* Fails at node 'n', naming the current path. */
int cfg_fail_node(struct config_ctx *x, const struct ytree_node *n, const char *fmt, ...)
{
	struct config_loc l = { n->line, n->col, x->path.s, NULL };
	va_list ap;

	va_start(ap, fmt);
	vfail(x, &l, fmt, ap);
	va_end(ap);
	return -1;
}

int cfg_oom(struct config_ctx *x)
{
	return errbuf_set(x->err, "%s: out of memory", x->src);
}

/* A location that outlives the current path. */
struct config_loc cfg_node_loc(struct config_ctx *x, const struct ytree_node *n)
{
	struct config_loc l = { n->line, n->col, arena_strdup(x->tmp, x->path.s), NULL };

	return l;
}

struct config_val cfg_val_of_node(struct config_ctx *x, const struct ytree_node *n)
{
	struct config_val v = { n->kind, n->text, n->plain, { n->line, n->col, x->path.s, NULL } };

	return v;
}

static struct config_val val_of_env(const char *var, const char *text)
{
	struct config_val v = { YTREE_SCALAR, text, true, { 0, 0, NULL, var } };

	return v;
}

bool cfg_val_is_null(const struct config_val *v)
{
	return v->kind == YTREE_SCALAR && v->plain && ytree_null_text(v->text);
}

static const char *shown(const struct config_val *v, char *out, size_t outlen)
{
	if (v->kind == YTREE_MAP)
		return "a mapping";
	if (v->kind == YTREE_SEQ)
		return "a list";
	if (cfg_val_is_null(v) && v->loc.var == NULL)
		return "nothing (null)";
	return cfg_quoted(v->text, out, outlen);
}

int cfg_bad(struct config_ctx *x, const struct config_val *v, const char *what)
{
	char buf[64];

	return cfg_fail_loc(x, &v->loc, "expected %s, got %s", what, shown(v, buf, sizeof(buf)));
}

static int val_int(struct config_ctx *x, const struct config_val *v, int64_t lo, int64_t hi,
		   int64_t *out)
{
	const char *what = lo == 0 ? "a non-negative integer" :
			   lo == 1 ? "a positive integer" : "an integer";
	int64_t i;
	int rc;

	if (v->kind != YTREE_SCALAR)
		return cfg_bad(x, v, what);
	rc = ytree_int_text(v->text, &i);
	if (rc == -2 || (rc == 0 && i > hi))
		return cfg_fail_loc(x, &v->loc, "%s is too large (at most %lld)", v->text, (long long)hi);
	if (rc == 0 && i < lo && lo > 1)
		return cfg_fail_loc(x, &v->loc, "%s is too small (at least %lld)", v->text, (long long)lo);
	if (rc < 0 || i < lo)
		return cfg_bad(x, v, what);
	*out = i;
	return 0;
}

static int val_number(struct config_ctx *x, const struct config_val *v, double *out)
{
	const char *what = "a non-negative number";
	int64_t i;
	double d;

	if (v->kind != YTREE_SCALAR)
		return cfg_bad(x, v, what);
	if (!ytree_int_text(v->text, &i))
		d = (double)i;
	else if (ytree_float_text(v->text, &d))
		return cfg_bad(x, v, what);
	if (!isfinite(d) || d < 0)
		return cfg_bad(x, v, what);
	*out = d;
	return 0;
}

static int val_bool(struct config_ctx *x, const struct config_val *v, bool *out)
{
	if (v->kind != YTREE_SCALAR || ytree_bool_text(v->text, out))
		return cfg_bad(x, v, "true or false");
	return 0;
}

/* Any scalar, as written; copied into the config's arena. */
static int val_string(struct config_ctx *x, const struct config_val *v, const char **out)
{
	if (v->kind != YTREE_SCALAR)
		return cfg_bad(x, v, "a string");
	*out = arena_strdup(x->a, v->text);
	return *out ? 0 : cfg_oom(x);
}

/* A duration in milliseconds as the config writes it: "250ms", "90s", "15m", "168h". */
static const char *fmt_ms(int64_t ms, char *out, size_t outlen)
{
	if (ms % 3600000 == 0 && ms)
		snprintf(out, outlen, "%lldh", (long long)(ms / 3600000));
	else if (ms % 60000 == 0 && ms)
		snprintf(out, outlen, "%lldm", (long long)(ms / 60000));
	else if (ms % 1000 == 0 && ms)
		snprintf(out, outlen, "%llds", (long long)(ms / 1000));
	else
		snprintf(out, outlen, "%lldms", (long long)ms);
	return out;
}

static int val_duration(struct config_ctx *x, const struct config_val *v, int64_t *out)
{
	if (v->kind != YTREE_SCALAR || config_parse_duration(v->text, out))
		return cfg_bad(x, v, "a duration such as \"10s\", \"1m30s\" or \"250ms\"");
	return 0;
}

static int val_quantity(struct config_ctx *x, const struct config_val *v, enum quantity_unit u,
			int64_t lo, int64_t *out)
{
	struct errbuf qe;

	if (v->kind != YTREE_SCALAR)
		return cfg_bad(x, v, "a quantity such as \"4\", \"500m\" or \"16Gi\"");
	if (quantity_parse(v->text, u, out, &qe))
		return cfg_fail_loc(x, &v->loc, "%s", qe.msg);
	if (*out < lo) {
		char buf[64];

		return cfg_fail_loc(x, &v->loc, "must be %s, got %s",
				    lo > 0 ? "positive" : "zero or more",
				    cfg_quoted(v->text, buf, sizeof(buf)));
	}
	return 0;
}

/* The value of 'key' in mapping 'm', or NULL when absent or null. */
const struct ytree_node *cfg_map_get(const struct ytree_node *m, const char *key)
{
	const struct ytree_node *c = ytree_map_find(m, key);

	return ytree_is_null(c) ? NULL : c;
}

/* Every key of 'm' must be in 'known' (NULL-terminated). */
int cfg_check_keys(struct config_ctx *x, const struct ytree_node *m, const char *const *known)
{
	const struct ytree_node *c;
	const char *const *k;
	char list[256];
	size_t len;

	for (c = m->first; c; c = c->next) {
		const char *hint;

		for (k = known; *k; k++)
			if (!strcmp(c->key->text, *k))
				break;
		if (*k)
			continue;
		hint = suggest(c->key->text, known);
		if (hint)
			return cfg_fail_node(x, c->key, "unknown key \"%s\" (did you mean \"%s\"?)",
					     c->key->text, hint);
		len = 0;
		list[0] = '\0';
		for (k = known; *k; k++) {
			int n = snprintf(list + len, sizeof(list) - len, "%s%s",
					 len ? ", " : "", *k);

			if (n < 0 || (size_t)n >= sizeof(list) - len)
				break;
			len += (size_t)n;
		}
		return cfg_fail_node(x, c->key, "unknown key \"%s\" (known keys: %s)",
				     c->key->text, list);
	}
	return 0;
}

int cfg_expect_kind(struct config_ctx *x, const struct ytree_node *n, enum ytree_kind kind)
{
	struct config_val v;

	if (n->kind == kind)
		return 0;
	v = cfg_val_of_node(x, n);
	return cfg_bad(x, &v, kind == YTREE_MAP ? "a mapping" : "a list");
}

/* Field readers: each decodes 'key' of mapping 'm' when present (and not
 * null), leaving *out unchanged otherwise. 'where' (may be NULL) records
 * the position. They return 0 or -1. */


/* The ranges the file and the environment share. */
static const struct config_range r_count = { 0, MAX_COUNT };
const struct config_range cfg_range_group_size = { 0, MAX_COUNT };
static const struct config_range r_target = { -1, MAX_COUNT };
static const struct config_range r_burst = { 1, 1000000 };
static const struct config_range r_instructions = { MIN_INSTRUCTIONS, MAX_INSTRUCTIONS };
static const struct config_range r_memory = { MIN_MEMORY, MAX_MEMORY };
static const struct config_range r_any_duration = { 0, 7 * DAY };  /* dec_duration's default */
static const struct config_range r_reconcile = { 100, DAY };
static const struct config_range r_batch = { 0, DAY };
static const struct config_range r_explain = { 0, DAY };      /* 0: no node explanations */
static const struct config_range r_provision = { SECOND, 7 * DAY };
static const struct config_range r_backoff = { SECOND, 7 * DAY };
static const struct config_range r_drain = { SECOND, 7 * DAY };
static const struct config_range r_timeout = { 1, DAY };        /* CPU time of a policy call */
static const struct config_range r_staleness = { SECOND, DAY };
static const struct config_range r_sync = { SECOND, DAY };      /* cluster.sync_timeout */

int cfg_dec_int(struct config_ctx *x, const struct config_val *v, void *out, const void *arg)
{
	const struct config_range *r = arg;

	return val_int(x, v, r->lo, r->hi, out);
}

/* A finite number from 0 to MAX_NUMBER. */
static int dec_number(struct config_ctx *x, const struct config_val *v, void *out, const void *arg)
{
	(void)arg;
	if (val_number(x, v, out))
		return -1;
	if (*(double *)out > MAX_NUMBER)
		return cfg_bad(x, v, "a number from 0 to 1000000");
	return 0;
}

/* A number > 0 (a rate). */
static int dec_rate(struct config_ctx *x, const struct config_val *v, void *out, const void *arg)
{
	(void)arg;
	if (val_number(x, v, out) < 0)
		return -1;
	if (!(*(double *)out >= MIN_QPS) || *(double *)out > MAX_QPS)
		return cfg_bad(x, v, "a number of calls per second from 0.001 to 1000000");
	return 0;
}

/* A rate of Kubernetes writes: finite, at least 0.001 a second (one write
 * in about 17 minutes; anything smaller is a typo, not a limit). */
static int dec_write_rate(struct config_ctx *x, const struct config_val *v, void *out, const void *arg)
{
	(void)arg;
	if (val_number(x, v, out) < 0)
		return -1;
	if (!(*(double *)out >= 0.001) || *(double *)out > 1e6)
		return cfg_bad(x, v, "a number of writes per second from 0.001 to 1000000");
	return 0;
}

/* A duration above zero. */
int cfg_dec_bool(struct config_ctx *x, const struct config_val *v, void *out, const void *arg)
{
	(void)arg;
	return val_bool(x, v, out);
}

int cfg_dec_string(struct config_ctx *x, const struct config_val *v, void *out, const void *arg)
{
	(void)arg;
	return val_string(x, v, out);
}

/* A duration within [lo, hi] milliseconds ('arg': a struct config_range). */
static int dec_duration(struct config_ctx *x, const struct config_val *v, void *out, const void *arg)
{
	const struct config_range *r = arg ? arg : &r_any_duration;
	char lo[32], hi[32], buf[64];
	int64_t ms;

	if (val_duration(x, v, &ms))
		return -1;
	if (ms < r->lo || ms > r->hi)
		return cfg_fail_loc(x, &v->loc, "must be from %s to %s, got %s",
				    fmt_ms(r->lo, lo, sizeof(lo)), fmt_ms(r->hi, hi, sizeof(hi)),
				    cfg_quoted(v->text, buf, sizeof(buf)));
	*(int64_t *)out = ms;
	return 0;
}

/* A byte count within [lo, hi] ('arg': a struct config_range). */
static int dec_bytes(struct config_ctx *x, const struct config_val *v, void *out, const void *arg)
{
	const struct config_range *r = arg;
	char buf[64];
	int64_t b;

	if (val_quantity(x, v, QUANTITY_UNIT, 1, &b))
		return -1;
	if (r && (b < r->lo || b > r->hi))
		return cfg_fail_loc(x, &v->loc, "must be from %lldMi to %lldGi, got %s",
				    (long long)(r->lo >> 20), (long long)(r->hi >> 30),
				    cfg_quoted(v->text, buf, sizeof(buf)));
	*(int64_t *)out = b;
	return 0;
}

int cfg_field(struct config_ctx *x, const struct ytree_node *m, const char *key,
		 cfg_decode_fn dec, void *out, const void *arg, struct config_loc *where)
{
	const struct ytree_node *n = cfg_map_get(m, key);
	struct config_val v;
	size_t old;
	int rc;

	if (!n)
		return 0;
	old = ytree_path_push_key(&x->path, key);
	v = cfg_val_of_node(x, n);
	rc = dec(x, &v, out, arg);
	if (!rc && where)
		*where = cfg_node_loc(x, n);
	ytree_path_pop(&x->path, old);
	return rc;
}

/* Remembers that 'name' is a variable luascale reads (a LUASCALE_* name
 * looked up by an override), so that any other one can be reported. */
static void env_note(struct env *e, const char *name)
{
	size_t i;

	if (strncmp(name, ENV_PREFIX, strlen(ENV_PREFIX)) || !e->tmp)
		return;
	for (i = 0; i < e->n_seen; i++)
		if (!strcmp(e->seen[i], name))
			return;
	if (e->n_seen == e->cap_seen) {
		size_t cap = e->cap_seen ? e->cap_seen * 2 : 64;
		const char **n = arena_calloc(e->tmp, cap, sizeof(*n));

		if (!n)
			return; /* out of memory: the check then reports more, never less */
		if (e->n_seen)
			memcpy(n, e->seen, e->n_seen * sizeof(*n));
		e->seen = n;
		e->cap_seen = cap;
	}
	if ((e->seen[e->n_seen] = arena_strdup(e->tmp, name)))
		e->n_seen++;
}

/* Environment readers: the same decoders on the value of 'var'. */
static const char *env_get(struct env *e, const char *name)
{
	const char *const *p;
	size_t n = strlen(name);

	env_note(e, name);

	if (e->envp) {
		for (p = e->envp; *p; p++)
			if (!strncmp(*p, name, n) && (*p)[n] == '=')
				return *p + n + 1;
		return NULL;
	}
	return e->fn ? e->fn(name, e->ud) : NULL;
}

int cfg_env_field(struct config_ctx *x, const char *var, cfg_decode_fn dec, void *out,
		     const void *arg, struct config_loc *where)
{
	const char *text = env_get(&x->env, var);
	struct config_val v;

	if (!text)
		return 0;
	v = val_of_env(var, text);
	if (dec(x, &v, out, arg))
		return -1;
	if (where)
		*where = v.loc;
	return 0;
}

static const char *home_dir(struct config_ctx *x)
{
	if (x->env.envp || x->env.fn)
		return env_get(&x->env, "HOME");
	return getenv("HOME");
}

/* Expands a leading "~/" with HOME; joins a relative path from the file to
 * the file's directory. Returns the path in the config's arena or NULL. */
const char *cfg_resolve_path(struct config_ctx *x, const char *p, bool from_file,
				const struct config_loc *l)
{
	char *r;
	size_t n;

	if (p[0] == '~' && (p[1] == '/' || p[1] == '\0')) {
		const char *home = home_dir(x);

		if (!home || !*home) {
			cfg_fail_loc(x, l, "cannot expand \"~\" in \"%s\": HOME is not set", p);
			return NULL;
		}
		n = strlen(home) + strlen(p);
		r = arena_alloc(x->a, n + 1);
		if (!r) {
			cfg_oom(x);
			return NULL;
		}
		snprintf(r, n + 1, "%s%s", home, p + 1);
		return r;
	}
	if (!from_file || p[0] == '/' || p[0] == '\0' || !strcmp(x->c->base_dir, "."))
		return p;
	n = strlen(x->c->base_dir) + strlen(p) + 2;
	r = arena_alloc(x->a, n);
	if (!r) {
		cfg_oom(x);
		return NULL;
	}
	snprintf(r, n, "%s%s%s", x->c->base_dir,
		 x->c->base_dir[strlen(x->c->base_dir) - 1] == '/' ? "" : "/", p);
	return r;
}

/* ---- cluster ---- */

static int parse_cluster(struct config_ctx *x, const struct ytree_node *m)
{
	static const char *const keys[] = { "kubeconfig", "context", "in_cluster", "write_qps",
					    "write_burst", "sync_timeout", NULL };
	struct config *c = x->c;
	const char *kc = NULL;

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	x->cluster = cfg_node_loc(x, m);
	if (cfg_field(x, m, "kubeconfig", cfg_dec_string, &kc, NULL, &x->kubeconfig) ||
	    cfg_field(x, m, "context", cfg_dec_string, &c->context, NULL, &x->context) ||
	    cfg_field(x, m, "in_cluster", cfg_dec_bool, &c->in_cluster, NULL, &x->in_cluster) ||
	    cfg_field(x, m, "write_qps", dec_write_rate, &c->write_qps, NULL, NULL) ||
	    cfg_field(x, m, "write_burst", cfg_dec_int, &c->write_burst, &r_burst, NULL) ||
	    cfg_field(x, m, "sync_timeout", dec_duration, &c->sync_timeout_ms, &r_sync, NULL))
		return -1;
	if (kc) {
		c->kubeconfig = cfg_resolve_path(x, kc, true, &x->kubeconfig);
		if (!c->kubeconfig)
			return -1;
	}
	return 0;
}

/* ---- disruption budgets (the top level's and a node group's) ---- */

typedef int (*budget_text_fn)(const char *text, struct disruption_budget *b, struct errbuf *err);

/* Field 'key' of budget mapping 'm', a scalar, read by 'fn' into 'b';
 * 0 when absent. A message from budget.c is given at the field. */
static int budget_text_field(struct config_ctx *x, const struct ytree_node *m, const char *key,
			     budget_text_fn fn, struct disruption_budget *b)
{
	const struct ytree_node *n = cfg_map_get(m, key);
	size_t old;
	struct errbuf be;
	int rc = 0;

	if (!n)
		return 0;
	old = ytree_path_push_key(&x->path, key);
	if (n->kind != YTREE_SCALAR) {
		struct config_val v = cfg_val_of_node(x, n);

		rc = cfg_bad(x, &v, "a string");
	} else if (fn(n->text, b, &be) < 0) {
		rc = cfg_fail_node(x, n, "%s", be.msg);
	}
	ytree_path_pop(&x->path, old);
	return rc;
}

/* One budget: {nodes, reasons, schedule, duration}; nodes required,
 * schedule and duration both or neither, reasons a non-empty list. */
static int parse_budget(struct config_ctx *x, const struct ytree_node *m, struct disruption_budget *b)
{
	static const char *const keys[] = { "nodes", "reasons", "schedule", "duration", NULL };
	const struct ytree_node *l, *c;
	bool sched, dur;
	size_t old, i = 0;

	memset(b, 0, sizeof(*b));
	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	if (!cfg_map_get(m, "nodes"))
		return cfg_fail_node(x, m, "nodes is required: a count such as 5 or a percentage such as \"10%%\"");
	sched = cfg_map_get(m, "schedule") != NULL;
	dur = cfg_map_get(m, "duration") != NULL;
	if (sched && !dur)
		return cfg_fail_node(x, m, "schedule is set, so duration is required: how long the budget is active after each time the schedule fires (\"8h\", \"30m\")");
	if (dur && !sched)
		return cfg_fail_node(x, m, "duration is set, so schedule is required: when the budget becomes active (a cron schedule such as \"0 9 * * mon-fri\")");
	if (budget_text_field(x, m, "nodes", budget_parse_nodes, b) ||
	    budget_text_field(x, m, "schedule", budget_parse_schedule, b) ||
	    budget_text_field(x, m, "duration", budget_parse_duration, b))
		return -1;
	l = cfg_map_get(m, "reasons");
	if (!l)
		return 0;
	old = ytree_path_push_key(&x->path, "reasons");
	if (cfg_expect_kind(x, l, YTREE_SEQ)) {
		ytree_path_pop(&x->path, old);
		return -1;
	}
	if (!l->n) {
		cfg_fail_node(x, l, "an empty list: leave reasons out for a budget of every reason");
		ytree_path_pop(&x->path, old);
		return -1;
	}
	for (c = l->first; c; c = c->next, i++) {
		size_t old_i = ytree_path_push_index(&x->path, i);
		struct errbuf be;
		int rc = 0;

		if (c->kind != YTREE_SCALAR) {
			struct config_val v = cfg_val_of_node(x, c);

			rc = cfg_bad(x, &v, "a reason: empty, underutilized, drifted, expired or any");
		} else if (budget_parse_reason(c->text, b, &be) < 0) {
			rc = cfg_fail_node(x, c, "%s", be.msg);
		}
		ytree_path_pop(&x->path, old_i);
		if (rc) {
			ytree_path_pop(&x->path, old);
			return -1;
		}
	}
	ytree_path_pop(&x->path, old);
	return 0;
}

/* How long a node may live: a duration from 1m to 10 years ("720h", as
 * Karpenter's expireAfter), or 0 or "Never" for no expiry. */
static const struct config_range r_expire = { 60 * SECOND, 87600LL * 3600 * SECOND };

static int dec_expire(struct config_ctx *x, const struct config_val *v, void *out, const void *arg)
{
	char buf[64];
	int64_t ms;

	(void)arg;
	if (v->kind == YTREE_SCALAR && (!strcmp(v->text, "Never") || !strcmp(v->text, "never") ||
					!strcmp(v->text, "0"))) {
		*(int64_t *)out = 0;
		return 0;
	}
	if (val_duration(x, v, &ms))
		return -1;
	if (ms != 0 && (ms < r_expire.lo || ms > r_expire.hi))
		return cfg_fail_loc(x, &v->loc, "must be 0 or \"Never\" (no expiry), or from 1m to 87600h, got %s",
				    cfg_quoted(v->text, buf, sizeof(buf)));
	*(int64_t *)out = ms;
	return 0;
}

/* A disruption: section, {budgets: [...], expire_after: D}. Sets *out and
 * *n and *set when budgets is written (null is not: it leaves the list in
 * force); [] is a list of none. Sets *expire_ms and *expire_set when
 * expire_after is written. */
static int parse_disruption_budgets(struct config_ctx *x, const struct ytree_node *m,
				    const struct disruption_budget **out, size_t *n, bool *set,
				    int64_t *expire_ms, bool *expire_set)
{
	static const char *const keys[] = { "budgets", "expire_after", NULL };
	const struct ytree_node *l, *c;
	struct disruption_budget *b;
	size_t old, i = 0;
	int rc = 0;

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	if (cfg_map_get(m, "expire_after")) {
		if (cfg_field(x, m, "expire_after", dec_expire, expire_ms, NULL, NULL))
			return -1;
		*expire_set = true;
	}
	l = cfg_map_get(m, "budgets");
	if (!l)
		return 0;
	old = ytree_path_push_key(&x->path, "budgets");
	if (cfg_expect_kind(x, l, YTREE_SEQ)) {
		ytree_path_pop(&x->path, old);
		return -1;
	}
	if (l->n > BUDGET_MAX_PER_LIST) {
		cfg_fail_node(x, l, "%zu budgets: at most %d", l->n, BUDGET_MAX_PER_LIST);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	b = arena_calloc(x->a, l->n ? l->n : 1, sizeof(*b));
	if (!b) {
		ytree_path_pop(&x->path, old);
		return cfg_oom(x);
	}
	for (c = l->first; c && !rc; c = c->next, i++) {
		size_t old_i = ytree_path_push_index(&x->path, i);

		rc = parse_budget(x, c, &b[i]);
		ytree_path_pop(&x->path, old_i);
	}
	ytree_path_pop(&x->path, old);
	if (rc)
		return -1;
	*out = b;
	*n = l->n;
	*set = true;
	return 0;
}

/* The top-level disruption: section. */
static int parse_disruption(struct config_ctx *x, const struct ytree_node *m)
{
	struct config *c = x->c;
	bool expire_set = false;

	return parse_disruption_budgets(x, m, &c->disruption_budgets, &c->n_disruption_budgets,
					&c->disruption_budgets_set, &c->disruption_expire_after_ms,
					&expire_set);
}

/* Each group's budgets in force: its own, else the top level's (or the
 * default). After check_provider() has made group_extra. */
static int resolve_budgets(struct config_ctx *x)
{
	struct config *c = x->c;
	size_t i;

	for (i = 0; c->group_extra && i < c->n_groups; i++) {
		struct config_group_extra *e = &c->group_extra[i];
		const struct group_meta *gm = &x->gm[i];

		e->budgets_set = gm->budgets_set;
		e->budgets = gm->budgets_set ? gm->budgets : c->disruption_budgets;
		e->n_budgets = gm->budgets_set ? gm->n_budgets : c->n_disruption_budgets;
	}
	/* each group's expiry in force: its own, else the top level's */
	for (i = 0; i < c->n_groups; i++) {
		const struct group_meta *gm = x->gm ? &x->gm[i] : NULL;

		c->groups[i].expire_after = (gm && gm->expire_set ? gm->expire_ms
								   : c->disruption_expire_after_ms) / SECOND;
	}
	return 0;
}

const struct disruption_budget *config_group_budgets(const struct config *c, const char *group,
						     size_t *n)
{
	size_t i;

	for (i = 0; c->group_extra && group && i < c->n_groups; i++)
		if (!strcmp(c->groups[i].name, group)) {
			*n = c->group_extra[i].n_budgets;
			return c->group_extra[i].budgets;
		}
	*n = c->n_disruption_budgets;
	return c->disruption_budgets;
}

/* ---- node groups ---- */

static int parse_string_map(struct config_ctx *x, const struct ytree_node *m, struct kvlist *out,
			    const char *what)
{
	const struct ytree_node *c;
	size_t i = 0, old;

	if (cfg_expect_kind(x, m, YTREE_MAP))
		return -1;
	out->n = 0;
	out->items = m->n ? arena_calloc(x->a, m->n, sizeof(*out->items)) : NULL;
	if (m->n && !out->items)
		return cfg_oom(x);
	for (c = m->first; c; c = c->next, i++) {
		struct config_val v;
		int rc = 0;
		char buf[64];

		old = ytree_path_push_key(&x->path, c->key->text);
		v = cfg_val_of_node(x, c);
		if (!k8sname_valid_qualified_name(c->key->text, NULL, 0))
			rc = cfg_fail_node(x, c->key, "invalid %s key %s: expected [prefix/]name, name up to 63 characters of letters, digits, '-', '_' and '.'",
					   what, cfg_quoted(c->key->text, buf, sizeof(buf)));
		else if (c->kind != YTREE_SCALAR)
			rc = cfg_bad(x, &v, "a string");
		else if (!k8sname_valid_label_value(cfg_val_is_null(&v) ? "" : c->text))
			rc = cfg_fail_node(x, c, "invalid %s value %s: up to 63 characters of letters, digits, '-', '_' and '.'",
					   what, cfg_quoted(c->text, buf, sizeof(buf)));
		ytree_path_pop(&x->path, old);
		if (rc)
			return -1;
		out->items[i].key = arena_strdup(x->a, c->key->text);
		out->items[i].value = arena_strdup(x->a, cfg_val_is_null(&v) ? "" : c->text);
		if (!out->items[i].key || !out->items[i].value)
			return cfg_oom(x);
	}
	out->n = i;
	return 0;
}

static const char *kv_find(const struct kvlist *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->items[i].key, key))
			return l->items[i].value;
	return NULL;
}

static bool known_native_resource(const char *name)
{
	return !strncmp(name, "hugepages-", 10) ||
	       !strncmp(name, "attachable-volumes-", 19);
}

static int parse_allocatable(struct config_ctx *x, const struct ytree_node *m, struct resources *r)
{
	static const char *const native[] = { "cpu", "memory", "ephemeral-storage", "pods", NULL };
	const struct ytree_node *c;
	bool have_cpu = false, have_mem = false;
	size_t old;

	if (cfg_expect_kind(x, m, YTREE_MAP))
		return -1;
	r->pods = DEFAULT_PODS;
	r->ext = m->n ? arena_calloc(x->a, m->n, sizeof(*r->ext)) : NULL;
	if (m->n && !r->ext)
		return cfg_oom(x);
	for (c = m->first; c; c = c->next) {
		const char *name = c->key->text;
		struct config_val v;
		int rc;

		old = ytree_path_push_key(&x->path, name);
		v = cfg_val_of_node(x, c);
		if (!strcmp(name, "cpu")) {
			rc = val_quantity(x, &v, QUANTITY_MILLI, 0, &r->cpu_m);
			have_cpu = true;
		} else if (!strcmp(name, "memory")) {
			rc = val_quantity(x, &v, QUANTITY_UNIT, 0, &r->memory);
			have_mem = true;
		} else if (!strcmp(name, "ephemeral-storage")) {
			rc = val_quantity(x, &v, QUANTITY_UNIT, 0, &r->ephemeral);
		} else if (!strcmp(name, "pods")) {
			rc = val_quantity(x, &v, QUANTITY_UNIT, 0, &r->pods);
		} else if (!strchr(name, '/') && !known_native_resource(name)) {
			const char *hint = suggest(name, native);
			char buf[64];

			rc = cfg_fail_node(x, c->key, "unknown resource %s%s%s%s: extended resources need a domain prefix, like \"nvidia.com/gpu\"",
					   cfg_quoted(name, buf, sizeof(buf)),
					   hint ? " (did you mean \"" : "", hint ? hint : "",
					   hint ? "\"?)" : "");
		} else if (!k8sname_valid_qualified_name(name, NULL, 0)) {
			char buf[64];

			rc = cfg_fail_node(x, c->key, "invalid resource name %s",
					   cfg_quoted(name, buf, sizeof(buf)));
		} else {
			struct res_ext *e = &r->ext[r->n_ext];

			rc = val_quantity(x, &v, QUANTITY_UNIT, 0, &e->value);
			if (!rc) {
				e->name = arena_strdup(x->a, name);
				if (!e->name)
					rc = cfg_oom(x);
				r->n_ext++;
			}
		}
		ytree_path_pop(&x->path, old);
		if (rc)
			return -1;
	}
	if (!r->n_ext)
		r->ext = NULL;
	if (!have_cpu)
		return cfg_fail_node(x, m, "cpu is required");
	if (!have_mem)
		return cfg_fail_node(x, m, "memory is required");
	return 0;
}

static int parse_taint(struct config_ctx *x, const struct ytree_node *m, struct taint *t)
{
	static const char *const keys[] = { "key", "value", "effect", NULL };
	static const char *const effects[] = { "NoSchedule", "PreferNoSchedule", "NoExecute", NULL };
	const struct ytree_node *n;
	const char *effect = NULL;
	char buf[64];
	size_t old;

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	t->value = "";
	if (cfg_field(x, m, "key", cfg_dec_string, &t->key, NULL, NULL) ||
	    cfg_field(x, m, "value", cfg_dec_string, &t->value, NULL, NULL) ||
	    cfg_field(x, m, "effect", cfg_dec_string, &effect, NULL, NULL))
		return -1;
	if (!t->key)
		return cfg_fail_node(x, m, "key is required");
	if (!effect)
		return cfg_fail_node(x, m, "effect is required (NoSchedule, PreferNoSchedule or NoExecute)");
	if (!k8sname_valid_qualified_name(t->key, NULL, 0)) {
		n = cfg_map_get(m, "key");
		old = ytree_path_push_key(&x->path, "key");
		cfg_fail_node(x, n, "invalid taint key %s", cfg_quoted(t->key, buf, sizeof(buf)));
		ytree_path_pop(&x->path, old);
		return -1;
	}
	if (!k8sname_valid_label_value(t->value)) {
		n = cfg_map_get(m, "value");
		old = ytree_path_push_key(&x->path, "value");
		cfg_fail_node(x, n, "invalid taint value %s: up to 63 characters of letters, digits, '-', '_' and '.'",
			      cfg_quoted(t->value, buf, sizeof(buf)));
		ytree_path_pop(&x->path, old);
		return -1;
	}
	if (taint_effect_parse(effect, &t->effect)) {
		const char *hint = suggest(effect, effects);

		n = cfg_map_get(m, "effect");
		old = ytree_path_push_key(&x->path, "effect");
		if (hint && strcmp(hint, effect))
			cfg_fail_node(x, n, "unknown taint effect %s (did you mean \"%s\"?)",
				      cfg_quoted(effect, buf, sizeof(buf)), hint);
		else
			cfg_fail_node(x, n, "unknown taint effect %s: expected NoSchedule, PreferNoSchedule or NoExecute",
				      cfg_quoted(effect, buf, sizeof(buf)));
		ytree_path_pop(&x->path, old);
		return -1;
	}
	return 0;
}

/* Adds the selector's labels to the template's: a new node of the group
 * carries them. A template label that contradicts the selector is an error. */
static int merge_selector_labels(struct config_ctx *x, struct node_group *g,
				 const struct ytree_node *labels)
{
	struct kvlist *l = &g->tmpl.labels;
	struct kv *items;
	size_t i, n = l->n;

	for (i = 0; i < g->selector.n; i++) {
		const char *have = kv_find(l, g->selector.items[i].key);

		if (have && strcmp(have, g->selector.items[i].value)) {
			const struct ytree_node *c;
			size_t old = ytree_path_push_key(&x->path, "labels");

			for (c = labels->first; c; c = c->next)
				if (!strcmp(c->key->text, g->selector.items[i].key))
					break;
			ytree_path_push_key(&x->path, g->selector.items[i].key);
			cfg_fail_node(x, c, "is \"%s\" but the group's selector requires \"%s\": a new node would not belong to its group",
				      have, g->selector.items[i].value);
			ytree_path_pop(&x->path, old);
			return -1;
		}
		if (!have)
			n++;
	}
	if (n == l->n)
		return 0;
	items = arena_calloc(x->a, n, sizeof(*items));
	if (!items)
		return cfg_oom(x);
	if (l->n)
		memcpy(items, l->items, l->n * sizeof(*items));
	n = l->n;
	for (i = 0; i < g->selector.n; i++)
		if (!kv_find(l, g->selector.items[i].key))
			items[n++] = g->selector.items[i];
	l->items = items;
	l->n = n;
	return 0;
}

static int parse_template(struct config_ctx *x, const struct ytree_node *m, struct node_group *g)
{
	static const char *const keys[] = { "allocatable", "labels", "taints", NULL };
	const struct ytree_node *alloc, *labels, *taints, *c;
	size_t old, i = 0;
	int rc = 0;

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	alloc = cfg_map_get(m, "allocatable");
	if (!alloc)
		return cfg_fail_node(x, m, "allocatable is required (at least cpu and memory)");
	old = ytree_path_push_key(&x->path, "allocatable");
	rc = parse_allocatable(x, alloc, &g->tmpl.allocatable);
	ytree_path_pop(&x->path, old);
	if (rc)
		return -1;

	labels = cfg_map_get(m, "labels");
	if (labels) {
		old = ytree_path_push_key(&x->path, "labels");
		rc = parse_string_map(x, labels, &g->tmpl.labels, "label");
		ytree_path_pop(&x->path, old);
		if (rc)
			return -1;
	}
	if (merge_selector_labels(x, g, labels))
		return -1;
	g->drift_labels = g->tmpl.labels; /* what a node must still carry: the operator's words */

	taints = cfg_map_get(m, "taints");
	if (!taints)
		return 0;
	old = ytree_path_push_key(&x->path, "taints");
	if (cfg_expect_kind(x, taints, YTREE_SEQ)) {
		ytree_path_pop(&x->path, old);
		return -1;
	}
	g->tmpl.taints = taints->n ? arena_calloc(x->a, taints->n, sizeof(struct taint)) : NULL;
	if (taints->n && !g->tmpl.taints) {
		ytree_path_pop(&x->path, old);
		return cfg_oom(x);
	}
	for (c = taints->first; c && !rc; c = c->next, i++) {
		size_t o2 = ytree_path_push_index(&x->path, i);

		rc = parse_taint(x, c, &g->tmpl.taints[i]);
		ytree_path_pop(&x->path, o2);
	}
	ytree_path_pop(&x->path, old);
	g->tmpl.n_taints = i;
	g->drift_taints = g->tmpl.taints;
	g->n_drift_taints = i;
	return rc;
}

/* Is every byte of 's' one of 'set' or alphanumeric ('lower': lowercase only)? */
bool cfg_chars_ok(const char *s, const char *set, bool lower)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
		    (!lower && ch >= 'A' && ch <= 'Z') || (ch && strchr(set, ch)))
			continue;
		return false;
	}
	return true;
}

int cfg_dec_checked(struct config_ctx *x, const struct config_val *v, void *out, const void *arg)
{
	const struct config_str_rule *r = arg;
	const char *s;
	char buf[64];

	if (val_string(x, v, &s))
		return -1;
	if (!*s || strlen(s) > r->max || !r->ok(s))
		return cfg_fail_loc(x, &v->loc, "%s is not %s", cfg_quoted(s, buf, sizeof(buf)), r->what);
	*(const char **)out = s;
	return 0;
}

bool cfg_ok_printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

/* One of the NULL-terminated 'choices'; *out gets its index. */
int cfg_dec_choice(struct config_ctx *x, const struct config_val *v, void *out, const void *arg)
{
	const char *const *choices = arg, *s;
	char buf[64], list[128];
	size_t i, len = 0;

	if (val_string(x, v, &s))
		return -1;
	for (i = 0; choices[i]; i++)
		if (!strcmp(s, choices[i])) {
			*(int *)out = (int)i;
			return 0;
		}
	list[0] = '\0';
	for (i = 0; choices[i]; i++) {
		int n = snprintf(list + len, sizeof(list) - len, "%s\"%s\"", i ? ", " : "", choices[i]);

		if (n < 0 || (size_t)n >= sizeof(list) - len)
			break;
		len += (size_t)n;
	}
	return cfg_fail_loc(x, &v->loc, "%s is not one of %s", cfg_quoted(s, buf, sizeof(buf)), list);
}

/* A list of strings, each checked by 'rule'; duplicates refused. */
int cfg_parse_checked_list(struct config_ctx *x, const struct ytree_node *m, const char *key,
			      const struct config_str_rule *rule, const char *const **out, size_t *n_out)
{
	const struct ytree_node *l = cfg_map_get(m, key), *c;
	const char **items;
	size_t old, i = 0, j;
	int rc = 0;

	if (!l)
		return 0;
	old = ytree_path_push_key(&x->path, key);
	if (cfg_expect_kind(x, l, YTREE_SEQ)) {
		ytree_path_pop(&x->path, old);
		return -1;
	}
	items = arena_calloc(x->a, l->n + 1, sizeof(*items));
	if (!items) {
		ytree_path_pop(&x->path, old);
		return cfg_oom(x);
	}
	for (c = l->first; c && !rc; c = c->next, i++) {
		size_t o2 = ytree_path_push_index(&x->path, i);
		struct config_val v = cfg_val_of_node(x, c);

		rc = cfg_dec_checked(x, &v, &items[i], rule);
		for (j = 0; !rc && j < i; j++)
			if (!strcmp(items[j], items[i]))
				rc = cfg_fail_node(x, c, "\"%s\" is listed twice", items[i]);
		ytree_path_pop(&x->path, o2);
	}
	ytree_path_pop(&x->path, old);
	*out = items;
	*n_out = i;
	return rc;
}

static int parse_group(struct config_ctx *x, const struct ytree_node *m, struct node_group *g,
		       struct group_meta *gm, struct config_group_extra *e)
{
	static const char *const keys[] = { "name", "min", "max", "price_per_hour",
					    "selector", "target", "template",
					    LUASCALE_CLOUDS(CLOUD_KEY) "disruption", NULL };
	size_t ci;
	const struct ytree_node *n;
	int64_t min = 0, max = -1, tgt = -1;
	size_t old;
	char buf[64];

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	gm->node = cfg_node_loc(x, m);
	n = cfg_map_get(m, "name");
	if (!n)
		return cfg_fail_node(x, m, "name is required");
	if (cfg_field(x, m, "name", cfg_dec_string, &g->name, NULL, NULL))
		return -1;
	if (!valid_group_name(g->name)) {
		old = ytree_path_push_key(&x->path, "name");
		cfg_fail_node(x, n, "invalid node group name %s: up to %d lowercase letters, digits, '-' and '.', starting and ending with a letter or digit",
			      cfg_quoted(g->name, buf, sizeof(buf)), MAX_NAME);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	if (cfg_field(x, m, "min", cfg_dec_int, &min, &cfg_range_group_size, &gm->min) ||
	    cfg_field(x, m, "max", cfg_dec_int, &max, &cfg_range_group_size, &gm->max) ||
	    cfg_field(x, m, "price_per_hour", dec_number, &g->price_per_hour, NULL, NULL) ||
	    cfg_field(x, m, "target", cfg_dec_int, &tgt, &r_target, NULL))
		return -1;
	if (gm->min.path)
		gm->min_set = true;
	else
		gm->min = gm->node;
	if (max >= 0)
		gm->max_set = true;
	else
		gm->max = gm->node;
	g->min = (int)min;
	g->max = (int)max;
	g->target = (int)tgt;

	n = cfg_map_get(m, "selector");
	if (n) {
		int rc;

		old = ytree_path_push_key(&x->path, "selector");
		rc = parse_string_map(x, n, &g->selector, "label");
		if (!rc && g->selector.n == 0)
			rc = cfg_fail_node(x, n, "an empty selector would claim every node; leave it out for the default {%s: %s}",
					   GROUP_LABEL, g->name);
		ytree_path_pop(&x->path, old);
		if (rc)
			return -1;
	} else {
		g->selector.items = arena_calloc(x->a, 1, sizeof(struct kv));
		if (!g->selector.items)
			return cfg_oom(x);
		g->selector.items[0].key = GROUP_LABEL;
		g->selector.items[0].value = g->name;
		g->selector.n = 1;
	}

	for (ci = 0; ci < N_CLOUDS; ci++) {
		int rc;

		n = cfg_map_get(m, clouds[ci]->kind);
		if (!n)
			continue;
		old = ytree_path_push_key(&x->path, clouds[ci]->kind);
		gm->cloud[ci] = cfg_node_loc(x, n);
		rc = clouds[ci]->parse_group(x, n, g, e);
		ytree_path_pop(&x->path, old);
		if (rc)
			return -1;
	}

	n = cfg_map_get(m, "disruption");
	if (n) {
		int rc;

		old = ytree_path_push_key(&x->path, "disruption");
		rc = parse_disruption_budgets(x, n, &gm->budgets, &gm->n_budgets, &gm->budgets_set,
					      &gm->expire_ms, &gm->expire_set);
		ytree_path_pop(&x->path, old);
		if (rc)
			return -1;
	}

	/* required unless the cloud describes new nodes (checked at the end) */
	n = cfg_map_get(m, "template");
	if (!n)
		return 0;
	gm->template_set = true;
	old = ytree_path_push_key(&x->path, "template");
	if (parse_template(x, n, g)) {
		ytree_path_pop(&x->path, old);
		return -1;
	}
	ytree_path_pop(&x->path, old);
	return 0;
}

static int parse_groups(struct config_ctx *x, const struct ytree_node *s)
{
	struct config *c = x->c;
	const struct ytree_node *item;
	size_t i = 0, j, old;

	if (cfg_expect_kind(x, s, YTREE_SEQ))
		return -1;
	if (!s->n)
		return 0;
	c->groups = arena_calloc(x->a, s->n, sizeof(*c->groups));
	c->group_extra = arena_calloc(x->a, s->n, sizeof(*c->group_extra));
	x->gm = arena_calloc(x->tmp, s->n, sizeof(*x->gm));
	if (!c->groups || !c->group_extra || !x->gm)
		return cfg_oom(x);
	for (item = s->first; item; item = item->next, i++) {
		int rc;

		old = ytree_path_push_index(&x->path, i);
		rc = parse_group(x, item, &c->groups[i], &x->gm[i], &c->group_extra[i]);
		for (j = 0; !rc && j < i; j++) {
			if (strcmp(c->groups[j].name, c->groups[i].name))
				continue;
			ytree_path_push_key(&x->path, "name");
			rc = cfg_fail_node(x, cfg_map_get(item, "name"),
					   "duplicate node group name \"%s\" (first at line %d)",
					   c->groups[i].name, x->gm[j].node.line);
		}
		ytree_path_pop(&x->path, old);
		if (rc)
			return -1;
		c->n_groups = i + 1;
	}
	return 0;
}

/* ---- policy ---- */

/* Fills 'p' from a scalar typed by the core schema (plain) or a string. */
static int param_scalar(struct config_ctx *x, const struct config_val *v, struct param *p)
{
	bool overflow;

	p->str = arena_strdup(x->a, v->text);
	if (!p->str)
		return cfg_oom(x);
	if (!v->plain) {
		p->type = PARAM_STRING;
		return 0;
	}
	switch (ytree_resolve_plain(v->text, &p->b, &p->i, &p->num, &overflow)) {
	case YTREE_NULL:
		return cfg_fail_loc(x, &v->loc, "null is not a parameter value; write \"\" for an empty string, or leave the parameter out");
	case YTREE_BOOL:
		p->type = PARAM_BOOL;
		break;
	case YTREE_INT:
		if (overflow)
			return cfg_fail_loc(x, &v->loc, "integer %s does not fit in 64 bits", v->text);
		p->type = PARAM_INT;
		p->num = (double)p->i;
		break;
	case YTREE_FLOAT:
		if (!isfinite(p->num))
			return cfg_fail_loc(x, &v->loc, "%s is not a usable parameter value: a policy compares NaN and infinity false or true with every number; write a finite number",
					    v->text);
		p->type = PARAM_NUMBER;
		break;
	case YTREE_STRING:
		p->type = PARAM_STRING;
		break;
	}
	return 0;
}

static int param_tree(struct config_ctx *x, const struct ytree_node *n, struct param *p)
{
	const struct ytree_node *c;
	size_t i = 0, old;
	struct config_val v;

	if (n->kind == YTREE_SCALAR) {
		v = cfg_val_of_node(x, n);
		return param_scalar(x, &v, p);
	}
	p->type = n->kind == YTREE_MAP ? PARAM_MAP : PARAM_LIST;
	p->items = n->n ? arena_calloc(x->a, n->n, sizeof(*p->items)) : NULL;
	if (n->n && !p->items)
		return cfg_oom(x);
	for (c = n->first; c; c = c->next, i++) {
		int rc;

		if (n->kind == YTREE_MAP) {
			p->items[i].key = arena_strdup(x->a, c->key->text);
			if (!p->items[i].key)
				return cfg_oom(x);
			old = ytree_path_push_key(&x->path, c->key->text);
		} else {
			old = ytree_path_push_index(&x->path, i);
		}
		rc = param_tree(x, c, &p->items[i]);
		ytree_path_pop(&x->path, old);
		if (rc)
			return -1;
		p->n_items = i + 1;
	}
	return 0;
}

static int parse_policy(struct config_ctx *x, const struct ytree_node *m)
{
	static const char *const keys[] = { "path", "params", "instructions", "memory", "timeout", NULL };
	struct config *c = x->c;
	const struct ytree_node *params;
	const char *path = NULL;
	size_t old;
	int rc;

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	x->policy = cfg_node_loc(x, m);
	if (cfg_field(x, m, "path", cfg_dec_string, &path, NULL, &x->policy_path) ||
	    cfg_field(x, m, "instructions", cfg_dec_int, &c->policy_instructions, &r_instructions, NULL) ||
	    cfg_field(x, m, "memory", dec_bytes, &c->policy_memory, &r_memory, NULL) ||
	    cfg_field(x, m, "timeout", dec_duration, &c->policy_timeout_ms, &r_timeout, NULL))
		return -1;
	if (path) {
		c->policy_path = cfg_resolve_path(x, path, true, &x->policy_path);
		if (!c->policy_path)
			return -1;
	}
	params = cfg_map_get(m, "params");
	if (!params)
		return 0;
	old = ytree_path_push_key(&x->path, "params");
	rc = cfg_expect_kind(x, params, YTREE_MAP);
	if (!rc)
		rc = param_tree(x, params, &c->params);
	ytree_path_pop(&x->path, old);
	return rc;
}

/* ---- safety, intervals ---- */

/* What a config without safety.do_not_disrupt_annotations honours: the
 * Cluster Autoscaler's and Karpenter's opt-outs. */
static const struct config_optout default_optouts[] = {
	{ "cluster-autoscaler.kubernetes.io/scale-down-disabled", "true", false },
	{ "karpenter.sh/do-not-disrupt", "true", false },
	{ "karpenter.sh/do-not-disrupt", "true", true },
};

#define OPTOUT_VALUE_MAX 256

/* safety.do_not_disrupt_annotations: a list of {node: KEY} or {pod: KEY},
 * each with an optional value ("true"); [] is none. */
static int parse_optouts(struct config_ctx *x, const struct ytree_node *l)
{
	static const char *const keys[] = { "node", "pod", "value", NULL };
	struct config_optout *o;
	const struct ytree_node *c;
	size_t i = 0, j;
	int rc = 0;

	if (cfg_expect_kind(x, l, YTREE_SEQ))
		return -1;
	if (l->n > CONFIG_MAX_OPTOUTS)
		return cfg_fail_node(x, l, "more than %d entries", CONFIG_MAX_OPTOUTS);
	o = arena_calloc(x->a, l->n + 1, sizeof(*o));
	if (!o)
		return cfg_oom(x);
	for (c = l->first; c && !rc; c = c->next, i++) {
		size_t old = ytree_path_push_index(&x->path, i);
		const char *node = NULL, *pod = NULL;
		struct config_loc kl, vl;
		char buf[64], why[160];

		memset(&kl, 0, sizeof(kl));
		memset(&vl, 0, sizeof(vl));
		o[i].value = "true";
		rc = cfg_expect_kind(x, c, YTREE_MAP) || cfg_check_keys(x, c, keys) ||
		     cfg_field(x, c, "node", cfg_dec_string, &node, NULL, &kl) ||
		     cfg_field(x, c, "pod", cfg_dec_string, &pod, NULL, &kl) ||
		     cfg_field(x, c, "value", cfg_dec_string, &o[i].value, NULL, &vl) ? -1 : 0;
		if (!rc && !node && !pod)
			rc = cfg_fail_node(x, c, "name the annotation with node: KEY (on the node) or pod: KEY (on a pod running on it)");
		if (!rc && node && pod)
			rc = cfg_fail_node(x, c, "node and pod in one entry: write one entry for each");
		if (!rc) {
			o[i].key = node ? node : pod;
			o[i].pod = pod != NULL;
			if (!k8sname_valid_qualified_name(o[i].key, why, sizeof(why)))
				rc = cfg_fail_loc(x, &kl, "invalid annotation key %s: %s",
						  cfg_quoted(o[i].key, buf, sizeof(buf)), why);
		}
		if (!rc && (!*o[i].value || strlen(o[i].value) > OPTOUT_VALUE_MAX ||
			    !cfg_ok_printable(o[i].value)))
			rc = cfg_fail_loc(x, &vl, "expected a non-empty annotation value (up to %d printable characters), got %s",
					  OPTOUT_VALUE_MAX, cfg_quoted(o[i].value, buf, sizeof(buf)));
		for (j = 0; !rc && j < i; j++)
			if (o[j].pod == o[i].pod && !strcmp(o[j].key, o[i].key) &&
			    !strcmp(o[j].value, o[i].value))
				rc = cfg_fail_node(x, c, "the same as entry %zu", j);
		ytree_path_pop(&x->path, old);
	}
	x->c->optouts = o;
	x->c->n_optouts = i;
	return rc;
}

int cfg_section(struct config_ctx *x, const struct ytree_node *root, const char *key,
		   int (*parse)(struct config_ctx *, const struct ytree_node *));

static int parse_safety(struct config_ctx *x, const struct ytree_node *m)
{
	static const char *const keys[] = { "max_nodes_total", "max_scale_down_per_round",
					    "max_actions_per_round", "max_concurrent_drains",
					    "protected_pod_selector", "max_cache_staleness",
					    "do_not_disrupt_annotations", "evicted_pods_must_fit", NULL };
	static const struct config_range actions = { 1, PLAN_MAX_ACTIONS };
	static const struct config_range drains = { 1, 1000000 };
	struct config *c = x->c;

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	return cfg_section(x, m, "do_not_disrupt_annotations", parse_optouts) ||
	       cfg_field(x, m, "max_nodes_total", cfg_dec_int, &c->max_nodes_total, &r_count,
			 &x->max_nodes_total) ||
	       cfg_field(x, m, "max_scale_down_per_round", cfg_dec_int,
			 &c->max_scale_down_per_round, &r_count, NULL) ||
	       cfg_field(x, m, "max_actions_per_round", cfg_dec_int,
			 &c->max_actions_per_round, &actions, NULL) ||
	       cfg_field(x, m, "max_concurrent_drains", cfg_dec_int,
			 &c->max_concurrent_drains, &drains, NULL) ||
	       cfg_field(x, m, "protected_pod_selector", cfg_dec_string,
			 &c->protected_pod_selector, NULL, &x->protected_sel) ||
	       cfg_field(x, m, "max_cache_staleness", dec_duration,
			 &c->max_cache_staleness_ms, &r_staleness, NULL) ||
	       cfg_field(x, m, "evicted_pods_must_fit", cfg_dec_bool, &c->evicted_pods_must_fit, NULL,
			 NULL) ? -1 : 0;
}

/* An endpoint override: http(s)://host[:port][/path], no user, query or fragment. */
bool cfg_ok_endpoint(const char *s)
{
	const char *host;

	if (!strncmp(s, "https://", 8))
		host = s + 8;
	else if (!strncmp(s, "http://", 7))
		host = s + 7;
	else
		return false;
	if (!*host || *host == '/' || strpbrk(host, "@?# \\"))
		return false;
	return cfg_ok_printable(s);
}

const struct config_str_rule cfg_rule_endpoint = { cfg_ok_endpoint, 512, "an endpoint URL: http:// or https://, a host, no user, query or fragment" };


/* provider.pricing: the cloud's prices and how long they are kept. */
static int parse_pricing(struct config_ctx *x, const struct ytree_node *m)
{
	static const char *const keys[] = { "enabled", "on_demand_ttl", "spot_ttl", NULL };
	static const struct config_range r_ttl = { 60 * SECOND, 7 * DAY };
	struct config *c = x->c;

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	return cfg_field(x, m, "enabled", cfg_dec_bool, &c->pricing_enabled, NULL, NULL) ||
	       cfg_field(x, m, "on_demand_ttl", dec_duration, &c->pricing_on_demand_ttl_ms, &r_ttl, NULL) ||
	       cfg_field(x, m, "spot_ttl", dec_duration, &c->pricing_spot_ttl_ms, &r_ttl, NULL) ? -1 : 0;
}

static int parse_provider(struct config_ctx *x, const struct ytree_node *m)
{
	static const char *const keys[] = { "kind", "qps", "burst", "read_qps", "read_burst",
					    LUASCALE_CLOUDS(CLOUD_KEY) "pricing", NULL };
	struct config *c = x->c;
	size_t ci;

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	for (ci = 0; ci < N_CLOUDS; ci++) {
		const struct ytree_node *n = cfg_map_get(m, clouds[ci]->kind);
		size_t old;
		int rc;

		if (!n)
			continue;
		old = ytree_path_push_key(&x->path, clouds[ci]->kind);
		x->provider_cloud[ci] = cfg_node_loc(x, n);
		rc = clouds[ci]->parse_section(x, n);
		ytree_path_pop(&x->path, old);
		if (rc)
			return -1;
	}
	return cfg_section(x, m, "pricing", parse_pricing) ||
	       cfg_field(x, m, "kind", cfg_dec_string, &c->provider_kind, NULL, &x->provider_kind) ||
	       cfg_field(x, m, "qps", dec_rate, &c->provider_qps, NULL, &x->provider_qps) ||
	       cfg_field(x, m, "burst", cfg_dec_int, &c->provider_burst, &r_burst, &x->provider_burst) ||
	       cfg_field(x, m, "read_qps", dec_rate, &c->provider_read_qps, NULL, NULL) ||
	       cfg_field(x, m, "read_burst", cfg_dec_int, &c->provider_read_burst, &r_burst, NULL) ? -1 : 0;
}

static int parse_provisioning(struct config_ctx *x, const struct ytree_node *m)
{
	static const char *const keys[] = { "max_provision_time", "backoff_initial", "backoff_max",
					    "drain_timeout", "bind_pods", NULL };
	struct config *c = x->c;

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	return cfg_field(x, m, "max_provision_time", dec_duration, &c->max_provision_ms, &r_provision, NULL) ||
	       cfg_field(x, m, "backoff_initial", dec_duration, &c->backoff_initial_ms, &r_backoff,
			 &x->backoff_initial) ||
	       cfg_field(x, m, "backoff_max", dec_duration, &c->backoff_max_ms, &r_backoff, &x->backoff_max) ||
	       cfg_field(x, m, "drain_timeout", dec_duration, &c->drain_timeout_ms, &r_drain, NULL) ||
	       cfg_field(x, m, "bind_pods", cfg_dec_bool, &c->bind_pods, NULL, NULL) ? -1 : 0;
}

static int parse_intervals(struct config_ctx *x, const struct ytree_node *m)
{
	static const char *const keys[] = { "reconcile", "batch_idle", "batch_max", "batch_new_pod",
					    "explain", NULL };
	struct config *c = x->c;

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	return cfg_field(x, m, "reconcile", dec_duration, &c->reconcile_interval_ms, &r_reconcile, &x->reconcile) ||
	       cfg_field(x, m, "batch_idle", dec_duration, &c->batch_idle_ms, &r_batch, &x->batch_idle) ||
	       cfg_field(x, m, "batch_max", dec_duration, &c->batch_max_ms, &r_batch, &x->batch_max) ||
	       cfg_field(x, m, "batch_new_pod", dec_duration, &c->batch_new_pod_ms, &r_batch,
			 &x->batch_new_pod) ||
	       cfg_field(x, m, "explain", dec_duration, &c->explain_interval_ms, &r_explain, NULL) ? -1 : 0;
}

/* ---- operations: log, status, events, reload ---- */

static const struct config_range r_status_interval = { SECOND, DAY };
static const struct config_range r_debounce = { 0, 60 * SECOND };

/* log.format: "text" or "json" into a bool (true: json). */
static int dec_log_format(struct config_ctx *x, const struct config_val *v, void *out, const void *arg)
{
	const char *f = NULL;

	(void)arg;
	if (val_string(x, v, &f))
		return -1;
	if (strcmp(f, "text") && strcmp(f, "json"))
		return cfg_bad(x, v, "a log format, \"text\" or \"json\"");
	*(bool *)out = strcmp(f, "json") == 0;
	return 0;
}

/* A Kubernetes namespace (a DNS label) or object name (a DNS subdomain). */
static int dec_k8s_name(struct config_ctx *x, const struct config_val *v, void *out, const void *arg)
{
	const char *s = NULL;
	bool label = arg != NULL;

	if (val_string(x, v, &s))
		return -1;
	if (label ? !k8sname_valid_dns_label(s) : !(strlen(s) <= MAX_NAME && k8sname_valid_dns_subdomain(s)))
		return cfg_bad(x, v, label ? "a namespace (lowercase letters, digits and '-', up to 63)"
			       : "an object name (lowercase letters, digits, '-' and '.', up to 253)");
	*(const char **)out = s;
	return 0;
}

/* log.level: debug, info, warn or error into an enum log_level (as int). */
static int dec_log_level(struct config_ctx *x, const struct config_val *v, void *out, const void *arg)
{
	static const char *const names[] = { "debug", "info", "warn", "error" };
	const char *f = NULL;
	size_t i;

	(void)arg;
	if (val_string(x, v, &f))
		return -1;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(f, names[i]) == 0) {
			*(int *)out = (int)i;
			return 0;
		}
	return cfg_bad(x, v, "a log level, \"debug\", \"info\", \"warn\" or \"error\"");
}

static int parse_log(struct config_ctx *x, const struct ytree_node *m)
{
	static const char *const keys[] = { "format", "level", NULL };

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	return cfg_field(x, m, "format", dec_log_format, &x->c->log_json, NULL, NULL) ||
	       cfg_field(x, m, "level", dec_log_level, &x->c->log_level, NULL, NULL) ? -1 : 0;
}

static int parse_status(struct config_ctx *x, const struct ytree_node *m)
{
	static const char *const keys[] = { "enabled", "namespace", "name", "interval", NULL };
	struct config *c = x->c;

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	return cfg_field(x, m, "enabled", cfg_dec_bool, &c->status_enabled, NULL, NULL) ||
	       cfg_field(x, m, "namespace", dec_k8s_name, &c->status_namespace, "label", NULL) ||
	       cfg_field(x, m, "name", dec_k8s_name, &c->status_name, NULL, NULL) ||
	       cfg_field(x, m, "interval", dec_duration, &c->status_interval_ms, &r_status_interval, NULL) ? -1 : 0;
}

static int parse_events(struct config_ctx *x, const struct ytree_node *m)
{
	static const char *const keys[] = { "enabled", NULL };

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	return cfg_field(x, m, "enabled", cfg_dec_bool, &x->c->events_enabled, NULL, NULL);
}

static int parse_reload(struct config_ctx *x, const struct ytree_node *m)
{
	static const char *const keys[] = { "watch", "debounce", NULL };
	struct config *c = x->c;

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	return cfg_field(x, m, "watch", cfg_dec_bool, &c->reload_watch, NULL, NULL) ||
	       cfg_field(x, m, "debounce", dec_duration, &c->reload_debounce_ms, &r_debounce, NULL) ? -1 : 0;
}

static int env_operations(struct config_ctx *x)
{
	struct config *c = x->c;

	return cfg_env_field(x, "LUASCALE_LOG_FORMAT", dec_log_format, &c->log_json, NULL, NULL) ||
	       cfg_env_field(x, "LUASCALE_LOG_LEVEL", dec_log_level, &c->log_level, NULL, NULL) ||
	       cfg_env_field(x, "LUASCALE_STATUS_ENABLED", cfg_dec_bool, &c->status_enabled, NULL, NULL) ||
	       cfg_env_field(x, "LUASCALE_STATUS_NAMESPACE", dec_k8s_name, &c->status_namespace, "label", NULL) ||
	       cfg_env_field(x, "LUASCALE_STATUS_NAME", dec_k8s_name, &c->status_name, NULL, NULL) ||
	       cfg_env_field(x, "LUASCALE_STATUS_INTERVAL", dec_duration, &c->status_interval_ms, &r_status_interval, NULL) ||
	       cfg_env_field(x, "LUASCALE_EVENTS_ENABLED", cfg_dec_bool, &c->events_enabled, NULL, NULL) ||
	       cfg_env_field(x, "LUASCALE_RELOAD_WATCH", cfg_dec_bool, &c->reload_watch, NULL, NULL) ||
	       cfg_env_field(x, "LUASCALE_RELOAD_DEBOUNCE", dec_duration, &c->reload_debounce_ms, &r_debounce, NULL) ? -1 : 0;
}

/* ---- leader_election, server (running in the cluster) ---- */

static const struct config_range r_lease = { SECOND, DAY };

static int parse_leader_election(struct config_ctx *x, const struct ytree_node *m)
{
	static const char *const keys[] = { "enabled", "namespace", "name", "lease_duration",
					    "renew_deadline", "retry_period", NULL };
	struct config *c = x->c;

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	return cfg_field(x, m, "enabled", cfg_dec_bool, &c->leader_election, NULL, &x->le_enabled) ||
	       cfg_field(x, m, "namespace", cfg_dec_string, &c->lease_namespace, NULL, &x->le_namespace) ||
	       cfg_field(x, m, "name", cfg_dec_string, &c->lease_name, NULL, &x->le_name) ||
	       cfg_field(x, m, "lease_duration", dec_duration, &c->lease_duration_ms, &r_lease, &x->le_duration) ||
	       cfg_field(x, m, "renew_deadline", dec_duration, &c->renew_deadline_ms, &r_lease, &x->le_renew) ||
	       cfg_field(x, m, "retry_period", dec_duration, &c->retry_period_ms, &r_lease, &x->le_retry) ? -1 : 0;
}

static int parse_server(struct config_ctx *x, const struct ytree_node *m)
{
	static const char *const keys[] = { "listen", "enabled", NULL };
	struct config *c = x->c;

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	return cfg_field(x, m, "listen", cfg_dec_string, &c->server_listen, NULL, &x->server_listen) ||
	       cfg_field(x, m, "enabled", cfg_dec_bool, &c->server_enabled, NULL, NULL) ? -1 : 0;
}

static int env_incluster(struct config_ctx *x)
{
	struct config *c = x->c;

	return cfg_env_field(x, "LUASCALE_LEADER_ELECTION_ENABLED", cfg_dec_bool, &c->leader_election, NULL, &x->le_enabled) ||
	       cfg_env_field(x, "LUASCALE_LEADER_ELECTION_NAMESPACE", cfg_dec_string, &c->lease_namespace, NULL, &x->le_namespace) ||
	       cfg_env_field(x, "LUASCALE_LEADER_ELECTION_NAME", cfg_dec_string, &c->lease_name, NULL, &x->le_name) ||
	       cfg_env_field(x, "LUASCALE_SERVER_LISTEN", cfg_dec_string, &c->server_listen, NULL, &x->server_listen) ||
	       cfg_env_field(x, "LUASCALE_SERVER_ENABLED", cfg_dec_bool, &c->server_enabled, NULL, NULL) ? -1 : 0;
}


/* leader_election: enabled defaults to in_cluster; the Lease's names are
 * valid; lease_duration > renew_deadline > retry_period. server.listen
 * is an address. */
static int check_incluster(struct config_ctx *x)
{
	struct config *c = x->c;
	char host[256];
	int port;

	if (!cfg_loc_set(&x->le_enabled))
		c->leader_election = c->in_cluster;
	if (!k8sname_valid_dns_label(c->lease_namespace))
		return cfg_fail_loc(x, cfg_loc_set(&x->le_namespace) ? &x->le_namespace : &x->root,
				    "leader_election.namespace \"%.64s\" is not a namespace name (a DNS label)",
				    c->lease_namespace);
	if (strlen(c->lease_name) > 253 || !k8sname_valid_dns_subdomain(c->lease_name))
		return cfg_fail_loc(x, cfg_loc_set(&x->le_name) ? &x->le_name : &x->root,
				    "leader_election.name \"%.64s\" is not a Lease name (a DNS subdomain)",
				    c->lease_name);
	if (c->lease_duration_ms % SECOND)
		return cfg_fail_loc(x, &x->le_duration, "lease_duration must be whole seconds (a Lease counts seconds)");
	if (c->renew_deadline_ms >= c->lease_duration_ms)
		return cfg_fail_loc(x, cfg_loc_set(&x->le_renew) ? &x->le_renew : &x->le_duration,
				    "renew_deadline (%lldms) must be shorter than lease_duration (%lldms): a leader must stop acting before its Lease can be taken",
				    (long long)c->renew_deadline_ms, (long long)c->lease_duration_ms);
	if (c->retry_period_ms >= c->renew_deadline_ms)
		return cfg_fail_loc(x, cfg_loc_set(&x->le_retry) ? &x->le_retry : &x->le_renew,
				    "retry_period (%lldms) must be shorter than renew_deadline (%lldms)",
				    (long long)c->retry_period_ms, (long long)c->renew_deadline_ms);
	if (httpserver_parse_listen(c->server_listen, host, sizeof(host), &port, NULL) < 0)
		return cfg_fail_loc(x, cfg_loc_set(&x->server_listen) ? &x->server_listen : &x->root,
				    "server.listen \"%.64s\": want HOST:PORT, :PORT or [IPV6]:PORT (port 0-65535)",
				    c->server_listen);
	return 0;
}

int cfg_section(struct config_ctx *x, const struct ytree_node *root, const char *key,
		   int (*parse)(struct config_ctx *, const struct ytree_node *))
{
	const struct ytree_node *n = cfg_map_get(root, key);
	size_t old;
	int rc;

	if (!n)
		return 0;
	old = ytree_path_push_key(&x->path, key);
	rc = parse(x, n);
	ytree_path_pop(&x->path, old);
	return rc;
}

static int parse_root(struct config_ctx *x, const struct ytree_node *root)
{
	static const char *const keys[] = { "cluster", "node_groups", "policy", "safety",
					    "disruption", "intervals", "provider", "provisioning",
					    "log", "status", "events", "reload",
					    "leader_election", "server", NULL };

	if (!root || ytree_is_null(root))
		return 0; /* an empty document: every default */
	x->root.line = root->line;
	x->root.col = root->col;
	if (cfg_expect_kind(x, root, YTREE_MAP) || cfg_check_keys(x, root, keys))
		return -1;
	return cfg_section(x, root, "cluster", parse_cluster) ||
	       cfg_section(x, root, "node_groups", parse_groups) ||
	       cfg_section(x, root, "policy", parse_policy) ||
	       cfg_section(x, root, "safety", parse_safety) ||
	       cfg_section(x, root, "disruption", parse_disruption) ||
	       cfg_section(x, root, "intervals", parse_intervals) ||
	       cfg_section(x, root, "provider", parse_provider) ||
	       cfg_section(x, root, "provisioning", parse_provisioning) ||
	       cfg_section(x, root, "log", parse_log) || cfg_section(x, root, "status", parse_status) ||
	       cfg_section(x, root, "events", parse_events) || cfg_section(x, root, "reload", parse_reload) ||
	       cfg_section(x, root, "leader_election", parse_leader_election) ||
	       cfg_section(x, root, "server", parse_server) ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* Environment overrides                                               */

static int env_cluster_policy(struct config_ctx *x)
{
	static const struct config_range actions = { 1, PLAN_MAX_ACTIONS };
	static const struct config_range drains = { 1, 1000000 };
	struct config *c = x->c;
	const char *kc = NULL, *pp = NULL;

	if (cfg_env_field(x, "LUASCALE_CLUSTER_KUBECONFIG", cfg_dec_string, &kc, NULL, &x->kubeconfig) ||
	    cfg_env_field(x, "LUASCALE_CLUSTER_CONTEXT", cfg_dec_string, &c->context, NULL, &x->context) ||
	    cfg_env_field(x, "LUASCALE_CLUSTER_IN_CLUSTER", cfg_dec_bool, &c->in_cluster, NULL, &x->in_cluster) ||
	    cfg_env_field(x, "LUASCALE_CLUSTER_WRITE_QPS", dec_write_rate, &c->write_qps, NULL, NULL) ||
	    cfg_env_field(x, "LUASCALE_CLUSTER_WRITE_BURST", cfg_dec_int, &c->write_burst, &r_burst, NULL) ||
	    cfg_env_field(x, "LUASCALE_CLUSTER_SYNC_TIMEOUT", dec_duration, &c->sync_timeout_ms, &r_sync, NULL) ||
	    cfg_env_field(x, "LUASCALE_SAFETY_MAX_CACHE_STALENESS", dec_duration, &c->max_cache_staleness_ms, &r_staleness, NULL) ||
	    cfg_env_field(x, "LUASCALE_POLICY_PATH", cfg_dec_string, &pp, NULL, &x->policy_path) ||
	    cfg_env_field(x, "LUASCALE_POLICY_INSTRUCTIONS", cfg_dec_int, &c->policy_instructions, &r_instructions, NULL) ||
	    cfg_env_field(x, "LUASCALE_POLICY_MEMORY", dec_bytes, &c->policy_memory, &r_memory, NULL) ||
	    cfg_env_field(x, "LUASCALE_POLICY_TIMEOUT", dec_duration, &c->policy_timeout_ms, &r_timeout, NULL) ||
	    cfg_env_field(x, "LUASCALE_SAFETY_MAX_NODES_TOTAL", cfg_dec_int, &c->max_nodes_total, &r_count, &x->max_nodes_total) ||
	    cfg_env_field(x, "LUASCALE_SAFETY_MAX_SCALE_DOWN_PER_ROUND", cfg_dec_int, &c->max_scale_down_per_round, &r_count, NULL) ||
	    cfg_env_field(x, "LUASCALE_SAFETY_MAX_ACTIONS_PER_ROUND", cfg_dec_int, &c->max_actions_per_round, &actions, NULL) ||
	    cfg_env_field(x, "LUASCALE_SAFETY_MAX_CONCURRENT_DRAINS", cfg_dec_int, &c->max_concurrent_drains, &drains, NULL) ||
	    cfg_env_field(x, "LUASCALE_SAFETY_PROTECTED_POD_SELECTOR", cfg_dec_string, &c->protected_pod_selector, NULL, &x->protected_sel) ||
	    cfg_env_field(x, "LUASCALE_SAFETY_EVICTED_PODS_MUST_FIT", cfg_dec_bool, &c->evicted_pods_must_fit, NULL, NULL) ||
	    cfg_env_field(x, "LUASCALE_INTERVALS_RECONCILE", dec_duration, &c->reconcile_interval_ms, &r_reconcile, &x->reconcile) ||
	    cfg_env_field(x, "LUASCALE_INTERVALS_BATCH_IDLE", dec_duration, &c->batch_idle_ms, &r_batch, &x->batch_idle) ||
	    cfg_env_field(x, "LUASCALE_INTERVALS_BATCH_MAX", dec_duration, &c->batch_max_ms, &r_batch, &x->batch_max) ||
	    cfg_env_field(x, "LUASCALE_INTERVALS_BATCH_NEW_POD", dec_duration, &c->batch_new_pod_ms, &r_batch,
			  &x->batch_new_pod) ||
	    cfg_env_field(x, "LUASCALE_INTERVALS_EXPLAIN", dec_duration, &c->explain_interval_ms, &r_explain, NULL) ||
	    cfg_env_field(x, "LUASCALE_PROVIDER_KIND", cfg_dec_string, &c->provider_kind, NULL, &x->provider_kind) ||
	    cfg_env_field(x, "LUASCALE_PROVIDER_QPS", dec_rate, &c->provider_qps, NULL, &x->provider_qps) ||
	    cfg_env_field(x, "LUASCALE_PROVIDER_BURST", cfg_dec_int, &c->provider_burst, &r_burst, &x->provider_burst) ||
	    cfg_env_field(x, "LUASCALE_PROVIDER_READ_QPS", dec_rate, &c->provider_read_qps, NULL, NULL) ||
	    cfg_env_field(x, "LUASCALE_PROVIDER_READ_BURST", cfg_dec_int, &c->provider_read_burst, &r_burst, NULL) ||
	    cfg_env_field(x, "LUASCALE_PROVISIONING_MAX_PROVISION_TIME", dec_duration, &c->max_provision_ms, &r_provision, NULL) ||
	    cfg_env_field(x, "LUASCALE_PROVISIONING_BACKOFF_INITIAL", dec_duration, &c->backoff_initial_ms, &r_backoff, &x->backoff_initial) ||
	    cfg_env_field(x, "LUASCALE_PROVISIONING_BACKOFF_MAX", dec_duration, &c->backoff_max_ms, &r_backoff, &x->backoff_max) ||
	    cfg_env_field(x, "LUASCALE_PROVISIONING_DRAIN_TIMEOUT", dec_duration, &c->drain_timeout_ms, &r_drain, NULL) ||
	    cfg_env_field(x, "LUASCALE_PROVISIONING_BIND_PODS", cfg_dec_bool, &c->bind_pods, NULL, NULL))
		return -1;
	/* paths from the environment are relative to the working directory */
	if (kc && !(c->kubeconfig = cfg_resolve_path(x, kc, false, &x->kubeconfig)))
		return -1;
	if (pp && !(c->policy_path = cfg_resolve_path(x, pp, false, &x->policy_path)))
		return -1;
	return 0;
}

/* Every cloud's LUASCALE_PROVIDER_<CLOUD>_*, whatever provider.kind says
 * (a variable of another cloud is known, and checked, but unused). */
static int env_clouds(struct config_ctx *x)
{
	size_t ci;

	for (ci = 0; ci < N_CLOUDS; ci++)
		if (clouds[ci]->env(x))
			return -1;
	return 0;
}

/* "LUASCALE_NODE_GROUPS_" + NAME upper-cased, '-' and '.' as '_'. */
static void group_env_name(const char *group, char *out, size_t outlen)
{
	size_t i, n = strlen(ENV_PREFIX_GROUPS);

	snprintf(out, outlen, "%s", ENV_PREFIX_GROUPS);
	for (i = 0; group[i] && n + 1 < outlen; i++)
		out[n++] = group[i] == '-' || group[i] == '.' ? '_' : upper(group[i]);
	out[n] = '\0';
}

static const char *const group_settings[] = { "_PRICE_PER_HOUR", "_MIN", "_MAX", NULL };

static int env_group(struct config_ctx *x, size_t gi)
{
	struct node_group *g = &x->c->groups[gi];
	struct group_meta *gm = &x->gm[gi];
	char var[160];
	size_t base;
	int64_t v;

	const char *name;

	group_env_name(g->name, var, sizeof(var));
	base = strlen(var);
	snprintf(var + base, sizeof(var) - base, "_MIN");
	v = g->min;
	if (!(name = arena_strdup(x->tmp, var)))
		return cfg_oom(x);
	if (cfg_env_field(x, name, cfg_dec_int, &v, &cfg_range_group_size, &gm->min))
		return -1;
	g->min = (int)v;
	snprintf(var + base, sizeof(var) - base, "_MAX");
	v = g->max;
	if (!(name = arena_strdup(x->tmp, var)))
		return cfg_oom(x);
	if (cfg_env_field(x, name, cfg_dec_int, &v, &cfg_range_group_size, &gm->max))
		return -1;
	if (gm->max.var)
		gm->max_set = true;
	g->max = (int)v;
	snprintf(var + base, sizeof(var) - base, "_PRICE_PER_HOUR");
	if (!(name = arena_strdup(x->tmp, var)))
		return cfg_oom(x);
	return cfg_env_field(x, name, dec_number, &g->price_per_hour, NULL, NULL);
}

/* With a listable environment: every LUASCALE_NODE_GROUPS_* variable must
 * name exactly one group and a known setting. */
static int env_check_group_vars(struct config_ctx *x)
{
	const char *const *p;
	size_t plen = strlen(ENV_PREFIX_GROUPS);

	for (p = x->env.envp; *p; p++) {
		const char *eq = strchr(*p, '='), *const *s;
		size_t len, slen = 0, i, matches = 0, first = 0;
		char var[160], gname[160];

		if (strncmp(*p, ENV_PREFIX_GROUPS, plen) || !eq)
			continue;
		len = (size_t)(eq - *p);
		snprintf(var, sizeof(var), "%.*s", (int)len, *p);
		for (s = group_settings; *s; s++) {
			slen = strlen(*s);
			if (len > plen + slen && !strcmp(var + len - slen, *s))
				break;
		}
		if (!*s)
			return errbuf_set(x->err, "%s: unknown node group setting; expected LUASCALE_NODE_GROUPS_<NAME>_MIN, _MAX or _PRICE_PER_HOUR",
					  var);
		for (i = 0; i < x->c->n_groups; i++) {
			group_env_name(x->c->groups[i].name, gname, sizeof(gname));
			if (strlen(gname) == len - slen && !strncmp(gname, var, len - slen)) {
				if (matches++ == 0)
					first = i;
				else
					return errbuf_set(x->err, "%s: ambiguous: both node groups \"%s\" and \"%s\" have this name in the environment",
							  var, x->c->groups[first].name,
							  x->c->groups[i].name);
			}
		}
		if (!matches) {
			char list[256];
			size_t n = 0;

			list[0] = '\0';
			for (i = 0; i < x->c->n_groups; i++) {
				int k = snprintf(list + n, sizeof(list) - n, "%s%s",
						 n ? ", " : "", x->c->groups[i].name);

				if (k < 0 || (size_t)k >= sizeof(list) - n)
					break;
				n += (size_t)k;
			}
			return errbuf_set(x->err, "%s: there is no node group named %.*s (node groups: %s)",
					  var, (int)(len - slen - plen), var + plen,
					  x->c->n_groups ? list : "none");
		}
	}
	return 0;
}

/* Sets top-level parameter 'key' (matched without regard to case) from
 * environment variable 'var'. */
static int env_set_param(struct config_ctx *x, const char *key, const char *var)
{
	struct param *params = &x->c->params, *p = NULL, *items;
	const char *text = env_get(&x->env, var);
	struct config_val v;
	size_t i;

	if (!text)
		return 0;
	for (i = 0; i < params->n_items; i++)
		if (!strcasecmp(params->items[i].key, key))
			p = &params->items[i];
	if (!p) {
		items = arena_calloc(x->a, params->n_items + 1, sizeof(*items));
		if (!items)
			return cfg_oom(x);
		if (params->n_items)
			memcpy(items, params->items, params->n_items * sizeof(*items));
		params->items = items;
		p = &items[params->n_items++];
		p->key = arena_strdup(x->a, key);
		if (!p->key)
			return cfg_oom(x);
	}
	var = arena_strdup(x->tmp, var);
	if (!var)
		return cfg_oom(x);
	v = val_of_env(var, text);
	p->items = NULL;
	p->n_items = 0;
	return param_scalar(x, &v, p);
}

static int env_params(struct config_ctx *x)
{
	size_t plen = strlen(ENV_PREFIX_PARAMS), i;
	char key[128], var[160];

	if (x->env.envp) {
		const char *const *p;

		for (p = x->env.envp; *p; p++) {
			const char *eq = strchr(*p, '=');
			size_t len;

			if (strncmp(*p, ENV_PREFIX_PARAMS, plen) || !eq)
				continue;
			len = (size_t)(eq - *p);
			if (len >= sizeof(var))
				return errbuf_set(x->err, "%.*s...: variable name too long", 40, *p);
			snprintf(var, sizeof(var), "%.*s", (int)len, *p);
			if (len == plen)
				return errbuf_set(x->err, "%s: the parameter name is missing (LUASCALE_POLICY_PARAMS_<KEY>)", var);
			for (i = plen; i < len; i++)
				key[i - plen] = lower(var[i]);
			key[len - plen] = '\0';
			if (env_set_param(x, key, var))
				return -1;
		}
		return 0;
	}
	/* lookups only: the parameters the file has */
	for (i = 0; i < x->c->params.n_items; i++) {
		const char *k = x->c->params.items[i].key;
		size_t j, n = strlen(k);

		if (plen + n >= sizeof(var))
			continue;
		memcpy(var, ENV_PREFIX_PARAMS, plen);
		for (j = 0; j < n; j++)
			var[plen + j] = upper(k[j]);
		var[plen + n] = '\0';
		if (env_set_param(x, k, var))
			return -1;
	}
	return 0;
}

/*
 * LUASCALE_* variables that are not configuration: read by the command line,
 * the Lua host, the build or the tests. Whoever adds a getenv("LUASCALE_...")
 * that is not a config override adds its name here; config overrides need
 * nothing, as every name env_get() looks up is known.
 */
static const char *const env_not_config[] = {
	"LUASCALE_CONFIG",        /* the CLI's --config default */
	"LUASCALE_LUA_DIR",       /* where the Lua library is (policy/host.c) */
	"LUASCALE_SHARE_DIR",     /* bundled scenarios and policies (cli/simulate.c) */
	"LUASCALE_SOURCE_DIR",    /* the source tree, set for the specs by CTest */
	"LUASCALE_SANITIZE",      /* scripts/setup.sh, CI */
	"LUASCALE_TSAN",          /* scripts/setup.sh, CI */
	"LUASCALE_FUZZ",          /* the fuzz build */
	"LUASCALE_TESTS",         /* the build: tests on or off */
	"LUASCALE_TEST_VERBOSE",  /* unit tests' extra output */
	"LUASCALE_SIM_AWS_IMDS",  /* luascale sim's AWS env file: its metadata service, */
	"LUASCALE_SIM_AWS_CONTAINER_URI",   /* container credentials */
	"LUASCALE_SIM_AWS_CONTAINER_TOKEN", /* and their token (for tests) */
	"LUASCALE_SIM_GCE_ENDPOINT",  /* luascale sim's GCE env file: its compute endpoint */
	"LUASCALE_SIM_GCE_TOKEN_URI", /* and token endpoint */
	"LUASCALE_SIM_AZURE_ARM_ENDPOINT", /* luascale sim's Azure env file: its ARM root */
	NULL,
};

/* Distance from 'var' to the closest variable that a mistyped prefix
 * (LUASCALE_NODE_GROUP_W_MAX, LUASCALE_POLICY_PARAM_X) was meant to be:
 * 'prefix' followed by the rest of 'var'. Fills 'out'; large when none. */
static size_t prefix_guess(const char *var, const char *prefix, char *out, size_t outlen)
{
	size_t plen = strlen(prefix), vlen = strlen(var), k, best = (size_t)-1;
	char head[128];

	for (k = plen > 2 ? plen - 2 : 0; k <= plen + 2 && k < vlen && k < sizeof(head); k++) {
		size_t d;

		memcpy(head, var, k);
		head[k] = '\0';
		d = edit_distance(head, prefix);
		if (d < best && d <= 2) {
			best = d;
			snprintf(out, outlen, "%s%s", prefix, var + k);
		}
	}
	return best;
}

/* With a listable environment: a LUASCALE_* variable that no override
 * looked up, and that is not one of env_not_config, is an error naming the
 * closest known name. A typo must not leave a setting at its default. */
static int env_check_unknown(struct config_ctx *x)
{
	const struct env *e = &x->env;
	const char *const *p;
	size_t plen = strlen(ENV_PREFIX), i;

	for (p = e->envp; *p; p++) {
		const char *eq = strchr(*p, '='), *best = NULL;
		char var[160], guess[200], alt[200];
		size_t len, d, bestd = (size_t)-1;
		bool known = false;

		if (!eq || strncasecmp(*p, ENV_PREFIX, plen))
			continue;
		len = (size_t)(eq - *p);
		if (len >= sizeof(var))
			return errbuf_set(x->err, "%.*s...: unknown variable (not a luascale setting)", 40, *p);
		snprintf(var, sizeof(var), "%.*s", (int)len, *p);
		if (!strncmp(var, ENV_PREFIX_GROUPS, strlen(ENV_PREFIX_GROUPS)) ||
		    !strncmp(var, ENV_PREFIX_PARAMS, strlen(ENV_PREFIX_PARAMS)))
			continue; /* checked by env_check_group_vars and env_params */
		for (i = 0; i < e->n_seen && !known; i++)
			known = !strcmp(var, e->seen[i]);
		for (i = 0; env_not_config[i] && !known; i++)
			known = !strcmp(var, env_not_config[i]);
		if (known)
			continue;
		for (i = 0; i < e->n_seen; i++)
			if ((d = edit_distance(var, e->seen[i])) < bestd) {
				bestd = d;
				best = e->seen[i];
			}
		for (i = 0; env_not_config[i]; i++)
			if ((d = edit_distance(var, env_not_config[i])) < bestd) {
				bestd = d;
				best = env_not_config[i];
			}
		guess[0] = '\0';
		if ((d = prefix_guess(var, ENV_PREFIX_GROUPS, alt, sizeof(alt))) < bestd ||
		    (d = prefix_guess(var, ENV_PREFIX_PARAMS, alt, sizeof(alt))) < bestd) {
			bestd = d;
			snprintf(guess, sizeof(guess), "%s", alt);
			best = guess;
		}
		if (best && (bestd <= 3 || bestd * 3 <= len))
			return errbuf_set(x->err, "%s: unknown variable (did you mean %s?); luascale refuses LUASCALE_* variables it does not know, so that a typo cannot leave a setting at its default",
					  var, best);
		return errbuf_set(x->err, "%s: unknown variable; luascale refuses LUASCALE_* variables it does not know (the settings are listed in docs/configuration.md)",
				  var);
	}
	return 0;
}

static int apply_env(struct config_ctx *x)
{
	size_t i;

	if (!x->env.envp && !x->env.fn)
		return 0;
	if (env_cluster_policy(x) || env_clouds(x) || env_operations(x) || env_incluster(x))
		return -1;
	if (x->env.envp && env_check_group_vars(x))
		return -1;
	for (i = 0; i < x->c->n_groups; i++)
		if (env_group(x, i))
			return -1;
	if (env_params(x))
		return -1;
	return x->env.envp ? env_check_unknown(x) : 0;
}

/* ------------------------------------------------------------------ */
/* Checks across fields, after the environment                         */

bool cfg_loc_set(const struct config_loc *l)
{
	return l->path || l->var;
}

/* The kinds providers/registry.c makes: "sim" and the clouds of this
 * build, listed here so that what reads a config does not link every cloud
 * (tests, benches, the Lua module); test_registry checks the two agree. */
static const char *const provider_kinds[] = { "sim", LUASCALE_CLOUDS(CLOUD_KEY) NULL };

/* provider.kind is known (x->cloud_index: its cloud), and the provider sections
 * match it; then the cloud's own checks. */
static int check_provider(struct config_ctx *x)
{
	struct config *c = x->c;
	const struct config_cloud *cloud;
	size_t i;

	for (i = 0; i < N_CLOUDS && strcmp(c->provider_kind, clouds[i]->kind); i++)
		;
	x->cloud_index = i;
	cloud = clouds[i]; /* NULL past the last */
	if (*c->provider_kind && !cloud && strcmp(c->provider_kind, "sim")) {
		const char *hint = suggest(c->provider_kind, provider_kinds);
		const char *const *k;
		char buf[64], list[256];
		size_t len = 0;

		list[0] = '\0';
		for (k = provider_kinds; *k && len < sizeof(list); k++)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", len ? ", " : "", *k);
		return cfg_fail_loc(x, cfg_loc_set(&x->provider_kind) ? &x->provider_kind : &x->root,
				    "provider.kind %s is not a provider of this build (known: %s)%s%s%s",
				    cfg_quoted(c->provider_kind, buf, sizeof(buf)), list,
				    hint ? "; did you mean \"" : "", hint ? hint : "", hint ? "\"?" : "");
	}
	for (i = 0; i < N_CLOUDS; i++)
		if (clouds[i] != cloud && cfg_loc_set(&x->provider_cloud[i]))
			return cfg_fail_loc(x, &x->provider_cloud[i],
					    "provider.%s is set, but provider.kind is %s%s%s: set kind: %s, or remove the section",
					    clouds[i]->kind, *c->provider_kind ? "\"" : "not set", c->provider_kind,
					    *c->provider_kind ? "\"" : "", clouds[i]->kind);
	for (i = 0; i < c->n_groups; i++) {
		size_t j;

		for (j = 0; j < N_CLOUDS; j++)
			if (clouds[j] != cloud && cfg_loc_set(&x->gm[i].cloud[j]))
				return cfg_fail_loc(x, &x->gm[i].cloud[j], "%s %s: section needs provider.kind: %s",
						    strchr("aeiou", clouds[j]->kind[0]) ? "an" : "a",
						    clouds[j]->kind, clouds[j]->kind);
		c->group_extra[i].min_set = x->gm[i].min_set || x->gm[i].min.var;
		c->group_extra[i].max_set = x->gm[i].max_set;
		c->group_extra[i].template_set = x->gm[i].template_set;
	}
	if (!cloud)
		return 0;
	/* a cloud's own limits on its calls, unless the config writes them */
	if (cloud->default_qps > 0 && !cfg_loc_set(&x->provider_qps))
		c->provider_qps = cloud->default_qps;
	if (cloud->default_burst > 0 && !cfg_loc_set(&x->provider_burst))
		c->provider_burst = cloud->default_burst;
	return cloud->check ? cloud->check(x) : 0;
}

/* The config, its arena and the key path, for a cloud's readers. */
struct config *cfg_config(struct config_ctx *x)
{
	return x->c;
}

struct arena *cfg_arena(struct config_ctx *x)
{
	return x->a;
}

struct ytree_path *cfg_path(struct config_ctx *x)
{
	return &x->path;
}

void *cfg_scratch(struct config_ctx *x, const struct config_cloud *cloud, size_t size)
{
	size_t ci;

	for (ci = 0; ci < N_CLOUDS && clouds[ci] != cloud; ci++)
		;
	if (!x->scratch[ci])
		x->scratch[ci] = arena_alloc(x->tmp, size);
	return x->scratch[ci];
}

const struct config_loc *cfg_group_loc(struct config_ctx *x, size_t i)
{
	return &x->gm[i].node;
}

const struct config_loc *cfg_group_section_loc(struct config_ctx *x, size_t i)
{
	const struct config_loc *l = &x->gm[i].cloud[x->cloud_index];

	return cfg_loc_set(l) ? l : &x->gm[i].node;
}

static int check_all(struct config_ctx *x)
{
	struct config *c = x->c;
	const struct config_cloud *cloud;
	const struct config_loc *where;
	struct errbuf se;
	int64_t sum = 0;
	size_t i;

	if (c->in_cluster && (*c->kubeconfig || *c->context)) {
		where = *c->kubeconfig ? &x->kubeconfig : &x->context;
		return cfg_fail_loc(x, where, "in_cluster is true, so kubeconfig and context must not be set: choose one way to reach the cluster");
	}
	if (!c->in_cluster && !(x->flags & CONFIG_OFFLINE) && (!*c->kubeconfig || !*c->context)) {
		const char *missing = !*c->kubeconfig ? "kubeconfig" : "context";

		return cfg_fail_loc(x, cfg_loc_set(&x->cluster) ? &x->cluster : &x->root,
				    "%s%s is required unless in_cluster is true; luascale never falls back to a kubeconfig's current-context, on purpose: acting on the wrong cluster cannot be undone (set it here or with LUASCALE_CLUSTER_%s)",
				    cfg_loc_set(&x->cluster) ? "" : "cluster.", missing,
				    !*c->kubeconfig ? "KUBECONFIG" : "CONTEXT");
	}
	if (!*c->policy_path && !(x->flags & CONFIG_OFFLINE))
		return cfg_fail_loc(x, cfg_loc_set(&x->policy) ? &x->policy : &x->root,
				    "%spath is required: the Lua policy to run (or set LUASCALE_POLICY_PATH)",
				    cfg_loc_set(&x->policy) ? "" : "policy.");

	if (check_provider(x) < 0)
		return -1;
	cloud = clouds[x->cloud_index];
	for (i = 0; i < c->n_groups; i++) {
		struct node_group *g = &c->groups[i];
		struct group_meta *gm = &x->gm[i];
		/* a cloud describes new nodes, and may say a group's max (an
		 * Auto Scaling group's, a scale set's "max" tag) */
		bool from_cloud = cloud && cloud->max_from_cloud && cloud->max_from_cloud(&c->group_extra[i]);

		if (!gm->template_set && !cloud)
			return cfg_fail_loc(x, &gm->node, "template is required (the allocatable resources of a new node of group \"%s\")",
					    g->name);
		if (!gm->max_set && !from_cloud)
			return cfg_fail_loc(x, &gm->node, "max is required (the largest number of nodes of group \"%s\")",
					    g->name);
		if (!gm->max_set)
			g->max = g->min; /* the cloud's, in a live round; offline, no growth */
		if (gm->max_set && g->max < g->min)
			return cfg_fail_loc(x, gm->max.var || !gm->min.var ? &gm->max : &gm->min,
					    "max (%d) is less than min (%d) for node group \"%s\"",
					    g->max, g->min, g->name);
		sum += g->min;
	}
	if (c->max_nodes_total > 0 && sum > c->max_nodes_total)
		return cfg_fail_loc(x, &x->max_nodes_total,
				    "the node groups' minimums add up to %lld, more than max_nodes_total (%lld)",
				    (long long)sum, (long long)c->max_nodes_total);
	if (c->batch_idle_ms > c->batch_max_ms) {
		where = x->batch_idle.var ? &x->batch_idle : x->batch_max.var ? &x->batch_max :
			cfg_loc_set(&x->batch_idle) ? &x->batch_idle :
			cfg_loc_set(&x->batch_max) ? &x->batch_max : &x->root;
		return cfg_fail_loc(x, where, "batch_idle (%lldms) is longer than batch_max (%lldms)",
				    (long long)c->batch_idle_ms, (long long)c->batch_max_ms);
	}
	if (c->batch_new_pod_ms > c->batch_idle_ms) {
		/* set: a mistake (new pods would wait longer than other changes);
		 * the default under a shorter batch_idle: batch_idle */
		if (!x->batch_new_pod.var && !cfg_loc_set(&x->batch_new_pod))
			c->batch_new_pod_ms = c->batch_idle_ms;
		else
			return cfg_fail_loc(x, &x->batch_new_pod,
					    "batch_new_pod (%lldms) is longer than batch_idle (%lldms)",
					    (long long)c->batch_new_pod_ms, (long long)c->batch_idle_ms);
	}
	if (c->reconcile_interval_ms <= 0)
		return cfg_fail_loc(x, &x->reconcile, "the reconcile interval must be longer than 0s");
	if (c->backoff_initial_ms > c->backoff_max_ms) {
		char a[32], b[32];

		where = x->backoff_initial.var ? &x->backoff_initial : x->backoff_max.var ? &x->backoff_max :
			cfg_loc_set(&x->backoff_initial) ? &x->backoff_initial :
			cfg_loc_set(&x->backoff_max) ? &x->backoff_max : &x->root;
		return cfg_fail_loc(x, where, "backoff_initial (%s) is longer than backoff_max (%s): the backoff doubles from the first up to the second",
				    fmt_ms(c->backoff_initial_ms, a, sizeof(a)),
				    fmt_ms(c->backoff_max_ms, b, sizeof(b)));
	}
	if (*c->protected_pod_selector &&
	    label_selector_parse(c->arena, c->protected_pod_selector, &c->protected_pods, &se))
		return cfg_fail_loc(x, &x->protected_sel, "%s", se.msg);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Entry points                                                        */

static const char *dir_of(struct arena *a, const char *source)
{
	const char *slash = strrchr(source, '/');

	if (!slash)
		return ".";
	if (slash == source)
		return "/";
	return arena_strndup(a, source, (size_t)(slash - source));
}

/* FNV-1a of the text: whether a file read again says the same. */
static uint64_t text_hash(const char *text, size_t len)
{
	uint64_t h = 14695981039346656037ULL;
	size_t i;

	for (i = 0; text && i < len; i++)
		h = (h ^ (unsigned char)text[i]) * 1099511628211ULL;
	return h;
}

struct config *config_parse_opts(const char *yaml, size_t len, const char *source,
				 const struct config_opts *opts, struct errbuf *err)
{
	struct arena *a = arena_new(), *tmp = arena_new();
	struct config *c = NULL;
	struct ytree_node *root;
	struct config_ctx x;
	int rc = -1;

	if (!source)
		source = "<config>";
	if (!a || !tmp) {
		errbuf_set(err, "%s: out of memory", source);
		goto out;
	}
	c = arena_alloc(a, sizeof(*c));
	if (!c) {
		errbuf_set(err, "%s: out of memory", source);
		goto out;
	}
	c->arena = a;
	c->source = arena_strdup(a, source);
	c->text_hash = text_hash(yaml, len);
	c->base_dir = dir_of(a, source);
	c->kubeconfig = "";
	c->context = "";
	c->policy_path = "";
	c->params.type = PARAM_MAP;
	c->policy_instructions = DEFAULT_INSTRUCTIONS;
	c->policy_memory = DEFAULT_MEMORY;
	c->policy_timeout_ms = 10000;
	c->max_scale_down_per_round = 1;
	c->max_actions_per_round = 1000;
	c->max_concurrent_drains = 1;
	c->evicted_pods_must_fit = true;
	c->max_cache_staleness_ms = 30 * 1000;
	c->write_qps = 10;
	c->write_burst = 20;
	c->sync_timeout_ms = 30 * 1000;
	c->protected_pod_selector = "";
	c->optouts = default_optouts;
	c->n_optouts = sizeof(default_optouts) / sizeof(default_optouts[0]);
	c->disruption_budgets = &budget_default;
	c->n_disruption_budgets = 1;
	c->reconcile_interval_ms = 10000;
	c->batch_idle_ms = 1000;
	c->batch_max_ms = 10000;
	c->batch_new_pod_ms = 100;
	c->explain_interval_ms = 60 * SECOND;
	c->provider_kind = "";
	c->provider_qps = 5;
	c->provider_burst = 10;
	c->provider_read_qps = 20;
	c->provider_read_burst = 40;
	c->pricing_enabled = true;
	c->pricing_on_demand_ttl_ms = 12 * HOUR;
	c->pricing_spot_ttl_ms = HOUR;
	c->max_provision_ms = 15 * 60 * 1000;
	c->backoff_initial_ms = 5 * 60 * 1000;
	c->backoff_max_ms = 30 * 60 * 1000;
	c->drain_timeout_ms = 10 * 60 * 1000;
	c->status_enabled = true;
	c->log_level = LOG_INFO;
	c->status_namespace = "kube-system";
	c->status_name = "luascale-status";
	c->status_interval_ms = 10 * 1000;
	c->events_enabled = true;
	c->reload_watch = true;
	c->reload_debounce_ms = 1000;
	c->lease_namespace = "kube-system";
	c->lease_name = "luascale";
	c->lease_duration_ms = 15 * 1000;
	c->renew_deadline_ms = 10 * 1000;
	c->retry_period_ms = 2 * 1000;
	c->server_listen = ":8080";
	c->server_enabled = true;
	if (!c->source || !c->base_dir) {
		errbuf_set(err, "%s: out of memory", source);
		goto out;
	}

	memset(&x, 0, sizeof(x));
	x.c = c;
	x.a = a;
	x.tmp = tmp;
	x.src = c->source;
	x.err = err;
	x.root.line = 1;
	x.root.col = 1;
	if (opts) {
		x.env.fn = opts->getenv_fn;
		x.env.ud = opts->ud;
		x.env.envp = opts->envp;
		x.flags = opts->flags;
	}
	x.env.tmp = tmp;
	if (!yaml && len) {
		errbuf_set(err, "%s: no text", source);
		goto out;
	}
	if (ytree_parse(yaml ? yaml : "", len, c->source, tmp, &root, err) ||
	    parse_root(&x, root) || apply_env(&x) || check_all(&x) || check_incluster(&x) ||
	    resolve_budgets(&x))
		goto out;
	rc = 0;
out:
	arena_free(tmp);
	if (rc) {
		arena_free(a);
		return NULL;
	}
	return c;
}

struct config *config_parse(const char *yaml, size_t len, const char *source,
			    config_getenv_fn getenv_fn, void *ud, struct errbuf *err)
{
	struct config_opts o = { getenv_fn, ud, NULL, 0 };

	return config_parse_opts(yaml, len, source, &o, err);
}

struct config *config_load(const char *path, struct errbuf *err)
{
	return config_load_flags(path, 0, err);
}

struct config *config_load_flags(const char *path, unsigned flags, struct errbuf *err)
{
	struct config_opts o = { NULL, NULL, (const char *const *)environ, flags };
	struct buf text = BUF_INIT;
	struct config *c = NULL;

	if (buf_read_file(&text, path, CONFIG_MAX_SIZE, err) == 0)
		c = config_parse_opts(text.data ? text.data : "", text.len, path, &o, err);
	buf_free(&text);
	return c;
}

void config_free(struct config *c)
{
	if (c)
		arena_free(c->arena);
}

const struct param *param_get(const struct param *m, const char *key)
{
	size_t i;

	if (!m || m->type != PARAM_MAP)
		return NULL;
	for (i = 0; i < m->n_items; i++)
		if (!strcmp(m->items[i].key, key))
			return &m->items[i];
	return NULL;
}
