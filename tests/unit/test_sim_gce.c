/*
 * Tests for the simulator's GCE flavour (sim/clouds/cloud_gce.c) and the GCE
 * face's pieces (sim/clouds/gce_face.c): the scenario's gce: section and its
 * errors, RFC 1035 names, MIGs converging to targetSize with gce://
 * providerIDs, a stockout kept on lastAttempt and retried, deleteInstances,
 * requestId idempotency, slow operations, an image fault rolling a MIG to a
 * new instance template, and the JWT assertion checks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include "buf.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/clouds/aws_face.h"
#include "sim/clouds/gce_face.h"
#include "sim/world/scenario.h"
#include "test_sim_cloud.h"

#define S CLOCK_NS_PER_S
#define EXAMPLE SOURCE_DIR "/examples/scenarios/gce.yaml"

#define GROUPS SIM_TEST_GROUPS("6")

static void expect_error(const char *gce, const char *want)
{
	sim_test_expect_error(GROUPS, "gce", gce, want);
}

static void test_parse(void **state)
{
	struct errbuf err;
	struct sim_scenario *sc = sim_scenario_load(EXAMPLE, &err);
	const struct sim_gce_conf *g;

	(void)state;
	if (!sc)
		fail_msg("%s", err.msg);
	g = sim_scenario_cloud(sc, &sim_cloud_gce);
	assert_non_null(g);
	assert_null(sim_scenario_cloud(sc, &sim_cloud_aws));
	assert_string_equal(g->project, "sim-project");
	assert_int_equal(g->n_groups, 3);
	assert_false(g->groups[0].regional);
	assert_string_equal(g->groups[0].region, "us-central1");
	assert_true(g->groups[1].regional);
	assert_int_equal(g->groups[1].n_zones, 3);
	assert_string_equal(g->groups[2].machine_type, "a2-highgpu-1g");
	sim_scenario_free(sc);

	/* the scenarios without gce: stay as they were */
	sc = sim_scenario_load(SOURCE_DIR "/examples/scenarios/aws.yaml", &err);
	if (!sc)
		fail_msg("%s", err.msg);
	assert_null(sim_scenario_cloud(sc, &sim_cloud_gce));
	assert_non_null(sim_scenario_cloud(sc, &sim_cloud_aws));
	sim_scenario_free(sc);

	expect_error("  groups: {workers: {machine_type: m5.large}}\n",
		     "unknown machine type \"m5.large\"");
	expect_error("  groups: {workers: {region: us-central1}}\n", "zones is required");
	expect_error("  groups: {workers: {region: us-central1, zones: [europe-west1-b]}}\n",
		     "zone \"europe-west1-b\" is not in region us-central1");
	expect_error("  groups: {workers: {zone: us-central1-a, region: us-central1}}\n",
		     "a zonal MIG names a zone");
	expect_error("  groups: {nosuch: {}}\n", "no node group \"nosuch\"");
	expect_error("  project: X\n", "project \"X\"");
	expect_error("  throttle_status: 500\n", "out of range");
	expect_error("  service_account: nobody\n", "is not an email");
}

static void test_names(void **state)
{
	char code[48], msg[320];

	(void)state;
	assert_true(sim_gce_valid_name("gke-workers-a1b2"));
	assert_true(sim_gce_valid_name("a"));
	assert_false(sim_gce_valid_name(""));
	assert_false(sim_gce_valid_name("1abc"));
	assert_false(sim_gce_valid_name("abc-"));
	assert_false(sim_gce_valid_name("Abc"));
	assert_false(sim_gce_valid_name("a_b"));
	assert_false(sim_gce_valid_name("a234567890123456789012345678901234567890123456789012345678901234"));
	assert_true(sim_gce_valid_name("a23456789012345678901234567890123456789012345678901234567890123"));
	sim_gce_failure(PROVIDER_NO_CAPACITY, "projects/p/zones/z", code, sizeof(code), msg, sizeof(msg));
	assert_string_equal(code, "ZONE_RESOURCE_POOL_EXHAUSTED");
	sim_gce_failure(PROVIDER_QUOTA, "us-central1", code, sizeof(code), msg, sizeof(msg));
	assert_string_equal(code, "QUOTA_EXCEEDED");
	assert_non_null(sim_gce_find_mtype("e2-standard-2"));
	assert_int_equal(sim_gce_find_mtype("n1-standard-4")->memory_mb, 15360);
	assert_int_equal(sim_gce_find_mtype("a2-highgpu-1g")->gpus, 1);
	assert_null(sim_gce_find_mtype("m5.large"));
}

