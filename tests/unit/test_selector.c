/*
 * Tests for objects.c and selector.c: label selector matching (Kubernetes
 * semantics for absent keys), the kubectl string form, PDB matching, the
 * small lookups and enum tables of objects.h and its equality of
 * constraints.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "arena.h"
#include "model.h"

static struct kv labels_web[] = {
	{"app", "web"},
	{"tier", "frontend"},
	{"kubernetes.io/arch", "amd64"},
	{"rank", "7"},
	{"empty", ""},
};
static const struct kvlist web = {labels_web, sizeof(labels_web) / sizeof(labels_web[0])};
static const struct kvlist none = {NULL, 0};

static struct arena *arena;

static int setup(void **state)
{
	(void)state;
	arena = arena_new();
	return arena ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	arena_free(arena);
	return 0;
}

/* Parses 'text' (must succeed) and returns whether it selects 'labels'. */
static bool sel(const char *text, const struct kvlist *labels)
{
	struct label_selector s;
	struct errbuf err = {{0}};

	if (label_selector_parse(arena, text, &s, &err) != 0)
		fail_msg("label_selector_parse(\"%s\") failed: %s", text, err.msg);
	return label_selector_matches(&s, labels);
}

static void bad(const char *text, const char *needle)
{
	struct label_selector s;
	struct errbuf err = {{0}};

	if (label_selector_parse(arena, text, &s, &err) == 0)
		fail_msg("label_selector_parse(\"%s\") accepted", text);
	if (!strstr(err.msg, needle))
		fail_msg("message for \"%s\" is \"%s\", want \"%s\" in it", text,
			 err.msg, needle);
}

static void test_kvlist_get(void **state)
{
	(void)state;
	assert_string_equal(kvlist_get(&web, "app"), "web");
	assert_string_equal(kvlist_get(&web, "empty"), "");
	assert_null(kvlist_get(&web, "App"));
	assert_null(kvlist_get(&none, "app"));
	assert_null(kvlist_get(NULL, "app"));
}

static void test_parse_forms(void **state)
{
	struct label_selector s;
	struct errbuf err = {{0}};

	(void)state;
	assert_int_equal(label_selector_parse(arena,
		" a = b , c==d,e!=f, g ,!h, i in (x, y ,z), j notin(w),k/l.m-n_o=p ",
		&s, &err), 0);
	assert_int_equal(s.n, 8);
	assert_string_equal(s.reqs[0].key, "a");
	assert_int_equal(s.reqs[0].op, SELECTOR_IN);
	assert_int_equal(s.reqs[0].n_values, 1);
	assert_string_equal(s.reqs[0].values[0], "b");
	assert_int_equal(s.reqs[1].op, SELECTOR_IN);
	assert_string_equal(s.reqs[1].values[0], "d");
	assert_int_equal(s.reqs[2].op, SELECTOR_NOT_IN);
	assert_string_equal(s.reqs[2].values[0], "f");
	assert_int_equal(s.reqs[3].op, SELECTOR_EXISTS);
	assert_string_equal(s.reqs[3].key, "g");
	assert_int_equal(s.reqs[3].n_values, 0);
	assert_int_equal(s.reqs[4].op, SELECTOR_DOES_NOT_EXIST);
	assert_string_equal(s.reqs[4].key, "h");
	assert_int_equal(s.reqs[5].op, SELECTOR_IN);
	assert_int_equal(s.reqs[5].n_values, 3);
	assert_string_equal(s.reqs[5].values[2], "z");
	assert_int_equal(s.reqs[6].op, SELECTOR_NOT_IN);
	assert_string_equal(s.reqs[6].values[0], "w");
	assert_string_equal(s.reqs[7].key, "k/l.m-n_o");

	/* the empty selector selects everything */
	assert_int_equal(label_selector_parse(arena, "  ", &s, &err), 0);
	assert_int_equal(s.n, 0);
	assert_true(label_selector_matches(&s, &none));
	assert_int_equal(label_selector_parse(arena, NULL, &s, &err), 0);
	assert_int_equal(s.n, 0);
	/* "a=" means the empty value */
	assert_int_equal(label_selector_parse(arena, "empty=", &s, &err), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.reqs[0].values[0], "");
}

