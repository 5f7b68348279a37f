/*
 * Tests for topology.c beyond the kube-scheduler's tables (which run
 * through sched_fits_node()): what packings lean on — pods counted late
 * when a constraint first matches them, rollbacks that restore every
 * answer, template sites as spread domains while planning, planned nodes
 * that count through their template twin, a pod not judged against
 * itself, host port conflicts, and a first of its kind that waits for the
 * pod its affinity names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "topology.h"

#define HOST "kubernetes.io/hostname"
#define ZONE "topology.kubernetes.io/zone"

struct fixture_node {
	struct kv kv[2];
	struct kvlist labels;
};

static void node_labels(struct fixture_node *n, const char *host, const char *zone)
{
	n->kv[0] = (struct kv){HOST, host};
	n->kv[1] = (struct kv){ZONE, zone};
	n->labels = (struct kvlist){n->kv, host ? 2 : 1};
	if (!host) {
		n->kv[0] = (struct kv){ZONE, zone};
	}
}

/* A pod of namespace "prod" labelled app=<app>. */
struct fixture_pod {
	struct kv kv[1];
	const char *vals[1];
	struct selector_req req;
	struct pod_term term;
	struct spread_constraint sc;
	struct host_port hp;
	struct pod p;
};

static void pod_init(struct fixture_pod *f, const char *name, const char *app)
{
	memset(f, 0, sizeof(*f));
	f->kv[0] = (struct kv){"app", app};
	f->p.ns = "prod";
	f->p.name = name;
	f->p.labels = (struct kvlist){f->kv, 1};
	f->p.node = -1;
	f->vals[0] = app;
	f->req = (struct selector_req){"app", SELECTOR_IN, f->vals, 1};
}

/* Required anti-affinity against its own app on 'key'. */
static void pod_anti(struct fixture_pod *f, const char *key)
{
	f->term.selector = (struct label_selector){&f->req, 1};
	f->term.topology_key = key;
	f->p.anti_terms = &f->term;
	f->p.n_anti_terms = 1;
}

/* DoNotSchedule spread over 'key', maxSkew 1, over its own app. */
static void pod_spread(struct fixture_pod *f, const char *key)
{
	f->sc = (struct spread_constraint){1, 1, key, {&f->req, 1}, false, true, false};
	f->p.spread = &f->sc;
	f->p.n_spread = 1;
}

/* Required affinity to its own app on 'key' (so it may be the first). */
static void pod_affinity(struct fixture_pod *f, const char *key)
{
	f->term.selector = (struct label_selector){&f->req, 1};
	f->term.topology_key = key;
	f->p.affinity_terms = &f->term;
	f->p.n_affinity_terms = 1;
}

/* A pod with affinity to its own kind may be the first of it anywhere,
 * but not while a waiting pod its terms match, one without affinity of its
 * own, has yet to land; once it lands, only its domain takes the pod. */