/* The world's GCE flavour. */
static struct sim_gce *gce_of(const struct run *r)
{
	return sim_world_flavour(r->w, &sim_cloud_gce);
}

static void run_start(struct run *r, const char *faults)
{
	char text[4096];

	snprintf(text, sizeof(text),
		 GROUPS
		 "cloud: {boot_delay: 10s, boot_jitter: 0s, launch_latency: 1s, shutdown_delay: 5s}\n"
		 "cluster: {register_delay: 1s}\n"
		 "initial_nodes: [{group: workers, count: 1}]\n"
		 "%s"
		 "gce:\n"
		 "  project: unit-project\n"
		 "  retry: 5s\n"
		 "  operation_time: 3s\n"
		 "  groups:\n"
		 "    workers: {region: us-central1, zones: [us-central1-a, us-central1-b], base_instance_name: pool}\n"
		 "    gpu: {zone: us-central1-c, machine_type: a2-highgpu-1g}\n",
		 faults);
	sim_test_run_text(r, text);
}

static void test_mig_converges(void **state)
{
	struct run r;
	struct sim_cloud *c;
	struct sim_gce *g;
	const struct sim_gce_mi *mi;
	struct sim_node_info info;
	struct errbuf err;
	const char *names[] = {"pool-abcd", "pool-efgh"};
	const char *bad[] = {"Pool"};
	size_t n, k;
	int za = 0, none, creating, deleting;

	(void)state;
	run_start(&r, "");
	c = r.w->cloud;
	g = gce_of(&r);
	executor_run_until(r.ex, 0);
	sim_cloud_lock(c);
	assert_int_equal(sim_gce_target_size(g, 0), 1);
	assert_int_equal(sim_gce_resize(g, 0, 4, &err), 0);
	assert_int_equal(sim_gce_create(g, 0, bad, 1, &err), -1);
	assert_non_null(strstr(err.msg, "Must be a match of regex"));
	assert_int_equal(sim_gce_create(g, 0, names, 2, &err), 0);
	assert_int_equal(sim_gce_target_size(g, 0), 6);
	assert_int_equal(sim_gce_create(g, 0, names, 1, &err), -1); /* taken */
	assert_non_null(strstr(err.msg, "already exists"));
	sim_gce_actions(g, 0, &none, &creating, &deleting);
	assert_int_equal(none, 1);
	assert_int_equal(creating, 5);
	sim_cloud_unlock(c);

	executor_run_until(r.ex, 30 * S);
	sim_cloud_lock(c);
	mi = sim_gce_managed(g, 0, &n);
	assert_int_equal(n, 6);
	for (k = 0; k < n; k++) {
		char want[160];

		assert_non_null(mi[k].in);
		assert_int_equal(mi[k].action, SIM_GCE_NONE);
		assert_string_equal(mi[k].in->node_name, mi[k].name);
		assert_memory_equal(mi[k].name, "pool-", 5);
		assert_int_equal(strlen(mi[k].name), 9);
		snprintf(want, sizeof(want), "gce://unit-project/%s/%s", mi[k].zone, mi[k].name);
		assert_string_equal(mi[k].in->provider_id, want);
		assert_string_equal(mi[k].in->instance_type, "e2-standard-4");
		za += strcmp(mi[k].zone, "us-central1-a") == 0;
		assert_int_equal(sim_cluster_node(r.w->cluster, mi[k].name, &info), 0);
		assert_true(info.ready);
	}
	assert_int_equal(za, 3); /* spread over the region's zones */
	assert_non_null(sim_cloud_find_instance(c, "pool-abcd"));

	/* deleteInstances: a stranger skipped, targetSize down by the rest */
	{
		const char *del[] = {"pool-abcd", "nope"};

		assert_int_equal(sim_gce_delete(g, 0, del, 2, false, &err), -1);
		assert_non_null(strstr(err.msg, "not a member"));
		assert_int_equal(sim_gce_target_size(g, 0), 6);
		assert_int_equal(sim_gce_delete(g, 0, del, 2, true, &err), 1);
		assert_int_equal(sim_gce_target_size(g, 0), 5);
	}
	sim_gce_actions(g, 0, &none, &creating, &deleting);
	assert_int_equal(deleting, 1);
	/* shrinking takes the newest */
	assert_int_equal(sim_gce_resize(g, 0, 2, &err), 0);
	assert_int_equal(sim_gce_resize(g, 0, 1001, &err), -1);
	sim_cloud_unlock(c);
	executor_run_until(r.ex, 60 * S);
	sim_cloud_lock(c);
	mi = sim_gce_managed(g, 0, &n);
	assert_int_equal(n, 2);
	assert_true(mi[0].in->preexisting); /* the oldest stay */
	for (k = 0; k < n; k++)
		assert_int_equal(mi[k].action, SIM_GCE_NONE);
	sim_cloud_unlock(c);
	run_end(&r);
}

