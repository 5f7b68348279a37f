/*
 * Tests for the AWS endpoint resolution: the provider's override, the
 * AWS_ENDPOINT_URL_<SERVICE> and AWS_ENDPOINT_URL variables, the shared
 * config's endpoint_url and services section, the ignore switch, regional
 * and China defaults, and URL validation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "providers/aws/endpoints.h"

struct kv {
	const char *k, *v;
};

static const char *table_get(void *ud, const char *name)
{
	const struct kv *t = ud;

	for (; t->k; t++)
		if (strcmp(t->k, name) == 0)
			return t->v;
	return NULL;
}

static int resolve(enum aws_service s, const char *region, const struct aws_endpoint_overrides *ov,
		   struct kv *table, const struct aws_endpoint_profile *prof, char *out,
		   const char **from, struct errbuf *e)
{
	struct aws_env env = { table_get, table };

	return aws_endpoint_resolve(s, region, ov, &env, prof, out, 1024, from, e);
}

static void test_defaults(void **state)
{
	struct kv none[] = { { NULL, NULL } };
	char out[1024];
	const char *from = NULL;
	struct errbuf e = { "" };

	(void)state;
	assert_int_equal(resolve(AWS_SERVICE_EC2, "eu-west-1", NULL, none, NULL, out, &from, &e), 0);
	assert_string_equal(out, "https://ec2.eu-west-1.amazonaws.com");
	assert_string_equal(from, "default");
	assert_int_equal(resolve(AWS_SERVICE_AUTOSCALING, "us-east-2", NULL, none, NULL, out, &from, &e), 0);
	assert_string_equal(out, "https://autoscaling.us-east-2.amazonaws.com");
	assert_int_equal(resolve(AWS_SERVICE_STS, "ap-south-1", NULL, none, NULL, out, &from, &e), 0);
	assert_string_equal(out, "https://sts.ap-south-1.amazonaws.com");
	assert_int_equal(resolve(AWS_SERVICE_SQS, "eu-central-1", NULL, none, NULL, out, &from, &e), 0);
	assert_string_equal(out, "https://sqs.eu-central-1.amazonaws.com");
	{
		struct kv sqs_env[] = { { "AWS_ENDPOINT_URL_SQS", "http://127.0.0.1:9324/" },
					{ "AWS_ENDPOINT_URL", "http://127.0.0.1:1" }, { NULL, NULL } };

		assert_int_equal(resolve(AWS_SERVICE_SQS, "eu-central-1", NULL, sqs_env, NULL, out, &from, &e), 0);
		assert_string_equal(out, "http://127.0.0.1:9324");
		assert_string_equal(from, "AWS_ENDPOINT_URL_SQS");
		assert_string_equal(aws_service_env_id(AWS_SERVICE_SQS), "SQS");
		assert_string_equal(aws_service_config_id(AWS_SERVICE_SQS), "sqs");
	}
	/* China partition */
	assert_int_equal(resolve(AWS_SERVICE_EC2, "cn-north-1", NULL, none, NULL, out, &from, &e), 0);
	assert_string_equal(out, "https://ec2.cn-north-1.amazonaws.com.cn");
	assert_int_equal(resolve(AWS_SERVICE_STS, "cn-northwest-1", NULL, none, NULL, out, &from, &e), 0);
	assert_string_equal(out, "https://sts.cn-northwest-1.amazonaws.com.cn");
	/* STS without a region is the global endpoint; the others need one */
	assert_int_equal(resolve(AWS_SERVICE_STS, NULL, NULL, none, NULL, out, &from, &e), 0);
	assert_string_equal(out, "https://sts.amazonaws.com");
	assert_int_equal(resolve(AWS_SERVICE_EC2, "", NULL, none, NULL, out, &from, &e), -1);
	assert_non_null(strstr(e.msg, "no region for the ec2 endpoint"));
	/* a region that would change the host is refused */
	assert_int_equal(resolve(AWS_SERVICE_EC2, "evil.com/x", NULL, none, NULL, out, &from, &e), -1);
	assert_non_null(strstr(e.msg, "not a region name"));
	assert_int_equal(resolve(AWS_SERVICE_EC2, "US-EAST-1", NULL, none, NULL, out, &from, &e), -1);
}