static void test_first_of_kind_waits(void **state)
{
	struct fixture_node a, b;
	struct fixture_pod anchor, dep, dep2, other;
	struct pod base[4];
	uint32_t both[] = {0, 1}, deps[] = {1, 2}, others[] = {3, 1};
	struct topo *t = topo_new_empty(NULL, 0);
	char why[200];
	long sa, sb;

	(void)state;
	node_labels(&a, "a-1", "a");
	node_labels(&b, "b-1", "b");
	pod_init(&anchor, "anchor-0", "s2");
	pod_init(&dep, "dep-0", "s2");
	pod_affinity(&dep, ZONE);
	pod_init(&dep2, "dep-1", "s2");
	pod_affinity(&dep2, ZONE);
	base[0] = anchor.p;
	base[1] = dep.p;
	pod_init(&other, "other-0", "other");
	base[2] = dep2.p;
	base[3] = other.p;
	assert_non_null(t);
	sa = topo_add_site(t, TOPO_NODE, "a-1", &a.labels, NULL, 0);
	sb = topo_add_site(t, TOPO_NODE, "b-1", &b.labels, NULL, 0);
	/* nothing waits: the first of its kind goes anywhere */
	assert_int_equal(topo_check(t, &base[1], (size_t)sa, NULL, 0), SCHED_FITS);
	/* pods that all have the affinity wait for none of them */
	topo_set_waiting(t, base, deps, 2);
	assert_int_equal(topo_check(t, &base[1], (size_t)sa, NULL, 0), SCHED_FITS);
	/* the anchor waits: refused everywhere, naming it */
	topo_set_waiting(t, base, both, 2);
	assert_int_equal(topo_check(t, &base[1], (size_t)sa, why, sizeof(why)),
			 SCHED_POD_AFFINITY);
	assert_non_null(strstr(why, "waits for pending pod prod/anchor-0"));
	assert_string_equal(topo_refusal_key(t), ZONE);
	assert_int_equal(topo_check(t, &base[1], (size_t)sb, NULL, 0), SCHED_POD_AFFINITY);
	/* it lands in b: b takes the pod, a does not */
	assert_int_equal(topo_add_pod(t, (size_t)sb, &base[0]), 0);
	assert_int_equal(topo_check(t, &base[1], (size_t)sb, NULL, 0), SCHED_FITS);
	assert_int_equal(topo_check(t, &base[1], (size_t)sa, NULL, 0), SCHED_POD_AFFINITY);
	/* a waiting pod of another app is not waited for */
	assert_int_equal(topo_remove_pod(t, (size_t)sb, &base[0]), 0);
	topo_set_waiting(t, base, others, 2);
	assert_int_equal(topo_check(t, &base[1], (size_t)sa, NULL, 0), SCHED_FITS);
	/* cleared: no wait */
	topo_set_waiting(t, NULL, NULL, 0);
	assert_int_equal(topo_check(t, &base[1], (size_t)sa, NULL, 0), SCHED_FITS);
	topo_free(t);
}

static void pod_port(struct fixture_pod *f, const char *ip, int port, enum port_protocol proto)
{
	f->hp = (struct host_port){ip, port, proto};
	f->p.host_ports = &f->hp;
	f->p.n_host_ports = 1;
}

/* A plain pod counted while nothing matched it is found by a constraint
 * that arrives later. */
static void test_deferred_counted_when_matched(void **state)
{
	struct fixture_node a, b;
	struct fixture_pod x, p;
	struct topo *t = topo_new_empty(NULL, 0);
	long sa, sb;

	(void)state;
	node_labels(&a, "a-1", "a");
	node_labels(&b, "b-1", "b");
	pod_init(&x, "x-0", "x");
	pod_init(&p, "p-0", "x"); /* anti-affinity against app=x */
	pod_anti(&p, ZONE);
	p.kv[0].value = "p";
	assert_non_null(t);
	sa = topo_add_site(t, TOPO_NODE, "a-1", &a.labels, NULL, 0);
	sb = topo_add_site(t, TOPO_NODE, "b-1", &b.labels, NULL, 0);
	assert_int_equal(topo_add_pod(t, (size_t)sa, &x.p), 0);
	assert_int_equal(topo_check(t, &p.p, (size_t)sa, NULL, 0), SCHED_POD_ANTI_AFFINITY);
	assert_int_equal(topo_check(t, &p.p, (size_t)sb, NULL, 0), SCHED_FITS);
	/* and uncounted again */
	assert_int_equal(topo_remove_pod(t, (size_t)sa, &x.p), 0);
	assert_int_equal(topo_check(t, &p.p, (size_t)sa, NULL, 0), SCHED_FITS);
	assert_int_equal(topo_remove_pod(t, (size_t)sa, &x.p), -1);
	topo_free(t);
}

/* An existing pod's anti-affinity refuses the pod it selects, on its own
 * domain only; a pod checked on the node it is counted on is judged as
 * if it were not there. */