static void test_stockout_on_last_attempt(void **state)
{
	struct run r;
	struct sim_cloud *c;
	struct sim_gce *g;
	const struct sim_gce_mi *mi;
	struct sim_gce_op op, again;
	struct errbuf err;
	size_t n;
	bool dup;

	(void)state;
	run_start(&r, "faults:\n"
		      "  - {kind: launch_error, group: gpu, until: 20s, rate: 1, error: no_capacity}\n");
	c = r.w->cloud;
	g = gce_of(&r);
	executor_run_until(r.ex, 0);
	sim_cloud_lock(c);
	sim_gce_op_new(g, 1, "compute.instanceGroupManagers.resize",
		       "0f8fad5b-d9cb-469f-a165-70867728950e", &op, &dup);
	assert_false(dup);
	assert_int_equal(sim_gce_resize(g, 1, 1, &err), 0);
	sim_gce_op_new(g, 1, "compute.instanceGroupManagers.resize",
		       "0f8fad5b-d9cb-469f-a165-70867728950e", &again, &dup);
	assert_true(dup);
	assert_string_equal(again.name, op.name);
	/* operation_time: RUNNING for 3s, then DONE with no error */
	assert_int_equal(sim_gce_op_status(g, &op), SIM_GCE_RUNNING);
	sim_cloud_unlock(c);

	executor_run_until(r.ex, 4 * S);
	sim_cloud_lock(c);
	assert_true(sim_gce_op_get(g, op.name, &again));
	assert_int_equal(sim_gce_op_status(g, &again), SIM_GCE_DONE);
	assert_string_equal(again.error_code, "");
	mi = sim_gce_managed(g, 1, &n);
	assert_int_equal(n, 1);
	assert_null(mi[0].in);
	assert_int_equal(mi[0].action, SIM_GCE_CREATING);
	assert_string_equal(mi[0].error_code, "ZONE_RESOURCE_POOL_EXHAUSTED");
	assert_non_null(strstr(mi[0].error_message, "projects/unit-project/zones/us-central1-c"));
	assert_int_equal(sim_gce_target_size(g, 1), 1);
	sim_cloud_unlock(c);

	/* retried every 5s; once the stockout is over the instance comes */
	executor_run_until(r.ex, 60 * S);
	sim_cloud_lock(c);
	mi = sim_gce_managed(g, 1, &n);
	assert_int_equal(n, 1);
	assert_non_null(mi[0].in);
	assert_int_equal(mi[0].action, SIM_GCE_NONE);
	assert_string_equal(mi[0].error_code, "");
	assert_string_equal(mi[0].in->instance_type, "a2-highgpu-1g");
	sim_cloud_unlock(c);
	run_end(&r);
}

/* ---- JWT assertions ---- */

/* The taint a node of the GCE face has, or NULL. */
/* An image fault rolls a MIG to a new instance template ("<template>-<image>");
 * its instances keep the template they were made from; a group that never
 * rolled keeps its template name, and the rolled name is found. */
