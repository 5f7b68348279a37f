/*
 * The GCE provider's drift: list_groups says an instance is outdated when
 * the template it was made from (listManagedInstances' version) is not one
 * the MIG launches now (its instanceTemplate, or any of its versions[] in a
 * canary rollout), and says nothing when either side is unknown. The cloud
 * is a loopback fake answering canned compute v1 JSON (and a metadata
 * server for the token).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "providers/gce/gce.h"
#include "providers/provider.h"
#include "test_cloud_server.h"

#define PROJECT "test-project"
#define ZONE "us-central1-a"
#define G "https://www.googleapis.com/compute/v1/projects/" PROJECT "/"

struct fake {
	struct cs_server cs;
	const char *mig;  /* the MIG's JSON */
	const char *mis;  /* listManagedInstances' JSON */
};

static const char *no_env(void *ud, const char *name)
{
	(void)ud;
	(void)name;
	return NULL;
}

static void handler(void *ud, size_t index, const struct cs_req *rq, struct cs_resp *rs)
{
	struct fake *f = ud;

	(void)index;
	snprintf(rs->headers, sizeof(rs->headers), "Content-Type: application/json\nMetadata-Flavor: Google\n");
	if (strstr(rq->target, "/computeMetadata/v1/instance/service-accounts/default/token"))
		snprintf(rs->body, sizeof(rs->body),
			 "{\"access_token\":\"ya29.T\",\"expires_in\":3600,\"token_type\":\"Bearer\"}");
	else if (strstr(rq->target, "/listManagedInstances"))
		snprintf(rs->body, sizeof(rs->body), "%s", f->mis);
	else if (strstr(rq->target, "/instanceGroupManagers/web"))
		snprintf(rs->body, sizeof(rs->body), "%s", f->mig);
	else {
		rs->status = 404;
		snprintf(rs->body, sizeof(rs->body),
			 "{\"error\":{\"code\":404,\"message\":\"not found\",\"errors\":[{\"reason\":\"notFound\"}]}}");
	}
}

/* Lists group "web" (MIG web) against a fake answering mig and mis; the
 * outdated reason of each of its instances, in order, into out. */
static size_t list_outdated(const char *mig, const char *mis, char out[][192], size_t max)
{
	struct fake f = {.mig = mig, .mis = mis};
	struct config_opts co = {.flags = CONFIG_OFFLINE};
	struct gce_provider_opts po;
	struct provider_group *gs = NULL;
	struct provider_status st;
	struct config *cfg;
	struct provider *p;
	struct errbuf err;
	char text[1024];
	size_t n = 0, i, got = 0;

	assert_int_equal(cs_start(&f.cs, handler, &f, NULL, NULL), 0);
	snprintf(text, sizeof(text),
		 "node_groups:\n"
		 "  - {name: web, min: 0, max: 10, gce: {zone: " ZONE "}}\n"
		 "provider:\n  kind: gce\n"
		 "  gce:\n    project: " PROJECT "\n"
		 "    endpoints: {metadata: \"127.0.0.1:%d\", compute: \"http://127.0.0.1:%d/compute/v1/\"}\n",
		 f.cs.port, f.cs.port);
	cfg = config_parse_opts(text, strlen(text), "gce.yaml", &co, &err);
	if (!cfg)
		fail_msg("config: %s", err.msg);
	memset(&po, 0, sizeof(po));
	po.config = cfg;
	po.env.get = no_env;
	p = gce_provider_new(&po, &err);
	if (!p)
		fail_msg("provider: %s", err.msg);
	memset(&st, 0, sizeof(st));
	if (p->ops->list_groups(p, &gs, &n, &st) < 0)
		fail_msg("list_groups: %s", st.message);
	assert_int_equal(n, 1);
	for (i = 0; i < gs[0].n_instances && got < max; i++)
		snprintf(out[got++], 192, "%s", gs[0].instances[i].outdated);
	provider_groups_free(gs, n);
	provider_free(p);
	config_free(cfg);
	cs_stop(&f.cs);
	return got;
}