static void test_precedence(void **state)
{
	struct kv env[] = {
		{ "AWS_ENDPOINT_URL_EC2", "http://127.0.0.1:4000" },
		{ "AWS_ENDPOINT_URL_AUTO_SCALING", "http://127.0.0.1:4001/" },
		{ "AWS_ENDPOINT_URL", "https://vpce-1.example.internal" },
		{ NULL, NULL },
	};
	struct aws_endpoint_overrides ov = { { NULL, NULL, NULL } };
	struct aws_endpoint_profile prof;
	char out[1024];
	const char *from = NULL;
	struct errbuf e = { "" };

	(void)state;
	memset(&prof, 0, sizeof(prof));
	snprintf(prof.endpoint_url, sizeof(prof.endpoint_url), "http://profile-global:1");
	snprintf(prof.service_url[AWS_SERVICE_STS], sizeof(prof.service_url[0]), "http://profile-sts:2");
	/* per-service variable */
	assert_int_equal(resolve(AWS_SERVICE_EC2, "us-east-1", &ov, env, &prof, out, &from, &e), 0);
	assert_string_equal(out, "http://127.0.0.1:4000");
	assert_string_equal(from, "AWS_ENDPOINT_URL_EC2");
	/* the trailing slash is dropped */
	assert_int_equal(resolve(AWS_SERVICE_AUTOSCALING, "us-east-1", &ov, env, &prof, out, &from, &e), 0);
	assert_string_equal(out, "http://127.0.0.1:4001");
	assert_string_equal(from, "AWS_ENDPOINT_URL_AUTO_SCALING");
	/* the global variable beats the profile's services section */
	assert_int_equal(resolve(AWS_SERVICE_STS, "us-east-1", &ov, env, &prof, out, &from, &e), 0);
	assert_string_equal(out, "https://vpce-1.example.internal");
	assert_string_equal(from, "AWS_ENDPOINT_URL");
	/* the provider's config beats everything */
	ov.url[AWS_SERVICE_STS] = "http://127.0.0.1:9999/sts";
	assert_int_equal(resolve(AWS_SERVICE_STS, "us-east-1", &ov, env, &prof, out, &from, &e), 0);
	assert_string_equal(out, "http://127.0.0.1:9999/sts");
	assert_string_equal(from, "provider.aws.endpoints.sts");
	/* without variables: the services section, then endpoint_url */
	ov.url[AWS_SERVICE_STS] = NULL;
	env[0].k = env[1].k = env[2].k = "UNRELATED";
	assert_int_equal(resolve(AWS_SERVICE_STS, "us-east-1", &ov, env, &prof, out, &from, &e), 0);
	assert_string_equal(out, "http://profile-sts:2");
	assert_int_equal(resolve(AWS_SERVICE_EC2, "us-east-1", &ov, env, &prof, out, &from, &e), 0);
	assert_string_equal(out, "http://profile-global:1");
	assert_string_equal(from, "the shared config's endpoint_url");
}