static void test_image_rolls_template(void **state)
{
	struct run r;
	struct sim_cloud *c;
	struct sim_gce *g;
	const struct sim_gce_mi *mi;
	char t[256];
	size_t n;

	(void)state;
	run_start(&r, "faults: [{kind: image, group: workers, at: 1m, image: cos-v2}]\n");
	c = r.w->cloud;
	g = gce_of(&r);
	executor_run_until(r.ex, 30 * S);
	sim_cloud_lock(c);
	sim_gce_template_of(g, 0, NULL, t, sizeof(t));
	assert_string_equal(t, sim_gce_group(g, 0)->template_name);
	sim_cloud_unlock(c);
	executor_run_until(r.ex, 2 * 60 * S);
	sim_cloud_lock(c);
	sim_gce_template_of(g, 0, NULL, t, sizeof(t));
	assert_non_null(strstr(t, "-cos-v2"));
	assert_int_equal(strncmp(t, sim_gce_group(g, 0)->template_name, strlen(sim_gce_group(g, 0)->template_name)), 0);
	assert_int_equal(sim_gce_find_template(g, t), 0);
	mi = sim_gce_managed(g, 0, &n);
	assert_int_equal(n, 1);
	assert_non_null(mi[0].in);
	sim_gce_template_of(g, 0, mi[0].in->image, t, sizeof(t));
	assert_string_equal(t, sim_gce_group(g, 0)->template_name);
	sim_gce_template_of(g, 1, NULL, t, sizeof(t));
	assert_string_equal(t, sim_gce_group(g, 1)->template_name);
	sim_cloud_unlock(c);
	run_end(&r);
}

static const struct taint *taint_of(const struct snapshot *s, const char *key)
{
	size_t i, k;

	for (i = 0; i < s->n_nodes; i++)
		for (k = 0; k < s->nodes[i].n_taints; k++)
			if (strcmp(s->nodes[i].taints[k].key, key) == 0)
				return &s->nodes[i].taints[k];
	return NULL;
}

/* An interrupt fault's notice taints the node as GKE's handlers do, so
 * `luascale run` against the GCE face sees node.interruption "shutdown". */
static void test_interrupt_taints_the_node(void **state)
{
	const char *key = "cloud.google.com/impending-node-termination";
	struct run r;
	struct snapshot *s = NULL;
	struct errbuf err;
	const struct taint *t;

	(void)state;
	run_start(&r, "faults:\n  - {kind: interrupt, group: workers, at: 20s, count: 1, warning: 2m}\n");
	executor_run_until(r.ex, 19 * S);
	assert_int_equal(sim_cluster_snapshot(r.w->cluster, false, &s, &err), 0);
	assert_int_equal(s->n_nodes, 1);
	assert_null(taint_of(s, key));
	snapshot_free(s);
	executor_run_until(r.ex, 21 * S);
	assert_int_equal(sim_cluster_snapshot(r.w->cluster, false, &s, &err), 0);
	t = taint_of(s, key);
	assert_non_null(t);
	assert_int_equal(t->effect, TAINT_NO_SCHEDULE);
	snapshot_free(s);
	run_end(&r);
}

static void b64url(struct buf *out, const unsigned char *in, size_t len)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	uint32_t acc = 0;
	int bits = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		acc = (acc << 8) | in[i];
		bits += 8;
		while (bits >= 6) {
			bits -= 6;
			buf_append(out, &a[(acc >> bits) & 63], 1);
		}
	}
	if (bits > 0)
		buf_append(out, &a[(acc << (6 - bits)) & 63], 1);
}

/* header.claims.signature, signed by 'key'. */
static char *make_jwt(EVP_PKEY *key, const char *header, const char *claims)
{
	struct buf b = BUF_INIT;
	unsigned char sig[512];
	size_t sig_len = sizeof(sig);
	EVP_MD_CTX *md = EVP_MD_CTX_new();

	b64url(&b, (const unsigned char *)header, strlen(header));
	buf_puts(&b, ".");
	b64url(&b, (const unsigned char *)claims, strlen(claims));
	assert_int_equal(EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key), 1);
	assert_int_equal(EVP_DigestSign(md, sig, &sig_len, (unsigned char *)b.data, b.len), 1);
	EVP_MD_CTX_free(md);
	buf_puts(&b, ".");
	b64url(&b, sig, sig_len);
	return buf_take(&b);
}

static int verify(EVP_PKEY *key, EVP_PKEY *signer, const char *header, const char *claims,
		  struct errbuf *err)
{
	struct gce_jwt_want w = {"http://127.0.0.1:1/token", "sa@p.iam.gserviceaccount.com", "kid1",
				 1700000000};
	char scope[128];
	char *jwt = make_jwt(signer, header, claims);
	int rc = gce_jwt_verify(key, jwt, &w, scope, sizeof(scope), err);

	if (rc == 0)
		assert_string_equal(scope, "https://www.googleapis.com/auth/compute");
	free(jwt);
	return rc;
}