static void test_matching(void **state)
{
	(void)state;
	assert_true(sel("app=web", &web));
	assert_true(sel("app==web,tier=frontend", &web));
	assert_false(sel("app=web,tier=backend", &web));
	assert_false(sel("app=api", &web));
	assert_true(sel("app!=api", &web));
	assert_false(sel("app!=web", &web));
	assert_true(sel("app", &web));
	assert_false(sel("missing", &web));
	assert_true(sel("!missing", &web));
	assert_false(sel("!app", &web));
	assert_true(sel("app in (api, web)", &web));
	assert_false(sel("app in (api)", &web));
	assert_true(sel("app notin (api)", &web));
	assert_false(sel("app notin (api,web)", &web));
	assert_true(sel("kubernetes.io/arch=amd64", &web));
	assert_true(sel("empty=", &web));
	assert_true(sel("empty", &web));
	/* Kubernetes: != and notin match when the key is absent */
	assert_true(sel("missing!=x", &web));
	assert_true(sel("missing notin (x)", &web));
	assert_false(sel("missing in (x)", &web));
	assert_false(sel("missing=x", &web));
	assert_true(sel("missing!=x", &none));
	assert_false(sel("app", &none));
	assert_true(sel("", &none));
}

static void test_gt_lt(void **state)
{
	const char *two[] = {"5"};
	const char *junk[] = {"x"};
	struct selector_req r = {"rank", SELECTOR_GT, two, 1};
	struct label_selector s = {&r, 1};

	(void)state;
	assert_true(label_selector_matches(&s, &web));   /* 7 > 5 */
	r.op = SELECTOR_LT;
	assert_false(label_selector_matches(&s, &web));
	r.key = "app";                                     /* "web" is no integer */
	assert_false(label_selector_matches(&s, &web));
	r.key = "missing";
	assert_false(label_selector_matches(&s, &web));
	r.key = "rank";
	r.values = junk;
	assert_false(label_selector_matches(&s, &web));
	r.n_values = 0;
	assert_false(label_selector_matches(&s, &web));
	assert_true(label_selector_matches(NULL, &web));
}

static void test_parse_errors(void **state)
{
	(void)state;
	bad("a=b,", "expected a label key at the end");
	bad(",a", "expected a label key at \",a\"");
	bad("a b", "expected an operator (=, ==, !=, in, notin) at \"b\"");
	bad("a gt (1)", "expected an operator");
	bad("a in x", "expected \"(\" at \"x\"");
	bad("a in (x", "expected \",\" or \")\" at the end");
	bad("a in (x y)", "expected \",\" or \")\" at \"y)\"");
	bad("a in ()", "empty value set for \"a\"");
	bad("a=b=c", "expected \",\" at \"=c\"");
	bad("a!b", "expected \"!=\"");
	bad("!a=b", "expected \",\" after \"!key\"");
	bad("!", "expected a label key");
	bad("-a=b", "invalid label key \"-a\"");
	bad("a/b/c=d", "invalid label key \"a/b/c\"");
	bad("Example.com/x=y", "invalid label key");
	bad("a=-b", "invalid label value \"-b\"");
	bad("a=b$", "invalid label value \"b$\"");
	bad("a in (x, -y)", "invalid label value \"-y\"");
	bad("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=b",
	    "invalid label key");
	bad("a=(b)", "expected \",\" at \"(b)\"");
}

static void test_pdb_matches(void **state)
{
	struct pod p;
	struct pdb b;
	struct errbuf err;

	(void)state;
	memset(&p, 0, sizeof(p));
	memset(&b, 0, sizeof(b));
	p.ns = "default";
	p.name = "web-1";
	p.labels = web;
	b.ns = "default";
	b.name = "web";
	assert_int_equal(label_selector_parse(arena, "app=web", &b.selector, &err), 0);
	assert_true(pdb_matches(&b, &p));
	b.ns = "other";
	assert_false(pdb_matches(&b, &p));
	b.ns = "default";
	assert_int_equal(label_selector_parse(arena, "app=api", &b.selector, &err), 0);
	assert_false(pdb_matches(&b, &p));
	b.selects_all = true;
	assert_true(pdb_matches(&b, &p));
	b.selects_all = false;
	b.selects_none = true;
	assert_false(pdb_matches(&b, &p));
}