static void test_ignore_configured(void **state)
{
	struct kv env[] = {
		{ "AWS_ENDPOINT_URL_EC2", "http://127.0.0.1:4000" },
		{ "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "TRUE" },
		{ NULL, NULL },
	};
	struct aws_endpoint_overrides ov = { { NULL, NULL, NULL } };
	struct aws_endpoint_profile prof;
	char out[1024];
	const char *from = NULL;
	struct errbuf e = { "" };

	(void)state;
	memset(&prof, 0, sizeof(prof));
	snprintf(prof.endpoint_url, sizeof(prof.endpoint_url), "http://profile-global:1");
	assert_int_equal(resolve(AWS_SERVICE_EC2, "us-west-2", &ov, env, &prof, out, &from, &e), 0);
	assert_string_equal(out, "https://ec2.us-west-2.amazonaws.com");
	/* the provider's own config is not "configured elsewhere": it stays */
	ov.url[AWS_SERVICE_EC2] = "http://127.0.0.1:5000";
	assert_int_equal(resolve(AWS_SERVICE_EC2, "us-west-2", &ov, env, &prof, out, &from, &e), 0);
	assert_string_equal(out, "http://127.0.0.1:5000");
	/* the profile's switch, overruled by the variable set to false */
	ov.url[AWS_SERVICE_EC2] = NULL;
	prof.ignore_configured = 1;
	env[1].v = "false";
	assert_int_equal(resolve(AWS_SERVICE_EC2, "us-west-2", &ov, env, &prof, out, &from, &e), 0);
	assert_string_equal(out, "http://127.0.0.1:4000");
	env[1].k = "UNRELATED";
	assert_int_equal(resolve(AWS_SERVICE_EC2, "us-west-2", &ov, env, &prof, out, &from, &e), 0);
	assert_string_equal(out, "https://ec2.us-west-2.amazonaws.com");
}

static void test_invalid_overrides_name_their_source(void **state)
{
	struct kv env[] = { { "AWS_ENDPOINT_URL_STS", "ftp://127.0.0.1" }, { NULL, NULL } };
	struct aws_endpoint_overrides ov = { { "http://user:pw@127.0.0.1", NULL, NULL } };
	char out[1024];
	struct errbuf e = { "" };

	(void)state;
	assert_int_equal(resolve(AWS_SERVICE_STS, "us-east-1", NULL, env, NULL, out, NULL, &e), -1);
	assert_non_null(strstr(e.msg, "AWS_ENDPOINT_URL_STS"));
	assert_non_null(strstr(e.msg, "http:// or https://"));
	assert_int_equal(resolve(AWS_SERVICE_EC2, "us-east-1", &ov, env, NULL, out, NULL, &e), -1);
	assert_non_null(strstr(e.msg, "provider.aws.endpoints.ec2"));
	assert_non_null(strstr(e.msg, "user info"));
	assert_null(strstr(e.msg, "pw")); /* the password is not repeated */
}

static void test_validate(void **state)
{
	static const char *const good[] = {
		"http://127.0.0.1", "https://ec2.us-east-1.amazonaws.com", "http://localhost:8080/",
		"HTTPS://vpce-0a1b.ec2.us-east-1.vpce.amazonaws.com", "http://[::1]:9000/aws",
		"http://sim_aws:1/a/b",
	};
	static const char *const bad[] = {
		"", "ec2.amazonaws.com", "ftp://x", "http://", "http://:80", "http://a b",
		"http://host/?q=1", "http://host/#frag", "http://u@host", "http://host:0",
		"http://host:65536", "http://host:12x", "http://[zz]/", "http://host\n.evil",
		"http://h\xc3\xa9", "http://host:",
	};
	struct errbuf e = { "" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (aws_endpoint_validate(good[i], &e) != 0)
			fail_msg("refused %s: %s", good[i], e.msg);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (aws_endpoint_validate(bad[i], &e) != -1)
			fail_msg("accepted %s", bad[i]);
	}
}

static void test_env_empty_is_unset(void **state)
{
	struct kv env[] = { { "AWS_ENDPOINT_URL", "" }, { NULL, NULL } };
	struct aws_env ev = { table_get, env };
	char out[1024];
	struct errbuf e = { "" };

	(void)state;
	assert_null(aws_env_get(&ev, "AWS_ENDPOINT_URL"));
	assert_int_equal(resolve(AWS_SERVICE_EC2, "us-east-1", NULL, env, NULL, out, NULL, &e), 0);
	assert_string_equal(out, "https://ec2.us-east-1.amazonaws.com");
	assert_string_equal(aws_service_env_id(AWS_SERVICE_AUTOSCALING), "AUTO_SCALING");
	assert_string_equal(aws_service_config_id(AWS_SERVICE_AUTOSCALING), "auto_scaling");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_ignore_configured),
		cmocka_unit_test(test_invalid_overrides_name_their_source),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_env_empty_is_unset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