static void test_symmetry_and_self(void **state)
{
	struct fixture_node a, b;
	struct fixture_pod db0, db1;
	struct topo *t = topo_new_empty(NULL, 0);
	char why[200];
	long sa, sb;

	(void)state;
	node_labels(&a, "a-1", "a");
	node_labels(&b, "b-1", "b");
	pod_init(&db0, "db-0", "db");
	pod_anti(&db0, HOST);
	pod_init(&db1, "db-1", "db"); /* no terms of its own */
	sa = topo_add_site(t, TOPO_NODE, "a-1", &a.labels, NULL, 0);
	sb = topo_add_site(t, TOPO_NODE, "b-1", &b.labels, NULL, 0);
	db0.p.node = (int32_t)sa;
	assert_int_equal(topo_add_pod(t, (size_t)sa, &db0.p), 0);
	assert_true(topo_relevant(t, &db1.p));
	assert_int_equal(topo_check(t, &db1.p, (size_t)sa, why, sizeof(why)),
			 SCHED_EXISTING_ANTI_AFFINITY);
	assert_non_null(strstr(why, "prod/db-0"));
	assert_string_equal(topo_refusal_key(t), HOST);
	assert_int_equal(topo_check(t, &db1.p, (size_t)sb, NULL, 0), SCHED_FITS);
	/* db-0 where it is: fits (itself does not count) */
	assert_int_equal(topo_check(t, &db0.p, (size_t)sa, NULL, 0), SCHED_FITS);
	topo_free(t);
}

/* Template sites are zones to spread over only while planning; a
 * planned node counts in its twin's zone; a rollback restores it all. */
static void test_planning_twins_rollback(void **state)
{
	struct fixture_node a, tb, tc, pb;
	struct fixture_pod w0, w1, w2;
	struct topo *t = topo_new_empty(NULL, 0);
	long sa, stb, spb;
	size_t mark;

	(void)state;
	node_labels(&a, "a-1", "a");
	node_labels(&tb, NULL, "b");
	node_labels(&tc, NULL, "c");
	node_labels(&pb, "b-new-0", "b");
	pod_init(&w0, "w-0", "w");
	pod_init(&w1, "w-1", "w");
	pod_init(&w2, "w-2", "w");
	pod_spread(&w0, ZONE);
	pod_spread(&w1, ZONE);
	pod_spread(&w2, ZONE);
	sa = topo_add_site(t, TOPO_NODE, "a-1", &a.labels, NULL, 0);
	stb = topo_add_site(t, TOPO_TEMPLATE, "zone-b", &tb.labels, NULL, 0);
	assert_true(topo_add_site(t, TOPO_TEMPLATE, "zone-c", &tc.labels, NULL, 0) >= 0);
	topo_commit(t);
	assert_int_equal(topo_add_pod(t, (size_t)sa, &w0.p), 0);
	topo_commit(t);
	/* the scheduler sees one zone: a second replica there is fine */
	assert_int_equal(topo_check(t, &w1.p, (size_t)sa, NULL, 0), SCHED_FITS);
	/* planning, zones b and c are domains with none: not in a again */
	topo_set_planning(t, true);
	assert_int_equal(topo_check(t, &w1.p, (size_t)sa, NULL, 0), SCHED_TOPOLOGY_SPREAD);
	assert_string_equal(topo_refusal_key(t), ZONE);
	mark = topo_mark(t);
	spb = topo_add_planned(t, "b-new-0", &pb.labels, NULL, 0, stb);
	assert_true(spb >= 0);
	assert_int_equal(topo_check(t, &w1.p, (size_t)spb, NULL, 0), SCHED_FITS);
	assert_int_equal(topo_add_pod(t, (size_t)spb, &w1.p), 0);
	/* a=1, b=1, c=0: a third in b would make 2 > 1 */
	assert_int_equal(topo_check(t, &w2.p, (size_t)spb, NULL, 0), SCHED_TOPOLOGY_SPREAD);
	assert_int_equal(topo_rollback(t, mark), 0);
	assert_int_equal(topo_sites(t), 3);
	/* back: a=1, b=0, c=0 */
	assert_int_equal(topo_check(t, &w1.p, (size_t)sa, NULL, 0), SCHED_TOPOLOGY_SPREAD);
	topo_set_planning(t, false);
	assert_int_equal(topo_check(t, &w1.p, (size_t)sa, NULL, 0), SCHED_FITS);
	/* a planned node must name a template as its twin */
	assert_int_equal(topo_add_planned(t, "x", &pb.labels, NULL, 0, sa), -1);
	topo_free(t);
}