static void test_enums(void **state)
{
	enum taint_effect e;
	struct res_ext ext[] = {{"nvidia.com/gpu", 4}, {"hugepages-2Mi", 2097152}};
	struct resources r = {.cpu_m = 1000, .ext = ext, .n_ext = 2};
	struct pod p;

	(void)state;
	assert_int_equal(taint_effect_parse("NoSchedule", &e), 0);
	assert_int_equal(e, TAINT_NO_SCHEDULE);
	assert_int_equal(taint_effect_parse("PreferNoSchedule", &e), 0);
	assert_int_equal(e, TAINT_PREFER_NO_SCHEDULE);
	assert_int_equal(taint_effect_parse("NoExecute", &e), 0);
	assert_int_equal(e, TAINT_NO_EXECUTE);
	assert_int_equal(taint_effect_parse("noschedule", &e), -1);
	assert_int_equal(taint_effect_parse("", &e), -1);
	assert_int_equal(taint_effect_parse(NULL, &e), -1);
	assert_string_equal(taint_effect_str(TAINT_NO_SCHEDULE), "NoSchedule");
	assert_string_equal(taint_effect_str(TAINT_PREFER_NO_SCHEDULE), "PreferNoSchedule");
	assert_string_equal(taint_effect_str(TAINT_NO_EXECUTE), "NoExecute");

	assert_string_equal(pod_phase_str(POD_PENDING), "Pending");
	assert_string_equal(pod_phase_str(POD_RUNNING), "Running");
	assert_string_equal(pod_phase_str(POD_SUCCEEDED), "Succeeded");
	assert_string_equal(pod_phase_str(POD_FAILED), "Failed");
	assert_string_equal(pod_phase_str(POD_UNKNOWN), "Unknown");
	memset(&p, 0, sizeof(p));
	p.phase = POD_RUNNING;
	assert_false(pod_finished(&p));
	p.phase = POD_SUCCEEDED;
	assert_true(pod_finished(&p));
	p.phase = POD_FAILED;
	assert_true(pod_finished(&p));
	p.phase = POD_UNKNOWN;
	assert_false(pod_finished(&p));

	assert_int_equal(resources_ext(&r, "nvidia.com/gpu"), 4);
	assert_int_equal(resources_ext(&r, "hugepages-2Mi"), 2097152);
	assert_int_equal(resources_ext(&r, "example.com/fpga"), 0);
	assert_int_equal(resources_ext(NULL, "nvidia.com/gpu"), 0);
}

/* The equality the packing cache's classes and the informer's change
 * detection use: field by field in order, NULL apart from "". */
/* The relations a pod brings (terms, spread, ports, claims) compare by
 * content: a change of any is a change the informer reports. */
static void test_relations_same(void **state)
{
	static const char *db[] = {"db"}, *db2[] = {"db"}, *web[] = {"web"};
	struct selector_req ra = {"app", SELECTOR_IN, db, 1}, rb = {"app", SELECTOR_IN, db2, 1};
	struct selector_req rw = {"app", SELECTOR_IN, web, 1};
	struct pod_term ta = {{&ra, 1}, false, NULL, 0, {NULL, 0}, false, "kubernetes.io/hostname", 0};
	struct pod_term tb = {{&rb, 1}, false, NULL, 0, {NULL, 0}, false, "kubernetes.io/hostname", 0};
	struct pod_term tz = {{&rb, 1}, false, NULL, 0, {NULL, 0}, false, "topology.kubernetes.io/zone", 0};
	struct pod_term tw = {{&rw, 1}, false, NULL, 0, {NULL, 0}, false, "kubernetes.io/hostname", 0};
	struct spread_constraint s1 = {1, 1, "zone", {&ra, 1}, false, true, false};
	struct spread_constraint s2 = {2, 1, "zone", {&ra, 1}, false, true, false};
	struct host_port h80 = {"0.0.0.0", 80, PORT_TCP}, h80u = {"0.0.0.0", 80, PORT_UDP};
	const char *c1[] = {"data-0"}, *c2[] = {"data-1"};
	struct pod a, b;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	assert_true(pod_relations_same(&a, &b));
	a.anti_terms = &ta, a.n_anti_terms = 1;
	assert_false(pod_relations_same(&a, &b));
	b.anti_terms = &tb, b.n_anti_terms = 1;
	assert_true(pod_relations_same(&a, &b)); /* by text */
	b.anti_terms = &tz;
	assert_false(pod_relations_same(&a, &b));
	b.anti_terms = &tw;
	assert_false(pod_relations_same(&a, &b));
	b.anti_terms = &tb;
	a.affinity_terms = &ta, a.n_affinity_terms = 1;
	assert_false(pod_relations_same(&a, &b));
	b.affinity_terms = &tb, b.n_affinity_terms = 1;
	a.spread = &s1, a.n_spread = 1;
	b.spread = &s2, b.n_spread = 1;
	assert_false(pod_relations_same(&a, &b));
	b.spread = &s1;
	a.host_ports = &h80, a.n_host_ports = 1;
	b.host_ports = &h80u, b.n_host_ports = 1;
	assert_false(pod_relations_same(&a, &b));
	b.host_ports = &h80;
	a.claims = c1, a.n_claims = 1;
	b.claims = c2, b.n_claims = 1;
	assert_false(pod_relations_same(&a, &b));
	b.claims = c1;
	assert_true(pod_relations_same(&a, &b));
	a.unmodelled = "spec.resourceClaims";
	assert_false(pod_relations_same(&a, &b));
}

