/*
 * DaemonSets on a group's new nodes, as data (tests/data/daemonsets.json):
 * which DaemonSets run on a template (with the tolerations the DaemonSet
 * controller adds to every pod), what their pods take there (the running
 * pods' requests over the template's) and the host ports they hold there,
 * through sched_fits_group() and sched_pack(). Each case is one snapshot
 * built through the real path (snapshot_add_object, snapshot_set_groups,
 * snapshot_finish). Every mismatch is printed with its case; a malformed
 * case fails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "errbuf.h"
#include "model.h"
#include "quantity.h"
#include "sched.h"

#ifndef TEST_DATA_DIR
#define TEST_DATA_DIR "tests/data"
#endif

#define NOW 1714557600 /* 2024-05-01T10:00:00Z */
#define GROUP_LABEL "luascale.io/node-group"
#define MAX_GROUPS 16

static size_t failures;

__attribute__((format(printf, 2, 3)))
static void mismatch(const char *case_name, const char *fmt, ...)
{
	va_list ap;

	printf("FAIL %s: ", case_name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	failures++;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		fail_msg("cannot open %s", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static const cJSON *member(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

static const char *str(const cJSON *o, const char *key, const char *dflt)
{
	const cJSON *v = member(o, key);

	if (v && !cJSON_IsString(v))
		fail_msg("\"%s\" must be a string", key);
	return v ? v->valuestring : dflt;
}

/* Only the members listed (a typo must not pass silently). */
static void known_members(const cJSON *o, const char *what, const char *const *names)
{
	const cJSON *m;
	size_t i;

	if (!cJSON_IsObject(o))
		fail_msg("%s must be an object", what);
	cJSON_ArrayForEach(m, o) {
		for (i = 0; names[i]; i++)
			if (strcmp(m->string, names[i]) == 0)
				break;
		if (!names[i])
			fail_msg("%s: unknown member \"%s\"", what, m->string);
	}
}

static int64_t qty(const char *text, enum quantity_unit unit)
{
	struct errbuf err = {{0}};
	int64_t v;

	if (quantity_parse(text, unit, &v, &err) < 0)
		fail_msg("bad quantity: %s", err.msg);
	return v;
}

/* The groups of a case, with what their copies borrow until set. */
struct groups {
	struct node_group g[MAX_GROUPS];
	struct kv *labels[MAX_GROUPS];
	struct taint *taints[MAX_GROUPS];
	size_t n;
};

static void make_group(struct groups *G, const cJSON *j)
{
	static const char *const names[] = {"name", "cpu", "memory", "labels", "taints", NULL};
	const cJSON *labels = member(j, "labels"), *taints = member(j, "taints"), *m;
	struct node_group *g;
	struct kv *kv;
	size_t n = 1;

	known_members(j, "group", names);
	assert_true(G->n < MAX_GROUPS);
	g = &G->g[G->n];
	memset(g, 0, sizeof(*g));
	g->name = str(j, "name", NULL);
	assert_non_null(g->name);
	g->max = 100;
	g->price_per_hour = 0.1;
	g->target = -1;
	kv = calloc(1 + (size_t)cJSON_GetArraySize(labels), sizeof(*kv));
	assert_non_null(kv);
	kv[0] = (struct kv){GROUP_LABEL, g->name};
	cJSON_ArrayForEach(m, labels) {
		assert_true(cJSON_IsString(m));
		kv[n++] = (struct kv){m->string, m->valuestring};
	}
	G->labels[G->n] = kv;
	g->selector = (struct kvlist){kv, 1};
	g->tmpl.labels = (struct kvlist){kv, n};
	g->tmpl.allocatable.cpu_m = qty(str(j, "cpu", "4"), QUANTITY_MILLI);
	g->tmpl.allocatable.memory = qty(str(j, "memory", "8Gi"), QUANTITY_UNIT);
	g->tmpl.allocatable.pods = 110;
	if (taints) {
		struct taint *t = calloc((size_t)cJSON_GetArraySize(taints), sizeof(*t));

		assert_non_null(t);
		n = 0;
		cJSON_ArrayForEach(m, taints) {
			t[n].key = str(m, "key", NULL);
			t[n].value = str(m, "value", "");
			assert_non_null(t[n].key);
			assert_int_equal(taint_effect_parse(str(m, "effect", ""), &t[n].effect), 0);
			n++;
		}
		G->taints[G->n] = t;
		g->tmpl.taints = t;
		g->tmpl.n_taints = n;
	}
	G->n++;
}

static void groups_free(struct groups *G)
{
	size_t i;

	for (i = 0; i < G->n; i++) {
		free(G->labels[i]);
		free(G->taints[i]);
	}
}

static long group_ix(const struct snapshot *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n_groups; i++)
		if (strcmp(s->groups[i].name, name) == 0)
			return (long)i;
	fail_msg("no group %s", name);
	return -1;
}

/* "ns/name" */
static uint32_t pod_ix(const struct snapshot *s, const char *ref)
{
	const char *slash = strchr(ref, '/');
	size_t i, ns_len;

	assert_non_null(slash);
	ns_len = (size_t)(slash - ref);
	for (i = 0; i < s->n_pods; i++)
		if (strlen(s->pods[i].ns) == ns_len && strncmp(s->pods[i].ns, ref, ns_len) == 0 &&
		    strcmp(s->pods[i].name, slash + 1) == 0)
			return (uint32_t)i;
	fail_msg("no pod %s", ref);
	return 0;
}

static void check_overhead(const char *cname, const struct snapshot *s, const cJSON *overhead)
{
	static const char *const names[] = {"daemonsets", "cpu", "memory", "ext", NULL};
	const cJSON *o, *e;

	cJSON_ArrayForEach(o, overhead) {
		const struct node_group *g = &s->groups[group_ix(s, o->string)];
		const struct resources *r = &g->daemonset_requests;
		const cJSON *n = member(o, "daemonsets");
		int64_t cpu = qty(str(o, "cpu", "0"), QUANTITY_MILLI);
		int64_t mem = qty(str(o, "memory", "0"), QUANTITY_UNIT);
		size_t n_ext = 0;

		known_members(o, "overhead", names);
		if (!cJSON_IsNumber(n))
			fail_msg("%s: overhead.%s.daemonsets must be a number", cname, o->string);
		if (g->n_daemonsets != n->valueint)
			mismatch(cname, "group %s runs %d DaemonSets, want %d", g->name,
				 g->n_daemonsets, n->valueint);
		if (r->cpu_m != cpu || r->memory != mem)
			mismatch(cname, "group %s: DaemonSets request cpu %lldm memory %lld, want %lldm %lld",
				 g->name, (long long)r->cpu_m, (long long)r->memory, (long long)cpu,
				 (long long)mem);
		if (r->pods != g->n_daemonsets)
			mismatch(cname, "group %s: DaemonSets take %lld pods, want %d", g->name,
				 (long long)r->pods, g->n_daemonsets);
		cJSON_ArrayForEach(e, member(o, "ext")) {
			int64_t want = qty(e->valuestring, QUANTITY_UNIT);

			n_ext++;
			if (resources_ext(r, e->string) != want)
				mismatch(cname, "group %s: DaemonSets request %s %lld, want %lld", g->name,
					 e->string, (long long)resources_ext(r, e->string),
					 (long long)want);
		}
		if (r->n_ext != n_ext)
			mismatch(cname, "group %s: DaemonSets request %zu extended resources, want %zu",
				 g->name, r->n_ext, n_ext);
	}
}

static void check_fits(const char *cname, const struct snapshot *s, const cJSON *fits)
{
	static const char *const names[] = {"pod", "group", "fit", "reason", NULL};
	const cJSON *f;

	cJSON_ArrayForEach(f, fits) {
		const char *pod = str(f, "pod", NULL), *group = str(f, "group", NULL);
		const char *want = str(f, "fit", NULL), *reason = str(f, "reason", NULL);
		char detail[512];
		enum sched_fit got;

		known_members(f, "fits", names);
		assert_true(pod && group && want);
		got = sched_fits_group(s, &s->pods[pod_ix(s, pod)], (size_t)group_ix(s, group),
				       detail, sizeof(detail));
		if (strcmp(sched_fit_str(got), want) != 0)
			mismatch(cname, "%s on a new node of %s: %s (%s), want %s", pod, group,
				 sched_fit_str(got), detail, want);
		else if (reason && !strstr(detail, reason))
			mismatch(cname, "%s on a new node of %s: reason \"%s\", want it to hold \"%s\"",
				 pod, group, detail, reason);
	}
}

static void check_pack(const char *cname, const struct snapshot *s, const cJSON *packs)
{
	static const char *const names[] = {"group", "pods", "new_nodes", "unplaced", NULL};
	const cJSON *k, *p;

	cJSON_ArrayForEach(k, packs) {
		const char *group = str(k, "group", NULL);
		const cJSON *nn = member(k, "new_nodes"), *un = member(k, "unplaced");
		uint32_t pods[16];
		size_t n = 0;
		struct pack_result out;
		struct errbuf err = {{0}};

		known_members(k, "pack", names);
		assert_true(group && cJSON_IsNumber(nn) && cJSON_IsNumber(un));
		cJSON_ArrayForEach(p, member(k, "pods")) {
			assert_true(n < 16 && cJSON_IsString(p));
			pods[n++] = pod_ix(s, p->valuestring);
		}
		if (sched_pack(s, pods, n, (size_t)group_ix(s, group), -1, &out, &err) < 0)
			fail_msg("%s: sched_pack: %s", cname, err.msg);
		if (out.new_nodes != nn->valueint || (int)out.n_unplaced != un->valueint)
			mismatch(cname, "packing %zu pods onto %s: %d new nodes, %zu unplaced; want %d, %d",
				 n, group, out.new_nodes, out.n_unplaced, nn->valueint, un->valueint);
		pack_result_free(&out);
	}
}

static void run_case(const cJSON *c)
{
	static const char *const names[] = {"name", "groups", "objects", "overhead", "fits", "pack",
					    NULL};
	const char *cname = str(c, "name", NULL);
	struct snapshot *s = snapshot_new();
	struct errbuf err = {{0}};
	struct groups G;
	const cJSON *o;

	known_members(c, "case", names);
	assert_non_null(cname);
	assert_non_null(s);
	memset(&G, 0, sizeof(G));
	cJSON_ArrayForEach(o, member(c, "objects"))
		if (snapshot_add_object(s, o, NULL, &err) < 0)
			fail_msg("%s: %s", cname, err.msg);
	cJSON_ArrayForEach(o, member(c, "groups"))
		make_group(&G, o);
	if (snapshot_set_groups(s, G.g, G.n, &err) < 0)
		fail_msg("%s: snapshot_set_groups: %s", cname, err.msg);
	groups_free(&G); /* the snapshot holds its copies */
	if (snapshot_finish(s, NOW, &err) < 0)
		fail_msg("%s: snapshot_finish: %s", cname, err.msg);
	check_overhead(cname, s, member(c, "overhead"));
	check_fits(cname, s, member(c, "fits"));
	check_pack(cname, s, member(c, "pack"));
	snapshot_free(s);
}

static void test_daemonset_cases(void **state)
{
	char *text = slurp(TEST_DATA_DIR "/daemonsets.json");
	cJSON *doc = cJSON_Parse(text);
	const cJSON *c;
	size_t n = 0;

	(void)state;
	assert_non_null(doc);
	failures = 0;
	cJSON_ArrayForEach(c, member(doc, "cases")) {
		run_case(c);
		n++;
	}
	printf("%zu cases, %zu mismatches\n", n, failures);
	assert_true(n > 0);
	cJSON_Delete(doc);
	free(text);
	assert_int_equal(failures, 0);
}

/* A template tainted network-unavailable takes a DaemonSet's pod only
 * when the DaemonSet runs on the host network: the flag comes from the
 * template's spec.hostNetwork. */
static void test_host_network_flag(void **state)
{
	struct snapshot *s = snapshot_new();
	struct errbuf err = {{0}};
	cJSON *o;

	(void)state;
	o = cJSON_Parse("{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"metadata\":"
			"{\"namespace\":\"a\",\"name\":\"d\"},\"spec\":{\"template\":{\"spec\":"
			"{\"hostNetwork\":true,\"containers\":[{\"name\":\"c\"}]}}}}");
	assert_non_null(o);
	assert_int_equal(snapshot_add_object(s, o, NULL, &err), 0);
	cJSON_Delete(o);
	o = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
			"{\"namespace\":\"a\",\"name\":\"p\"},\"spec\":{\"hostNetwork\":\"yes\"}}");
	assert_non_null(o);
	assert_int_equal(snapshot_add_object(s, o, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "spec.hostNetwork: expected a boolean"));
	cJSON_Delete(o);
	assert_true(s->daemonsets[0].tmpl.flags & POD_HOST_NETWORK);
	snapshot_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_daemonset_cases),
		cmocka_unit_test(test_host_network_flag),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
