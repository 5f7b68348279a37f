/*
 * endpoints: the URL each AWS service is called at, and the environment
 * lookup the AWS modules share. Resolves and validates; does not call
 * anything.
 */
#include "providers/aws/endpoints.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *aws_env_get(const struct aws_env *e, const char *name)
{
	const char *v;

	if (e && e->get)
		v = e->get(e->ud, name);
	else
		v = getenv(name);
	return v && *v ? v : NULL;
}

int aws_env_true(const struct aws_env *e, const char *name)
{
	const char *v = aws_env_get(e, name);

	return v && strcasecmp(v, "true") == 0;
}

static const char *const names[AWS_SERVICE_COUNT] = { "ec2", "autoscaling", "sts", "sqs" };
static const char *const env_ids[AWS_SERVICE_COUNT] = { "EC2", "AUTO_SCALING", "STS", "SQS" };
static const char *const config_ids[AWS_SERVICE_COUNT] = { "ec2", "auto_scaling", "sts", "sqs" };

const char *aws_service_name(enum aws_service s)
{
	return (unsigned)s < AWS_SERVICE_COUNT ? names[s] : "?";
}

const char *aws_service_env_id(enum aws_service s)
{
	return (unsigned)s < AWS_SERVICE_COUNT ? env_ids[s] : "?";
}

const char *aws_service_config_id(enum aws_service s)
{
	return (unsigned)s < AWS_SERVICE_COUNT ? config_ids[s] : "?";
}

int aws_region_validate(const char *region, struct errbuf *err)
{
	size_t i, n;

	if (!region || !*region)
		return errbuf_set(err, "empty region");
	n = strlen(region);
	if (n > 63 || !islower((unsigned char)region[0]))
		return errbuf_set(err, "region \"%.64s\" is not a region name (like us-east-1)", region);
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)region[i];

		if (!islower(ch) && !isdigit(ch) && ch != '-')
			return errbuf_set(err, "region \"%.64s\" is not a region name (like us-east-1)",
					  region);
	}
	return 0;
}

int aws_endpoint_validate(const char *url, struct errbuf *err)
{
	const char *p, *host, *end;
	size_t i;

	if (!url || !*url)
		return errbuf_set(err, "empty URL");
	for (i = 0; url[i]; i++) {
		unsigned char ch = (unsigned char)url[i];

		if (ch <= 0x20 || ch >= 0x7f)
			return errbuf_set(err, "URL contains a space, a control character or a non-ASCII byte");
	}
	if (strncasecmp(url, "https://", 8) == 0)
		host = url + 8;
	else if (strncasecmp(url, "http://", 7) == 0)
		host = url + 7;
	else
		return errbuf_set(err, "URL \"%.200s\" must start with http:// or https://", url);
	if (strpbrk(url, "?#"))
		return errbuf_set(err, "URL \"%.200s\" must not carry a query or a fragment", url);
	end = host + strcspn(host, "/");
	for (p = host; p < end; p++)
		if (*p == '@')
			return errbuf_set(err, "URL must not carry user info (user:password@)");
	if (end == host)
		return errbuf_set(err, "URL \"%.200s\" has no host", url);
	p = host;
	if (*p == '[') {
		const char *close = memchr(p, ']', (size_t)(end - p));

		if (!close || close == p + 1)
			return errbuf_set(err, "URL \"%.200s\" has a malformed IPv6 host", url);
		for (const char *q = p + 1; q < close; q++)
			if (!isxdigit((unsigned char)*q) && *q != ':' && *q != '.')
				return errbuf_set(err, "URL \"%.200s\" has a malformed IPv6 host", url);
		p = close + 1;
	} else {
		while (p < end && *p != ':') {
			unsigned char ch = (unsigned char)*p;

			if (!isalnum(ch) && ch != '-' && ch != '.' && ch != '_')
				return errbuf_set(err, "URL \"%.200s\" has an invalid host", url);
			p++;
		}
		if (p == host)
			return errbuf_set(err, "URL \"%.200s\" has no host", url);
	}
	if (p < end) {
		long port = 0;

		if (*p != ':' || p + 1 == end)
			return errbuf_set(err, "URL \"%.200s\" has an invalid port", url);
		for (p++; p < end; p++) {
			if (!isdigit((unsigned char)*p) || (port = port * 10 + (*p - '0')) > 65535)
				return errbuf_set(err, "URL \"%.200s\" has an invalid port", url);
		}
		if (port == 0)
			return errbuf_set(err, "URL \"%.200s\" has an invalid port", url);
	}
	return 0;
}