static void test_same(void **state)
{
	static struct kv sel_a[] = {{"zone", "a"}, {"tier", "web"}};
	static struct kv sel_b[] = {{"zone", "a"}, {"tier", "web"}};
	static struct kv sel_swapped[] = {{"tier", "web"}, {"zone", "a"}};
	static struct kv sel_empty_value[] = {{"zone", "a"}, {"tier", ""}};
	static struct kv sel_null_value[] = {{"zone", "a"}, {"tier", NULL}};
	struct kvlist a = {sel_a, 2}, b = {sel_b, 2}, swapped = {sel_swapped, 2};
	struct kvlist empty_value = {sel_empty_value, 2}, null_value = {sel_null_value, 2};
	static const char *ab[] = {"a", "b"}, *ab2[] = {"a", "b"}, *ba[] = {"b", "a"};
	struct selector_req r1[] = {{"zone", SELECTOR_IN, ab, 2}, {"gpu", SELECTOR_DOES_NOT_EXIST, NULL, 0}};
	struct selector_req r2[] = {{"zone", SELECTOR_IN, ab2, 2}, {"gpu", SELECTOR_DOES_NOT_EXIST, NULL, 0}};
	struct selector_req r_order[] = {{"zone", SELECTOR_IN, ba, 2}, {"gpu", SELECTOR_DOES_NOT_EXIST, NULL, 0}};
	struct selector_req r_op[] = {{"zone", SELECTOR_NOT_IN, ab, 2}, {"gpu", SELECTOR_DOES_NOT_EXIST, NULL, 0}};
	struct selector_req r_empty_key[] = {{"", SELECTOR_EXISTS, NULL, 0}};
	struct selector_req r_null_key[] = {{NULL, SELECTOR_EXISTS, NULL, 0}};
	struct node_selector_term t1 = {r1, 2, NULL, 0}, t2 = {r2, 2, NULL, 0};
	struct node_selector_term t_order = {r_order, 2, NULL, 0}, t_fields = {NULL, 0, r1, 2};
	struct node_affinity aff1 = {&t1, 1}, aff2 = {&t2, 1}, aff_order = {&t_order, 1};
	struct node_affinity aff_fields = {&t_fields, 1}, aff_none = {NULL, 0};
	struct toleration tol1[] = {{"dedicated", "batch", TOLERATION_EQUAL, 0}};
	struct toleration tol2[] = {{"dedicated", "batch", TOLERATION_EQUAL, 0}};
	struct toleration tol_effect[] = {{"dedicated", "batch", TOLERATION_EQUAL, -1}};
	struct toleration tol_op[] = {{"dedicated", "batch", TOLERATION_EXISTS, 0}};
	struct toleration tol_all_empty[] = {{"", "", TOLERATION_EXISTS, -1}};
	struct toleration tol_all_null[] = {{NULL, "", TOLERATION_EXISTS, -1}};

	(void)state;
	assert_true(kvlist_same(&a, &b));
	assert_false(kvlist_same(&a, &swapped)); /* in the same order */
	assert_false(kvlist_same(&a, &empty_value));
	assert_false(kvlist_same(&empty_value, &null_value));
	assert_true(kvlist_same(&none, &none));
	assert_false(kvlist_same(&a, &none));

	assert_true(selector_reqs_same(r1, 2, r2, 2)); /* by text, not pointer */
	assert_false(selector_reqs_same(r1, 2, r2, 1));
	assert_false(selector_reqs_same(r1, 2, r_order, 2));
	assert_false(selector_reqs_same(r1, 2, r_op, 2));
	assert_false(selector_reqs_same(r_empty_key, 1, r_null_key, 1));

	assert_true(node_affinity_same(&aff1, &aff2));
	assert_false(node_affinity_same(&aff1, &aff_order));
	assert_false(node_affinity_same(&aff1, &aff_fields)); /* expressions are not fields */
	assert_false(node_affinity_same(&aff1, &aff_none));
	assert_true(node_affinity_same(&aff_none, &aff_none));

	assert_true(tolerations_same(tol1, 1, tol2, 1));
	assert_false(tolerations_same(tol1, 1, tol2, 0));
	assert_false(tolerations_same(tol1, 1, tol_effect, 1));
	assert_false(tolerations_same(tol1, 1, tol_op, 1));
	assert_false(tolerations_same(tol_all_empty, 1, tol_all_null, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kvlist_get),
		cmocka_unit_test(test_parse_forms),
		cmocka_unit_test(test_matching),
		cmocka_unit_test(test_gt_lt),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_pdb_matches),
		cmocka_unit_test(test_enums),
		cmocka_unit_test(test_same),
		cmocka_unit_test(test_relations_same),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