#define MI(name, version)                                                                     \
	"{\"instance\":\"" G "zones/" ZONE "/instances/" name "\",\"name\":\"" name "\","     \
	"\"instanceStatus\":\"RUNNING\",\"currentAction\":\"NONE\"" version "}"
#define VERSION(t) ",\"version\":{\"instanceTemplate\":\"" G "global/instanceTemplates/" t "\"}"

static const char *mis_v1_v2 = "{\"managedInstances\":[" MI("web-a", VERSION("web-v1")) "," MI(
	"web-b", VERSION("web-v2")) "]}";

/* An instance on the old template gets the reason; one on the current gets "". */
static void test_old_template_is_outdated(void **state)
{
	char out[4][192];
	const char *mig = "{\"name\":\"web\",\"targetSize\":2,"
			  "\"instanceTemplate\":\"" G "global/instanceTemplates/web-v2\"}";

	(void)state;
	assert_int_equal(list_outdated(mig, mis_v1_v2, out, 4), 2);
	assert_string_equal(out[0], "instance template web-v1 is not instance group web's web-v2");
	assert_string_equal(out[1], "");
}

/* A canary rollout: every template in versions[] is current. */
static void test_canary_versions_are_current(void **state)
{
	char out[4][192];
	const char *mig = "{\"name\":\"web\",\"targetSize\":2,"
			  "\"instanceTemplate\":\"" G "global/instanceTemplates/web-v2\","
			  "\"versions\":[{\"name\":\"stable\",\"instanceTemplate\":\"" G
			  "global/instanceTemplates/web-v1\"},{\"name\":\"canary\",\"instanceTemplate\":\"" G
			  "global/instanceTemplates/web-v2\",\"targetSize\":{\"percent\":20}}]}";

	(void)state;
	assert_int_equal(list_outdated(mig, mis_v1_v2, out, 4), 2);
	assert_string_equal(out[0], "");
	assert_string_equal(out[1], "");
}

/* versions[] that do not name the old template: it is outdated. */
static void test_versions_without_it_outdated(void **state)
{
	char out[4][192];
	const char *mig = "{\"name\":\"web\",\"targetSize\":2,"
			  "\"instanceTemplate\":\"" G "global/instanceTemplates/web-v2\","
			  "\"versions\":[{\"instanceTemplate\":\"" G "global/instanceTemplates/web-v2\"},"
			  "{\"instanceTemplate\":\"" G "global/instanceTemplates/web-v3\"}]}";

	(void)state;
	assert_int_equal(list_outdated(mig, mis_v1_v2, out, 4), 2);
	assert_string_equal(out[0], "instance template web-v1 is not instance group web's web-v2");
	assert_string_equal(out[1], "");
}

/* Nothing judged when the instance's version or the MIG's template is unknown. */
static void test_unknown_judges_nothing(void **state)
{
	char out[4][192];
	const char *mig = "{\"name\":\"web\",\"targetSize\":2,"
			  "\"instanceTemplate\":\"" G "global/instanceTemplates/web-v2\"}";
	const char *bare = "{\"name\":\"web\",\"targetSize\":2}";
	const char *mis = "{\"managedInstances\":[" MI("web-a", "") "," MI("web-b", ",\"version\":{}") "]}";

	(void)state;
	assert_int_equal(list_outdated(mig, mis, out, 4), 2);
	assert_string_equal(out[0], "");
	assert_string_equal(out[1], "");
	assert_int_equal(list_outdated(bare, mis_v1_v2, out, 4), 2);
	assert_string_equal(out[0], "");
	assert_string_equal(out[1], "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_old_template_is_outdated),
		cmocka_unit_test(test_canary_versions_are_current),
		cmocka_unit_test(test_versions_without_it_outdated),
		cmocka_unit_test(test_unknown_judges_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