/* Copies a validated URL without its trailing slashes into 'out'. */
static int take(const char *url, const char *what, char *out, size_t len, struct errbuf *err)
{
	size_t n;

	if (aws_endpoint_validate(url, err) < 0)
		return errbuf_prefix(err, "%s", what);
	n = strlen(url);
	while (n > 0 && url[n - 1] == '/' && !(n >= 3 && url[n - 2] == '/' && url[n - 3] == ':'))
		n--;
	if (n + 1 > len)
		return errbuf_set(err, "%s: URL longer than %zu bytes", what, len - 1);
	memcpy(out, url, n);
	out[n] = '\0';
	return 0;
}

int aws_endpoint_resolve(enum aws_service svc, const char *region,
			 const struct aws_endpoint_overrides *ov, const struct aws_env *env,
			 const struct aws_endpoint_profile *prof, char *out, size_t len,
			 const char **from, struct errbuf *err)
{
	static const char *const env_names[AWS_SERVICE_COUNT] = { "AWS_ENDPOINT_URL_EC2",
							 "AWS_ENDPOINT_URL_AUTO_SCALING",
							 "AWS_ENDPOINT_URL_STS",
							 "AWS_ENDPOINT_URL_SQS" };
	static const char *const prof_from[AWS_SERVICE_COUNT] = {
		"the shared config's services section (ec2)",
		"the shared config's services section (auto_scaling)",
		"the shared config's services section (sts)",
		"the shared config's services section (sqs)",
	};
	static const char *const ov_from[AWS_SERVICE_COUNT] = {
		"provider.aws.endpoints.ec2", "provider.aws.endpoints.autoscaling",
		"provider.aws.endpoints.sts", "provider.aws.endpoints.sqs",
	};
	const char *v, *ign;
	int ignore;
	int n;

	if ((unsigned)svc >= AWS_SERVICE_COUNT)
		return errbuf_set(err, "unknown AWS service %d", (int)svc);
	if (from)
		*from = "default";
	if (ov && ov->url[svc] && *ov->url[svc]) {
		if (from)
			*from = ov_from[svc];
		return take(ov->url[svc], ov_from[svc], out, len, err);
	}
	/* the variable wins over the profile's setting, as any config variable */
	ign = aws_env_get(env, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");
	if (ign)
		ignore = strcasecmp(ign, "true") == 0;
	else
		ignore = prof && prof->ignore_configured;
	if (!ignore) {
		v = aws_env_get(env, env_names[svc]);
		if (v) {
			if (from)
				*from = env_names[svc];
			return take(v, env_names[svc], out, len, err);
		}
		v = aws_env_get(env, "AWS_ENDPOINT_URL");
		if (v) {
			if (from)
				*from = "AWS_ENDPOINT_URL";
			return take(v, "AWS_ENDPOINT_URL", out, len, err);
		}
		if (prof && prof->service_url[svc][0]) {
			if (from)
				*from = prof_from[svc];
			return take(prof->service_url[svc], prof_from[svc], out, len, err);
		}
		if (prof && prof->endpoint_url[0]) {
			if (from)
				*from = "the shared config's endpoint_url";
			return take(prof->endpoint_url, "the shared config's endpoint_url", out, len,
				    err);
		}
	}
	if (!region || !*region) {
		if (svc == AWS_SERVICE_STS) {
			n = snprintf(out, len, "https://sts.amazonaws.com");
			return n < 0 || (size_t)n >= len ? errbuf_set(err, "endpoint buffer too small") : 0;
		}
		return errbuf_set(err, "no region for the %s endpoint: set AWS_REGION or "
			"provider.aws.region", names[svc]);
	}
	if (aws_region_validate(region, err) < 0)
		return -1;
	n = snprintf(out, len, "https://%s.%s.%s", names[svc], region,
		     strncmp(region, "cn-", 3) == 0 ? "amazonaws.com.cn" : "amazonaws.com");
	if (n < 0 || (size_t)n >= len)
		return errbuf_set(err, "endpoint buffer too small");
	return 0;
}