/* A drained node is no domain: the spread's least domain moves. */
static void test_disabled_site(void **state)
{
	struct fixture_node a, b;
	struct fixture_pod w0, w1;
	struct topo *t = topo_new_empty(NULL, 0);
	long sa, sb;

	(void)state;
	node_labels(&a, "a-1", "a");
	node_labels(&b, "b-1", "b");
	pod_init(&w0, "w-0", "w");
	pod_init(&w1, "w-1", "w");
	pod_spread(&w1, ZONE);
	sa = topo_add_site(t, TOPO_NODE, "a-1", &a.labels, NULL, 0);
	sb = topo_add_site(t, TOPO_NODE, "b-1", &b.labels, NULL, 0);
	assert_int_equal(topo_add_pod(t, (size_t)sa, &w0.p), 0);
	topo_commit(t);
	assert_int_equal(topo_check(t, &w1.p, (size_t)sa, NULL, 0), SCHED_TOPOLOGY_SPREAD);
	assert_int_equal(topo_disable_site(t, (size_t)sb), 0);
	assert_int_equal(topo_check(t, &w1.p, (size_t)sa, NULL, 0), SCHED_FITS);
	assert_int_equal(topo_rollback(t, 0), 0);
	assert_int_equal(topo_check(t, &w1.p, (size_t)sa, NULL, 0), SCHED_TOPOLOGY_SPREAD);
	topo_free(t);
}

/* Host ports: 0.0.0.0 conflicts with every IP, two IPs do not, nor two
 * protocols. */
static void test_host_ports(void **state)
{
	struct fixture_node a;
	struct fixture_pod held, any, other_ip, same_ip, udp;
	struct topo *t = topo_new_empty(NULL, 0);
	char why[200];
	long sa;

	(void)state;
	node_labels(&a, "a-1", "a");
	pod_init(&held, "ingress-0", "ingress");
	pod_port(&held, "10.0.0.1", 80, PORT_TCP);
	pod_init(&any, "any", "x");
	pod_port(&any, "0.0.0.0", 80, PORT_TCP);
	pod_init(&other_ip, "other", "x");
	pod_port(&other_ip, "10.0.0.2", 80, PORT_TCP);
	pod_init(&same_ip, "same", "x");
	pod_port(&same_ip, "10.0.0.1", 80, PORT_TCP);
	pod_init(&udp, "udp", "x");
	pod_port(&udp, "0.0.0.0", 80, PORT_UDP);
	sa = topo_add_site(t, TOPO_NODE, "a-1", &a.labels, NULL, 0);
	assert_int_equal(topo_add_pod(t, (size_t)sa, &held.p), 0);
	assert_int_equal(topo_check(t, &any.p, (size_t)sa, why, sizeof(why)), SCHED_HOST_PORTS);
	assert_non_null(strstr(why, "TCP/80"));
	assert_null(topo_refusal_key(t));
	assert_int_equal(topo_check(t, &other_ip.p, (size_t)sa, NULL, 0), SCHED_FITS);
	assert_int_equal(topo_check(t, &same_ip.p, (size_t)sa, NULL, 0), SCHED_HOST_PORTS);
	assert_int_equal(topo_check(t, &udp.p, (size_t)sa, NULL, 0), SCHED_FITS);
	topo_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deferred_counted_when_matched),
		cmocka_unit_test(test_symmetry_and_self),
		cmocka_unit_test(test_planning_twins_rollback),
		cmocka_unit_test(test_disabled_site),
		cmocka_unit_test(test_host_ports),
		cmocka_unit_test(test_first_of_kind_waits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