static void test_jwt(void **state)
{
	EVP_PKEY *key = EVP_RSA_gen(2048), *other = EVP_RSA_gen(2048);
	const char *h = "{\"alg\":\"RS256\",\"typ\":\"JWT\",\"kid\":\"kid1\"}";
	const char *good = "{\"iss\":\"sa@p.iam.gserviceaccount.com\",\"scope\":\"https://www.googleapis.com/auth/compute\","
			   "\"aud\":\"http://127.0.0.1:1/token\",\"iat\":1700000000,\"exp\":1700003600}";
	struct errbuf err;
	unsigned char out[8];
	struct gce_jwt_want w = {"a", "b", NULL, 0};

	(void)state;
	assert_non_null(key);
	assert_int_equal(verify(key, key, h, good, &err), 0);
	assert_int_equal(verify(key, other, h, good, &err), -1);
	assert_string_equal(err.msg, "Invalid JWT Signature.");
	assert_int_equal(verify(key, key, "{\"alg\":\"none\"}", good, &err), -1);
	assert_non_null(strstr(err.msg, "RS256"));
	assert_int_equal(verify(key, key, "{\"alg\":\"RS256\",\"kid\":\"other\"}", good, &err), -1);
	assert_non_null(strstr(err.msg, "kid"));
	assert_int_equal(verify(key, key, h,
				"{\"iss\":\"x@y\",\"aud\":\"http://127.0.0.1:1/token\",\"iat\":1700000000,\"exp\":1700003600}",
				&err), -1);
	assert_non_null(strstr(err.msg, "iss"));
	assert_int_equal(verify(key, key, h,
				"{\"iss\":\"sa@p.iam.gserviceaccount.com\",\"aud\":\"https://oauth2.googleapis.com/token\",\"iat\":1700000000,\"exp\":1700003600}",
				&err), -1);
	assert_non_null(strstr(err.msg, "aud"));
	/* expired, too long, from the future */
	assert_int_equal(verify(key, key, h,
				"{\"iss\":\"sa@p.iam.gserviceaccount.com\",\"aud\":\"http://127.0.0.1:1/token\",\"iat\":1699990000,\"exp\":1699993600}",
				&err), -1);
	assert_int_equal(verify(key, key, h,
				"{\"iss\":\"sa@p.iam.gserviceaccount.com\",\"aud\":\"http://127.0.0.1:1/token\",\"iat\":1700000000,\"exp\":1700007200}",
				&err), -1);
	assert_int_equal(verify(key, key, h,
				"{\"iss\":\"sa@p.iam.gserviceaccount.com\",\"aud\":\"http://127.0.0.1:1/token\",\"iat\":1700001000,\"exp\":1700004000}",
				&err), -1);
	assert_int_equal(verify(key, key, h,
				"{\"iss\":\"sa@p.iam.gserviceaccount.com\",\"aud\":\"http://127.0.0.1:1/token\",\"iat\":\"1700000000\",\"exp\":1700003600}",
				&err), -1);
	assert_non_null(strstr(err.msg, "numbers"));
	assert_int_equal(gce_jwt_verify(key, "a.b", &w, NULL, 0, &err), -1);
	assert_int_equal(gce_jwt_verify(key, "a.b.c.d", &w, NULL, 0, &err), -1);
	assert_int_equal(gce_jwt_verify(key, "!!.b.c", &w, NULL, 0, &err), -1);

	assert_int_equal(gce_b64url_decode("aGk", 3, out, sizeof(out)), 2);
	assert_memory_equal(out, "hi", 2);
	assert_int_equal(gce_b64url_decode("aGk=", 4, out, sizeof(out)), 2);
	assert_int_equal(gce_b64url_decode("a", 1, out, sizeof(out)), -1);
	assert_int_equal(gce_b64url_decode("a+b/", 4, out, sizeof(out)), -1); /* not the url alphabet */
	assert_int_equal(gce_b64url_decode("aGVsbG8gd29ybGQ", 15, out, sizeof(out)), -1); /* too long */
	EVP_PKEY_free(key);
	EVP_PKEY_free(other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_mig_converges),
		cmocka_unit_test(test_stockout_on_last_attempt),
		cmocka_unit_test(test_image_rolls_template),
		cmocka_unit_test(test_interrupt_taints_the_node),
		cmocka_unit_test(test_jwt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
