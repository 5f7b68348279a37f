/*
 * sim/aws_face: the AWS wire over the simulated cloud — form decoding,
 * SigV4 checking, the EC2 / Auto Scaling / STS actions in their XML shapes
 * and error shapes, IMDSv2 and container credentials, on libmicrohttpd.
 * What the cloud does (ASGs, fleets, instances) is sim/clouds/cloud_aws.c's.
 */
#include "sim/clouds/aws_face.h"

#include <limits.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "wire/sigv4.h"
#include "runtime/backoff.h"
#include "runtime/clock.h"
#include "sim/clouds/aws_pricing_face.h"
#include "sim/clouds/face_http.h"
#include "sim/clouds/sqs.h"
#include "textparse.h"

#define MAX_HEADERS 64
#define CALL_TIMEOUT_NS (120 * CLOCK_NS_PER_S)
#define MAX_IMDS_TOKENS 64
#define MAX_FLEET_TOKENS 4096

#define NS_EC2 "http://ec2.amazonaws.com/doc/2016-11-15/"
#define NS_ASG "http://autoscaling.amazonaws.com/doc/2011-01-01/"
#define NS_STS "https://sts.amazonaws.com/doc/2011-06-15/"
#define NS_SQS "http://queue.amazonaws.com/doc/2012-11-05/"

struct imds_token {
	char token[48];
	int64_t expires_ns;
};

/* A CreateFleet answer kept for its ClientToken. */
struct fleet_token {
	char *token;
	char *request;       /* the request's body: the same token with another is a mismatch */
	char *answer;        /* the XML between <requestId/> and the end; NULL while running */
	struct fleet_token *next;
};

struct aws_face {
	struct aws_face_opts o;
	struct sim_aws *aws;
	struct sim_cloud *cloud;
	const struct sim_aws_conf *conf;
	struct face_http *http;
	int port;
	pthread_mutex_t mu;    /* rng, tokens, fleet tokens */
	pthread_cond_t cv;     /* a fleet call with a token finished */
	uint64_t rng;
	struct imds_token imds[MAX_IMDS_TOKENS];
	size_t imds_next;
	struct fleet_token *fleets;
	size_t n_fleets;
	bool stopping;
	char cluster_key[160];     /* "k8s.io/cluster-autoscaler/<cluster>" */
};

/* ---- small pieces ---- */

int aws_parse_int(const char *s, long long lo, long long hi, long long *out)
{
	long long v = 0;
	bool neg = false;
	const char *p = s;

	if (!s || !*s)
		return -1;
	if (*p == '-') {
		neg = true;
		p++;
	}
	if (!*p || strlen(p) > 18)
		return -1;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (*p - '0');
	}
	if (neg)
		v = -v;
	if (v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* Decodes s[0..n) into a new string; NULL with a message. */
static char *form_decode(const char *s, size_t n, struct errbuf *err)
{
	char *out = malloc(n + 1);
	size_t i, k = 0;

	if (!out) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (s[i] == '+') {
			out[k++] = ' ';
		} else if (s[i] == '%') {
			int hi, lo;

			if (i + 2 >= n) {
				free(out);
				errbuf_set(err, "a truncated %%-escape");
				return NULL;
			}
			hi = textparse_hexval(s[i + 1]);
			lo = textparse_hexval(s[i + 2]);
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
				free(out);
				errbuf_set(err, "a bad %%-escape \"%%%c%c\"", s[i + 1], s[i + 2]);
				return NULL;
			}
			out[k++] = (char)(hi * 16 + lo);
			i += 2;
		} else if (s[i] == '\0') {
			free(out);
			errbuf_set(err, "a NUL byte");
			return NULL;
		} else {
			out[k++] = s[i];
		}
	}
	out[k] = '\0';
	return out;
}

void aws_form_free(struct aws_form *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		free(f->keys[i]);
		free(f->values[i]);
	}
	free(f->keys);
	free(f->values);
	memset(f, 0, sizeof(*f));
}

int aws_form_parse(struct aws_form *f, const char *body, size_t len, struct errbuf *err)
{
	size_t i = 0, cap = 0;

	memset(f, 0, sizeof(*f));
	while (i < len) {
		size_t end = i, eq;
		char *k, *v;

		while (end < len && body[end] != '&')
			end++;
		if (end == i) {
			i = end + 1;
			continue;
		}
		for (eq = i; eq < end && body[eq] != '='; eq++)
			;
		if (f->n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			char **nk = realloc(f->keys, nc * sizeof(*nk)), **nv;

			if (!nk)
				goto oom;
			f->keys = nk;
			nv = realloc(f->values, nc * sizeof(*nv));
			if (!nv)
				goto oom;
			f->values = nv;
			cap = nc;
		}
		k = form_decode(body + i, eq - i, err);
		if (!k)
			goto fail;
		v = eq < end ? form_decode(body + eq + 1, end - eq - 1, err) : strdup("");
		if (!v) {
			free(k);
			if (eq >= end)
				goto oom;
			goto fail;
		}
		f->keys[f->n] = k;
		f->values[f->n++] = v;
		i = end + 1;
	}
	return 0;
oom:
	errbuf_set(err, "out of memory");
fail:
	aws_form_free(f);
	return -1;
}

const char *aws_form_get(const struct aws_form *f, const char *key)
{
	size_t i;

	for (i = f->n; i-- > 0;)
		if (strcmp(f->keys[i], key) == 0)
			return f->values[i];
	return NULL;
}

static const char *form_getf(const struct aws_form *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static const char *form_getf(const struct aws_form *f, const char *fmt, ...)
{
	char key[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(key, sizeof(key), fmt, ap);
	va_end(ap);
	return aws_form_get(f, key);
}

static void x_esc(struct buf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': buf_puts(b, "&amp;"); break;
		case '<': buf_puts(b, "&lt;"); break;
		case '>': buf_puts(b, "&gt;"); break;
		case '"': buf_puts(b, "&quot;"); break;
		case '\'': buf_puts(b, "&apos;"); break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t' && *s != '\r')
				buf_printf(b, "&#%d;", *s);
			else
				buf_append(b, s, 1);
		}
	}
}

static void x_tag(struct buf *b, const char *name, const char *text)
{
	buf_printf(b, "<%s>", name);
	x_esc(b, text);
	buf_printf(b, "</%s>", name);
}

static void x_int(struct buf *b, const char *name, long long v)
{
	buf_printf(b, "<%s>%lld</%s>", name, v, name);
}

static void x_bool(struct buf *b, const char *name, bool v)
{
	buf_printf(b, "<%s>%s</%s>", name, v ? "true" : "false", name);
}

static void iso(int64_t wall, char *out, size_t size)
{
	time_t t = (time_t)wall;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, size, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
}

static void x_time(struct buf *b, const char *name, int64_t wall)
{
	char t[40];

	iso(wall, t, sizeof(t));
	x_tag(b, name, t);
}

static uint64_t face_rand(struct aws_face *f)
{
	uint64_t v;

	pthread_mutex_lock(&f->mu);
	v = backoff_rand(&f->rng);
	pthread_mutex_unlock(&f->mu);
	return v;
}

static void face_uuid(struct aws_face *f, char out[37])
{
	uint64_t x = face_rand(f), y = face_rand(f);

	snprintf(out, 37, "%08llx-%04llx-4%03llx-%04llx-%012llx",
		 (unsigned long long)(x >> 32), (unsigned long long)((x >> 16) & 0xffff),
		 (unsigned long long)(x & 0xfff), (unsigned long long)(0x8000 | ((y >> 48) & 0x3fff)),
		 (unsigned long long)(y & 0xffffffffffffULL));
}

static int64_t real_wall(void)
{
	return clock_wall(clock_real());
}

static int64_t real_ns(void)
{
	return clock_now(clock_real());
}

/* The simulated world's wall clock (the cloud's executor). */
static int64_t sim_wall(const struct aws_face *f)
{
	return clock_wall(executor_clock(sim_cloud_executor(f->cloud)));
}

static int64_t launch_wall(const struct aws_face *f, const struct sim_instance *in)
{
	return sim_wall(f) - (sim_cloud_now(f->cloud) - in->created_ns) / CLOCK_NS_PER_S;
}

/* ---- requests and answers ---- */

enum proto { PROTO_EC2, PROTO_QUERY };

struct areq {
	struct aws_face *f;
	struct aws_form form;
	const char *service;     /* "ec2", "autoscaling", "sts" */
	enum proto proto;
	const char *ns;
	const char *action;
	char rid[37];
	bool session;            /* signed with the session token */
	int code;
	struct buf body;
	const char *content_type;
	bool drop;               /* a lost_answer fault: close without answering */
};

static void fail(struct areq *r, int http, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Replaces the answer with an error in the protocol's shape. */
static void fail(struct areq *r, int http, const char *code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	buf_free(&r->body);
	r->code = http;
	r->content_type = "text/xml";
	if (r->proto == PROTO_EC2) {
		buf_puts(&r->body, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error>");
		x_tag(&r->body, "Code", code);
		x_tag(&r->body, "Message", msg);
		buf_puts(&r->body, "</Error></Errors>");
		x_tag(&r->body, "RequestID", r->rid);
		buf_puts(&r->body, "</Response>");
	} else {
		buf_printf(&r->body, "<ErrorResponse xmlns=\"%s\"><Error><Type>%s</Type>", r->ns,
			   http >= 500 ? "Receiver" : "Sender");
		x_tag(&r->body, "Code", code);
		x_tag(&r->body, "Message", msg);
		buf_puts(&r->body, "</Error>");
		x_tag(&r->body, "RequestId", r->rid);
		buf_puts(&r->body, "</ErrorResponse>");
	}
}

/* "validation error" for a parameter, as each protocol words it. */
static void bad_param(struct areq *r, const char *param, const char *value, const char *why)
{
	if (r->proto == PROTO_EC2) {
		if (!value)
			fail(r, 400, "MissingParameter", "The request must contain the parameter %s",
			     param);
		else
			fail(r, 400, "InvalidParameterValue", "Invalid value '%s' for %s%s%s", value,
			     param, why ? ": " : "", why ? why : "");
		return;
	}
	{
		char lower[128];

		snprintf(lower, sizeof(lower), "%s", param);
		if (lower[0] >= 'A' && lower[0] <= 'Z')
			lower[0] = (char)(lower[0] - 'A' + 'a');
		if (!value)
			fail(r, 400, "ValidationError",
			     "1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null",
			     lower);
		else
			fail(r, 400, "ValidationError",
			     "1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: %s",
			     value, lower, why ? why : "Member must be valid");
	}
}

static void ok_begin(struct areq *r)
{
	r->code = 200;
	r->content_type = "text/xml";
	if (r->proto == PROTO_EC2) {
		buf_printf(&r->body, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<%sResponse xmlns=\"%s\">",
			   r->action, r->ns);
		x_tag(&r->body, "requestId", r->rid);
	} else {
		buf_printf(&r->body, "<%sResponse xmlns=\"%s\"><%sResult>", r->action, r->ns,
			   r->action);
	}
}

/* Ends the answer; 'result' false: a Query answer without a Result element. */
static void ok_end(struct areq *r, bool result)
{
	if (r->proto == PROTO_EC2) {
		buf_printf(&r->body, "</%sResponse>", r->action);
		return;
	}
	if (result)
		buf_printf(&r->body, "</%sResult>", r->action);
	buf_puts(&r->body, "<ResponseMetadata>");
	x_tag(&r->body, "RequestId", r->rid);
	buf_printf(&r->body, "</ResponseMetadata></%sResponse>", r->action);
}

/* Starts a Query answer without a Result element (SetDesiredCapacity). */
static void ok_bare(struct areq *r)
{
	r->code = 200;
	r->content_type = "text/xml";
	buf_printf(&r->body, "<%sResponse xmlns=\"%s\">", r->action, r->ns);
}

/* An optional int parameter: 0 (set or absent, *out unchanged), -1 answered. */
static int param_int(struct areq *r, const char *name, long long lo, long long hi, long long *out,
		     bool required)
{
	const char *v = aws_form_get(&r->form, name);
	char why[128];

	if (!v) {
		if (required) {
			bad_param(r, name, NULL, NULL);
			return -1;
		}
		return 0;
	}
	if (aws_parse_int(v, LLONG_MIN / 2, LLONG_MAX / 2, out) < 0) {
		bad_param(r, name, v, "Member must be an integer");
		return -1;
	}
	if (*out < lo || *out > hi) {
		snprintf(why, sizeof(why), "Member must have value %s %lld",
			 *out < lo ? "greater than or equal to" : "less than or equal to",
			 *out < lo ? lo : hi);
		bad_param(r, name, v, why);
		return -1;
	}
	return 0;
}

/* A boolean parameter ("true"/"false"): 0, or -1 answered. */
static int param_bool(struct areq *r, const char *name, bool *out, bool required)
{
	const char *v = aws_form_get(&r->form, name);

	if (!v) {
		if (required) {
			bad_param(r, name, NULL, NULL);
			return -1;
		}
		return 0;
	}
	if (strcmp(v, "true") == 0)
		*out = true;
	else if (strcmp(v, "false") == 0)
		*out = false;
	else {
		bad_param(r, name, v, "Member must be true or false");
		return -1;
	}
	return 0;
}

/* A pagination token "<n>" made by page_token: 0 with the offset, or -1 answered. */
static int param_token(struct areq *r, size_t *offset)
{
	const char *v = aws_form_get(&r->form, "NextToken");
	long long n;

	*offset = 0;
	if (!v || !v[0])
		return 0;
	if (strncmp(v, "sim1-", 5) != 0 || aws_parse_int(v + 5, 0, 1LL << 40, &n) < 0) {
		if (r->proto == PROTO_EC2)
			fail(r, 400, "InvalidPaginationToken",
			     "The specified pagination token is not valid or is expired.");
		else
			fail(r, 400, "InvalidNextToken", "The token '%s' is invalid.", v);
		return -1;
	}
	*offset = (size_t)n;
	return 0;
}

static void x_token(struct buf *b, const char *name, size_t offset)
{
	buf_printf(b, "<%s>sim1-%zu</%s>", name, offset, name);
}

/* Is the call within the cloud's API limit? Answers throttling when not. */
static bool admit(struct areq *r, const char *group)
{
	if (sim_cloud_admit(r->f->cloud, group))
		return true;
	if (r->proto == PROTO_EC2)
		fail(r, 503, "RequestLimitExceeded", "Request limit exceeded.");
	else
		fail(r, 400, "Throttling", "Rate exceeded");
	return false;
}

/*
 * A terminate_error fault for a terminate of 'group' (NULL: any): true
 * when one fired and the answer is the refusal, in the protocol's words
 * for 'action' (AccessDenied / UnauthorizedOperation for auth).
 */
static bool terminate_refused(struct areq *r, const char *group, const char *action)
{
	enum provider_error e;
	bool ec2 = r->proto == PROTO_EC2;

	if (!sim_cloud_terminate_fault(r->f->cloud, group, &e, NULL))
		return false;
	switch (e) {
	case PROVIDER_AUTH:
		if (ec2)
			fail(r, 403, "UnauthorizedOperation", "You are not authorized to perform this operation.");
		else
			fail(r, 403, "AccessDenied",
			     "User: arn:aws:sts::%s:assumed-role/luascale/luascale-sim is not authorized to perform: autoscaling:%s because no identity-based policy allows the autoscaling:%s action",
			     r->f->conf->account, action, action);
		break;
	case PROVIDER_THROTTLED:
		if (ec2)
			fail(r, 503, "RequestLimitExceeded", "Request limit exceeded.");
		else
			fail(r, 400, "Throttling", "Rate exceeded");
		break;
	case PROVIDER_INVALID:
	case PROVIDER_NOT_FOUND:
		fail(r, 400, ec2 ? "InvalidParameterValue" : "ValidationError", "%s refused (a terminate_error fault)",
		     action);
		break;
	default:
		fail(r, 500, ec2 ? "InternalError" : "InternalFailure", "An internal error has occurred.");
		break;
	}
	return true;
}

/* ---- Auto Scaling ---- */

static const char *lifecycle(const struct sim_instance *in)
{
	switch (in->state) {
	case INSTANCE_PENDING: return "Pending";
	case INSTANCE_RUNNING: return "InService";
	case INSTANCE_STOPPING: return "Terminating";
	case INSTANCE_GONE: return "Terminated";
	}
	return "Pending";
}

/* ASG i's tags: the Cluster Autoscaler's discovery pair, then the scenario's. */
static size_t asg_tags(const struct aws_face *f, size_t i, struct sim_aws_tag *out, size_t cap)
{
	const struct sim_aws_group *g = sim_aws_group(f->aws, i);
	size_t n = 0, k;

	if (n < cap)
		out[n++] = (struct sim_aws_tag){"k8s.io/cluster-autoscaler/enabled", "true"};
	if (n < cap)
		out[n++] = (struct sim_aws_tag){f->cluster_key, "owned"};
	for (k = 0; k < g->n_tags && n < cap; k++)
		out[n++] = g->tags[k];
	return n;
}

static bool tags_match(const struct sim_aws_tag *tags, size_t n, const char *fname,
		       const char *const *values, size_t nv)
{
	size_t t, v;

	for (t = 0; t < n; t++) {
		const char *want = NULL;

		if (strcmp(fname, "tag-key") == 0)
			want = tags[t].key;
		else if (strcmp(fname, "tag-value") == 0)
			want = tags[t].value;
		else if (strncmp(fname, "tag:", 4) == 0 && strcmp(fname + 4, tags[t].key) == 0)
			want = tags[t].value;
		if (!want)
			continue;
		for (v = 0; v < nv; v++)
			if (strcmp(values[v], want) == 0)
				return true;
	}
	return false;
}

#define MAX_VALUES 64
#define MAX_FILTERS 16

struct filter {
	const char *name;
	const char *values[MAX_VALUES];
	size_t n;
};

/* Reads Filters.member.N (query) or Filter.N (ec2). 0, or -1 answered. */
static int read_filters(struct areq *r, struct filter *fl, size_t *n)
{
	bool q = r->proto == PROTO_QUERY;
	size_t i, k;

	*n = 0;
	for (i = 1;; i++) {
		const char *name = q ? form_getf(&r->form, "Filters.member.%zu.Name", i) :
				       form_getf(&r->form, "Filter.%zu.Name", i);

		if (!name)
			break;
		if (*n == MAX_FILTERS) {
			bad_param(r, q ? "Filters" : "Filter", "(too many)", "at most 16 filters");
			return -1;
		}
		fl[*n].name = name;
		fl[*n].n = 0;
		for (k = 1;; k++) {
			const char *v = q ? form_getf(&r->form, "Filters.member.%zu.Values.member.%zu", i, k) :
					    form_getf(&r->form, "Filter.%zu.Value.%zu", i, k);

			if (!v)
				break;
			if (fl[*n].n == MAX_VALUES) {
				bad_param(r, name, "(too many values)", "at most 64 values");
				return -1;
			}
			fl[*n].values[fl[*n].n++] = v;
		}
		(*n)++;
	}
	return 0;
}

/* Group i's launch template at 'version' (an ASG's "$Default", an
 * instance's number). */
static void x_lt_spec(struct buf *b, const struct aws_face *f, size_t i, const char *wrap,
		      const char *version)
{
	buf_printf(b, "<%s>", wrap);
	x_tag(b, "LaunchTemplateId", sim_aws_template_id(f->aws, i));
	x_tag(b, "LaunchTemplateName", sim_aws_group(f->aws, i)->launch_template);
	x_tag(b, "Version", version);
	buf_printf(b, "</%s>", wrap);
}

static void x_asg(struct areq *r, size_t i)
{
	struct aws_face *f = r->f;
	struct buf *b = &r->body;
	const struct node_group *ng = sim_cloud_group(f->cloud, i);
	const struct sim_aws_group *g = sim_aws_group(f->aws, i);
	struct sim_instance *const *inst;
	struct sim_aws_tag tags[80];
	size_t n, k, nt;
	char arn[400], subnet[40], version[24];

	buf_puts(b, "<member>");
	x_tag(b, "AutoScalingGroupName", ng->name);
	snprintf(arn, sizeof(arn),
		 "arn:aws:autoscaling:%s:%s:autoScalingGroup:00000000-0000-4000-8000-%012zx:autoScalingGroupName/%s",
		 f->conf->region, f->conf->account, i, ng->name);
	x_tag(b, "AutoScalingGroupARN", arn);
	if (g->n_types == 1) {
		x_lt_spec(b, f, i, "LaunchTemplate", "$Default");
	} else {
		buf_puts(b, "<MixedInstancesPolicy><LaunchTemplate>");
		x_lt_spec(b, f, i, "LaunchTemplateSpecification", "$Default");
		buf_puts(b, "<Overrides>");
		for (k = 0; k < g->n_types; k++) {
			buf_puts(b, "<member>");
			x_tag(b, "InstanceType", g->types[k]);
			buf_puts(b, "</member>");
		}
		buf_puts(b, "</Overrides></LaunchTemplate><InstancesDistribution>"
			    "<OnDemandAllocationStrategy>prioritized</OnDemandAllocationStrategy>"
			    "<OnDemandBaseCapacity>0</OnDemandBaseCapacity>"
			    "<OnDemandPercentageAboveBaseCapacity>100</OnDemandPercentageAboveBaseCapacity>"
			    "<SpotAllocationStrategy>lowest-price</SpotAllocationStrategy>"
			    "</InstancesDistribution></MixedInstancesPolicy>");
	}
	x_int(b, "MinSize", ng->min);
	x_int(b, "MaxSize", ng->max);
	x_int(b, "DesiredCapacity", sim_aws_desired(f->aws, i));
	x_int(b, "DefaultCooldown", 300);
	buf_puts(b, "<AvailabilityZones>");
	for (k = 0; k < g->n_zones; k++) {
		buf_puts(b, "<member>");
		x_esc(b, g->zones[k]);
		buf_puts(b, "</member>");
	}
	buf_puts(b, "</AvailabilityZones><LoadBalancerNames/><TargetGroupARNs/>"
		    "<HealthCheckType>EC2</HealthCheckType><HealthCheckGracePeriod>300</HealthCheckGracePeriod>"
		    "<Instances>");
	inst = sim_cloud_instances(f->cloud, i, &n);
	for (k = 0; k < n; k++) {
		buf_puts(b, "<member>");
		x_tag(b, "InstanceId", inst[k]->id);
		x_tag(b, "InstanceType", inst[k]->instance_type);
		x_tag(b, "AvailabilityZone", inst[k]->zone);
		x_tag(b, "LifecycleState", lifecycle(inst[k]));
		x_tag(b, "HealthStatus", "Healthy");
		snprintf(version, sizeof(version), "%zu", sim_aws_instance_version(inst[k]));
		x_lt_spec(b, f, i, "LaunchTemplate", version);
		x_bool(b, "ProtectedFromScaleIn", false);
		buf_puts(b, "</member>");
	}
	buf_puts(b, "</Instances>");
	/* the clock's origin: a time every ASG had before anything happened */
	x_time(b, "CreatedTime", sim_wall(f) - sim_cloud_now(f->cloud) / CLOCK_NS_PER_S);
	buf_puts(b, "<SuspendedProcesses/><VPCZoneIdentifier>");
	for (k = 0; k < g->n_zones; k++) {
		sim_aws_subnet(g->zones[k], subnet, sizeof(subnet));
		buf_printf(b, "%s%s", k ? "," : "", subnet);
	}
	buf_puts(b, "</VPCZoneIdentifier><EnabledMetrics/><Tags>");
	nt = asg_tags(f, i, tags, sizeof(tags) / sizeof(tags[0]));
	for (k = 0; k < nt; k++) {
		buf_puts(b, "<member>");
		x_tag(b, "ResourceId", ng->name);
		x_tag(b, "ResourceType", "auto-scaling-group");
		x_tag(b, "Key", tags[k].key);
		x_tag(b, "Value", tags[k].value);
		x_bool(b, "PropagateAtLaunch", true);
		buf_puts(b, "</member>");
	}
	buf_puts(b, "</Tags><TerminationPolicies><member>Default</member></TerminationPolicies>");
	x_bool(b, "NewInstancesProtectedFromScaleIn", false);
	snprintf(arn, sizeof(arn),
		 "arn:aws:iam::%s:role/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling",
		 f->conf->account);
	x_tag(b, "ServiceLinkedRoleARN", arn);
	x_bool(b, "CapacityRebalance", false);
	buf_puts(b, "</member>");
}

static bool asg_matches(struct aws_face *f, size_t i, const char *const *names, size_t n_names,
			const struct filter *fl, size_t nf)
{
	const char *name = sim_cloud_group(f->cloud, i)->name;
	struct sim_aws_tag tags[80];
	size_t k, nt;

	if (sim_aws_desired(f->aws, i) < 0)
		return false; /* a fleet group is no ASG */
	if (n_names) {
		for (k = 0; k < n_names; k++)
			if (strcmp(names[k], name) == 0)
				break;
		if (k == n_names)
			return false;
	}
	nt = asg_tags(f, i, tags, sizeof(tags) / sizeof(tags[0]));
	for (k = 0; k < nf; k++) {
		if (strcmp(fl[k].name, "auto-scaling-group") == 0) {
			size_t v;

			for (v = 0; v < fl[k].n; v++)
				if (strcmp(fl[k].values[v], name) == 0)
					break;
			if (v == fl[k].n)
				return false;
		} else if (!tags_match(tags, nt, fl[k].name, fl[k].values, fl[k].n)) {
			return false;
		}
	}
	return true;
}

static int cmp_group_name(const void *a, const void *b, void *ctx)
{
	struct aws_face *f = ctx;

	return strcmp(sim_cloud_group(f->cloud, *(const size_t *)a)->name,
		      sim_cloud_group(f->cloud, *(const size_t *)b)->name);
}

/* Group indices sorted by name (AWS lists ASGs in name order). */
static size_t *sorted_groups(struct aws_face *f, size_t *n)
{
	size_t i, *idx;

	*n = sim_cloud_n_groups(f->cloud);
	idx = calloc(*n ? *n : 1, sizeof(*idx));
	if (!idx)
		return NULL;
	for (i = 0; i < *n; i++)
		idx[i] = i;
	qsort_r(idx, *n, sizeof(*idx), cmp_group_name, f);
	return idx;
}

static void describe_asgs(struct areq *r)
{
	struct aws_face *f = r->f;
	const char *names[1600];
	struct filter fl[MAX_FILTERS];
	size_t n_names = 0, nf, offset, i, ng, shown = 0, *idx;
	long long max = 50;

	for (i = 1;; i++) {
		const char *v = form_getf(&r->form, "AutoScalingGroupNames.member.%zu", i);

		if (!v)
			break;
		if (n_names == sizeof(names) / sizeof(names[0])) {
			bad_param(r, "AutoScalingGroupNames", "(too many)",
				  "Member must have length less than or equal to 1600");
			return;
		}
		names[n_names++] = v;
	}
	if (read_filters(r, fl, &nf) < 0 || param_int(r, "MaxRecords", 1, 100, &max, false) < 0 ||
	    param_token(r, &offset) < 0)
		return;
	for (i = 0; i < nf; i++) {
		if (strcmp(fl[i].name, "tag-key") != 0 && strcmp(fl[i].name, "tag-value") != 0 &&
		    strncmp(fl[i].name, "tag:", 4) != 0 &&
		    strcmp(fl[i].name, "auto-scaling-group") != 0) {
			fail(r, 400, "ValidationError", "Filter type %s is not correct. Allowed Filter types are: auto-scaling-group tag-key tag-value tag:<key>",
			     fl[i].name);
			return;
		}
	}
	if (!admit(r, NULL))
		return;
	idx = sorted_groups(f, &ng);
	if (!idx) {
		fail(r, 500, "InternalFailure", "out of memory");
		return;
	}
	ok_begin(r);
	buf_puts(&r->body, "<AutoScalingGroups>");
	sim_cloud_lock(f->cloud);
	{
		size_t seen = 0;

		for (i = 0; i < ng; i++) {
			if (!asg_matches(f, idx[i], names, n_names, fl, nf))
				continue;
			if (seen++ < offset)
				continue;
			if (shown == (size_t)max) {
				shown++;
				break;
			}
			x_asg(r, idx[i]);
			shown++;
		}
	}
	sim_cloud_unlock(f->cloud);
	buf_puts(&r->body, "</AutoScalingGroups>");
	if (shown > (size_t)max)
		x_token(&r->body, "NextToken", offset + (size_t)max);
	ok_end(r, true);
	free(idx);
}

/* The index of the ASG named by parameter 'param', or -1 answered. */
static int asg_param(struct areq *r, const char *param)
{
	const char *name = aws_form_get(&r->form, param);
	int gi;

	if (!name || !name[0]) {
		bad_param(r, param, NULL, NULL);
		return -1;
	}
	gi = sim_cloud_find_group(r->f->cloud, name);
	if (gi < 0 || sim_aws_desired(r->f->aws, (size_t)gi) < 0) {
		fail(r, 400, "ValidationError", "AutoScalingGroup name not found - AutoScalingGroup %s not found",
		     name);
		return -1;
	}
	return gi;
}

static void set_desired(struct areq *r)
{
	long long desired = 0;
	int64_t delay;
	bool honor = false;
	struct errbuf err;
	int gi, rc;

	if ((gi = asg_param(r, "AutoScalingGroupName")) < 0 ||
	    param_int(r, "DesiredCapacity", 0, 1000000, &desired, true) < 0 ||
	    param_bool(r, "HonorCooldown", &honor, false) < 0)
		return;
	if (!admit(r, sim_cloud_group(r->f->cloud, (size_t)gi)->name))
		return;
	/* a slow_resize fault: the write lands (and is answered) only later */
	delay = sim_cloud_resize_delay(r->f->cloud, sim_cloud_group(r->f->cloud, (size_t)gi)->name);
	if (delay > 0)
		face_http_sleep_ns(delay);
	sim_cloud_lock(r->f->cloud);
	rc = sim_aws_set_desired(r->f->aws, (size_t)gi, (int)desired, &err);
	sim_cloud_unlock(r->f->cloud);
	if (rc < 0) {
		fail(r, 400, "ValidationError", "%s", err.msg);
		return;
	}
	r->drop = sim_cloud_lose_answer(r->f->cloud, sim_cloud_group(r->f->cloud, (size_t)gi)->name);
	log_at(r->f->o.log, LOG_INFO, real_wall(), "sim aws: SetDesiredCapacity %s = %lld",
	       sim_cloud_group(r->f->cloud, (size_t)gi)->name, desired);
	ok_bare(r);
	ok_end(r, false);
}

/* One activity; 'member': as a list item, else the fields alone. */
static void x_activity(struct areq *r, const struct sim_aws_activity *a, bool member)
{
	struct aws_face *f = r->f;
	struct buf *b = &r->body;
	const char *name = sim_cloud_group(f->cloud, a->group)->name;
	char details[200], subnet[40];

	if (member)
		buf_puts(b, "<member>");
	x_tag(b, "ActivityId", a->id);
	x_tag(b, "AutoScalingGroupName", name);
	x_tag(b, "Description", a->description);
	x_tag(b, "Cause", a->cause);
	x_time(b, "StartTime", a->start_wall);
	if (a->end_wall >= 0)
		x_time(b, "EndTime", a->end_wall);
	x_tag(b, "StatusCode", a->status);
	if (a->message[0])
		x_tag(b, "StatusMessage", a->message);
	x_int(b, "Progress", strcmp(a->status, "InProgress") == 0 ? 50 : 100);
	sim_aws_subnet(sim_aws_group(f->aws, a->group)->zones[0], subnet, sizeof(subnet));
	snprintf(details, sizeof(details), "{\"Subnet ID\":\"%s\",\"Availability Zone\":\"%s\"}",
		 subnet, sim_aws_group(f->aws, a->group)->zones[0]);
	x_tag(b, "Details", details);
	if (member)
		buf_puts(b, "</member>");
}

static void describe_activities(struct areq *r)
{
	struct aws_face *f = r->f;
	const char *name = aws_form_get(&r->form, "AutoScalingGroupName");
	const char *ids[50];
	size_t n_ids = 0, offset, i, seen = 0, shown = 0, ng;
	long long max = 100;
	bool deleted = false, more = false;
	int only = -1;

	for (i = 1;; i++) {
		const char *v = form_getf(&r->form, "ActivityIds.member.%zu", i);

		if (!v)
			break;
		if (n_ids == 50) {
			bad_param(r, "ActivityIds", "(too many)",
				  "Member must have length less than or equal to 50");
			return;
		}
		ids[n_ids++] = v;
	}
	if (param_int(r, "MaxRecords", 1, 100, &max, false) < 0 || param_token(r, &offset) < 0 ||
	    param_bool(r, "IncludeDeletedGroups", &deleted, false) < 0)
		return;
	if (name) {
		only = sim_cloud_find_group(f->cloud, name);
		if (only >= 0 && sim_aws_desired(f->aws, (size_t)only) < 0)
			only = -1;
		if (only < 0) {
			/* AWS answers an unknown group with no activities */
			if (!admit(r, NULL))
				return;
			ok_begin(r);
			buf_puts(&r->body, "<Activities/>");
			ok_end(r, true);
			return;
		}
	}
	if (!admit(r, name))
		return;
	ok_begin(r);
	buf_puts(&r->body, "<Activities>");
	ng = sim_cloud_n_groups(f->cloud);
	sim_cloud_lock(f->cloud);
	for (i = 0; i < ng && !more; i++) {
		const struct sim_aws_activity *acts;
		size_t n, k;

		if ((only >= 0 && (size_t)only != i) || sim_aws_desired(f->aws, i) < 0)
			continue;
		acts = sim_aws_activities(f->aws, i, &n);
		for (k = n; k-- > 0;) {
			size_t j;

			for (j = 0; j < n_ids; j++)
				if (strcmp(ids[j], acts[k].id) == 0)
					break;
			if (n_ids && j == n_ids)
				continue;
			if (seen++ < offset)
				continue;
			if (shown == (size_t)max) {
				more = true;
				break;
			}
			x_activity(r, &acts[k], true);
			shown++;
		}
	}
	sim_cloud_unlock(f->cloud);
	buf_puts(&r->body, "</Activities>");
	if (more)
		x_token(&r->body, "NextToken", offset + (size_t)max);
	ok_end(r, true);
}

static void terminate_in_asg(struct areq *r)
{
	const char *id = aws_form_get(&r->form, "InstanceId"), *group;
	const struct sim_instance *in;
	struct sim_aws_activity act;
	struct errbuf err;
	bool decrement = false;
	int rc;

	if (!id || !id[0]) {
		bad_param(r, "InstanceId", NULL, NULL);
		return;
	}
	if (strlen(id) > 19) {
		bad_param(r, "InstanceId", id, "Member must have length less than or equal to 19");
		return;
	}
	if (param_bool(r, "ShouldDecrementDesiredCapacity", &decrement, true) < 0)
		return;
	if (!admit(r, NULL))
		return;
	sim_cloud_lock(r->f->cloud);
	in = sim_cloud_find_instance(r->f->cloud, id);
	group = in ? sim_cloud_group(r->f->cloud, in->group)->name : NULL;
	sim_cloud_unlock(r->f->cloud);
	if (terminate_refused(r, group, "TerminateInstanceInAutoScalingGroup"))
		return;
	sim_cloud_lock(r->f->cloud);
	rc = sim_aws_terminate_in_asg(r->f->aws, id, decrement, &act, &err);
	if (rc == 0) {
		ok_begin(r);
		buf_puts(&r->body, "<Activity>");
		x_activity(r, &act, false);
		buf_puts(&r->body, "</Activity>");
		ok_end(r, true);
	}
	sim_cloud_unlock(r->f->cloud);
	if (rc < 0) {
		fail(r, 400, "ValidationError", "%s", err.msg);
		return;
	}
	log_at(r->f->o.log, LOG_INFO, real_wall(),
	       "sim aws: TerminateInstanceInAutoScalingGroup %s (decrement %s)", id,
	       decrement ? "true" : "false");
	r->drop = sim_cloud_lose_answer(r->f->cloud, group);
}

/* ---- EC2 ---- */

static void state_of(const struct sim_instance *in, int *code, const char **name)
{
	switch (in->state) {
	case INSTANCE_PENDING: *code = 0; *name = "pending"; return;
	case INSTANCE_RUNNING: *code = 16; *name = "running"; return;
	case INSTANCE_STOPPING: *code = 32; *name = "shutting-down"; return;
	case INSTANCE_GONE: *code = 48; *name = "terminated"; return;
	}
	*code = 0;
	*name = "pending";
}

/* Every tag of an instance: where it came from (ASG, fleet, template), then
 * its own. The launch template version's text is in 'version'. */
static size_t instance_tags(const struct aws_face *f, const struct sim_instance *in,
			    struct sim_aws_tag *out, size_t cap, char version[24])
{
	const char *fleet = sim_aws_instance_fleet(in);
	const struct sim_aws_tag *own;
	size_t n = 0, k, no;

	if (sim_aws_desired(f->aws, in->group) >= 0) {
		if (n < cap)
			out[n++] = (struct sim_aws_tag){"aws:autoscaling:groupName",
							sim_cloud_group(f->cloud, in->group)->name};
		n += asg_tags(f, in->group, out + n, cap - n);
	} else {
		const struct sim_aws_group *g = sim_aws_group(f->aws, in->group);

		if (fleet && n < cap)
			out[n++] = (struct sim_aws_tag){"aws:ec2:fleet-id", fleet};
		for (k = 0; k < g->n_tags && n < cap; k++)
			out[n++] = g->tags[k];
	}
	if (n < cap)
		out[n++] = (struct sim_aws_tag){"aws:ec2launchtemplate:id",
						sim_aws_template_id(f->aws, in->group)};
	snprintf(version, 24, "%zu", sim_aws_instance_version(in));
	if (n < cap)
		out[n++] = (struct sim_aws_tag){"aws:ec2launchtemplate:version", version};
	own = sim_aws_instance_tags(in, &no);
	for (k = 0; k < no && n < cap; k++)
		out[n++] = own[k];
	return n;
}

static void x_state(struct buf *b, const char *wrap, const struct sim_instance *in)
{
	const char *name;
	int code;

	state_of(in, &code, &name);
	buf_printf(b, "<%s>", wrap);
	x_int(b, "code", code);
	x_tag(b, "name", name);
	buf_printf(b, "</%s>", wrap);
}

static void x_instance(struct areq *r, const struct sim_instance *in)
{
	struct aws_face *f = r->f;
	struct buf *b = &r->body;
	const struct sim_aws_type *t = sim_aws_find_type(f->aws, in->instance_type);
	struct sim_aws_tag tags[96];
	char version[24];
	char subnet[40];
	size_t k, nt;

	buf_printf(b, "<item><reservationId>r-0%016llx</reservationId>",
		   (unsigned long long)strtoull(in->id + 3, NULL, 16) ^ 0x5bd1e995ULL);
	x_tag(b, "ownerId", f->conf->account);
	buf_puts(b, "<groupSet/><instancesSet><item>");
	x_tag(b, "instanceId", in->id);
	if (in->image[0])
		x_tag(b, "imageId", in->image);
	x_state(b, "instanceState", in);
	x_tag(b, "privateDnsName", in->state == INSTANCE_GONE ? "" : in->node_name);
	buf_puts(b, "<dnsName/><reason/>");
	x_int(b, "amiLaunchIndex", 0);
	buf_puts(b, "<productCodes/>");
	x_tag(b, "instanceType", in->instance_type);
	x_time(b, "launchTime", launch_wall(f, in));
	buf_puts(b, "<placement>");
	x_tag(b, "availabilityZone", in->zone);
	buf_puts(b, "<groupName/><tenancy>default</tenancy></placement>"
		    "<monitoring><state>disabled</state></monitoring>");
	if (in->state != INSTANCE_GONE) {
		sim_aws_subnet(in->zone, subnet, sizeof(subnet));
		x_tag(b, "subnetId", subnet);
		x_tag(b, "vpcId", "vpc-0123456789abcdef0");
		x_tag(b, "privateIpAddress", in->private_ip);
	}
	x_bool(b, "sourceDestCheck", true);
	buf_puts(b, "<groupSet/>");
	x_tag(b, "architecture", t && t->arch ? t->arch : "x86_64");
	buf_puts(b, "<rootDeviceType>ebs</rootDeviceType><rootDeviceName>/dev/xvda</rootDeviceName>"
		    "<blockDeviceMapping/><virtualizationType>hvm</virtualizationType><tagSet>");
	nt = instance_tags(f, in, tags, sizeof(tags) / sizeof(tags[0]), version);
	for (k = 0; k < nt; k++) {
		buf_puts(b, "<item>");
		x_tag(b, "key", tags[k].key);
		x_tag(b, "value", tags[k].value);
		buf_puts(b, "</item>");
	}
	buf_puts(b, "</tagSet><hypervisor>xen</hypervisor>");
	x_bool(b, "ebsOptimized", false);
	x_bool(b, "enaSupport", true);
	buf_puts(b, "</item></instancesSet></item>");
}

static bool valid_instance_id(const char *id)
{
	size_t n = strlen(id), i;

	if (n < 3 || n > 19 || strncmp(id, "i-", 2) != 0)
		return false;
	for (i = 2; i < n; i++)
		if (textparse_hexval(id[i]) < 0 || (id[i] >= 'A' && id[i] <= 'F'))
			return false;
	return true;
}

/* Reads InstanceId.N (at most 'cap'): the count, or -1 answered. */
static long read_instance_ids(struct areq *r, const char **ids, size_t cap)
{
	size_t n = 0, i;

	for (i = 1;; i++) {
		const char *v = form_getf(&r->form, "InstanceId.%zu", i);

		if (!v)
			break;
		if (n == cap) {
			fail(r, 400, "InvalidParameterValue",
			     "The maximum number of instance IDs in a request is %zu", cap);
			return -1;
		}
		if (!valid_instance_id(v)) {
			fail(r, 400, "InvalidInstanceID.Malformed", "Invalid id: \"%s\"", v);
			return -1;
		}
		ids[n++] = v;
	}
	return (long)n;
}

static bool instance_matches(struct aws_face *f, const struct sim_instance *in,
			     const struct filter *fl, size_t nf)
{
	struct sim_aws_tag tags[96];
	char version[24];
	size_t k, v, nt = 0;
	bool have_tags = false;

	for (k = 0; k < nf; k++) {
		const char *field = NULL;
		char code[8];

		if (strcmp(fl[k].name, "instance-state-name") == 0) {
			int c;

			state_of(in, &c, &field);
		} else if (strcmp(fl[k].name, "instance-state-code") == 0) {
			int c;
			const char *nm;

			state_of(in, &c, &nm);
			snprintf(code, sizeof(code), "%d", c);
			field = code;
		} else if (strcmp(fl[k].name, "instance-id") == 0) {
			field = in->id;
		} else if (strcmp(fl[k].name, "availability-zone") == 0) {
			field = in->zone;
		} else if (strcmp(fl[k].name, "instance-type") == 0) {
			field = in->instance_type;
		} else if (strcmp(fl[k].name, "private-dns-name") == 0) {
			field = in->node_name;
		} else if (strcmp(fl[k].name, "image-id") == 0) {
			field = in->image;
		}
		if (field) {
			for (v = 0; v < fl[k].n; v++)
				if (strcmp(fl[k].values[v], field) == 0)
					break;
			if (v == fl[k].n)
				return false;
			continue;
		}
		if (!have_tags) {
			nt = instance_tags(f, in, tags, sizeof(tags) / sizeof(tags[0]), version);
			have_tags = true;
		}
		if (!tags_match(tags, nt, fl[k].name, fl[k].values, fl[k].n))
			return false;
	}
	return true;
}

static bool known_instance_filter(const char *name)
{
	static const char *const names[] = {"instance-state-name", "instance-state-code",
					    "instance-id", "availability-zone", "instance-type",
					    "private-dns-name", "tag-key", "tag-value", "image-id", NULL};
	size_t i;

	if (strncmp(name, "tag:", 4) == 0 && name[4])
		return true;
	for (i = 0; names[i]; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

static void describe_instances(struct areq *r)
{
	struct aws_face *f = r->f;
	const char *ids[1000];
	struct filter fl[MAX_FILTERS];
	size_t nf, offset, i, n, seen = 0, shown = 0;
	long long max = 1000;
	bool more = false;
	long nid = read_instance_ids(r, ids, 1000);

	if (nid < 0 || read_filters(r, fl, &nf) < 0 ||
	    param_int(r, "MaxResults", 5, 1000, &max, false) < 0 || param_token(r, &offset) < 0)
		return;
	if (nid && aws_form_get(&r->form, "MaxResults")) {
		fail(r, 400, "InvalidParameterCombination",
		     "The parameter instancesSet cannot be used with the parameter maxResults");
		return;
	}
	for (i = 0; i < nf; i++) {
		if (!known_instance_filter(fl[i].name)) {
			fail(r, 400, "InvalidParameterValue", "The filter '%s' is invalid", fl[i].name);
			return;
		}
	}
	if (!admit(r, NULL))
		return;
	sim_cloud_lock(f->cloud);
	for (i = 0; i < (size_t)nid; i++) {
		if (!sim_cloud_find_instance(f->cloud, ids[i])) {
			sim_cloud_unlock(f->cloud);
			fail(r, 400, "InvalidInstanceID.NotFound", "The instance ID '%s' does not exist",
			     ids[i]);
			return;
		}
	}
	ok_begin(r);
	buf_puts(&r->body, "<reservationSet>");
	n = sim_cloud_n_all(f->cloud);
	for (i = 0; i < n; i++) {
		const struct sim_instance *in = sim_cloud_all_at(f->cloud, i);
		long k;

		for (k = 0; k < nid; k++)
			if (strcmp(ids[k], in->id) == 0)
				break;
		if (nid && k == nid)
			continue;
		if (!instance_matches(f, in, fl, nf))
			continue;
		if (seen++ < offset)
			continue;
		if (shown == (size_t)max) {
			more = true;
			break;
		}
		x_instance(r, in);
		shown++;
	}
	sim_cloud_unlock(f->cloud);
	buf_puts(&r->body, "</reservationSet>");
	if (more)
		x_token(&r->body, "nextToken", offset + (size_t)max);
	ok_end(r, true);
}

static void terminate_instances(struct areq *r)
{
	struct aws_face *f = r->f;
	const char *ids[1000], *group;
	long nid = read_instance_ids(r, ids, 1000), i;

	if (nid < 0)
		return;
	if (nid == 0) {
		bad_param(r, "InstanceId", NULL, NULL);
		return;
	}
	if (!admit(r, NULL))
		return;
	sim_cloud_lock(f->cloud);
	for (i = 0; i < nid; i++) {
		if (!sim_cloud_find_instance(f->cloud, ids[i])) {
			sim_cloud_unlock(f->cloud);
			fail(r, 400, "InvalidInstanceID.NotFound", "The instance ID '%s' does not exist",
			     ids[i]);
			return;
		}
	}
	group = sim_cloud_group(f->cloud, sim_cloud_find_instance(f->cloud, ids[0])->group)->name;
	sim_cloud_unlock(f->cloud);
	if (terminate_refused(r, group, "TerminateInstances"))
		return;
	sim_cloud_lock(f->cloud);
	ok_begin(r);
	buf_puts(&r->body, "<instancesSet>");
	for (i = 0; i < nid; i++) {
		struct sim_instance *in = sim_cloud_find_instance(f->cloud, ids[i]);

		buf_puts(&r->body, "<item>");
		x_tag(&r->body, "instanceId", in->id);
		x_state(&r->body, "previousState", in);
		if (sim_aws_terminate(f->aws, in))
			log_at(f->o.log, LOG_INFO, real_wall(), "sim aws: TerminateInstances %s",
			       in->id);
		x_state(&r->body, "currentState", in);
		buf_puts(&r->body, "</item>");
	}
	sim_cloud_unlock(f->cloud);
	buf_puts(&r->body, "</instancesSet>");
	ok_end(r, true);
	r->drop = sim_cloud_lose_answer(f->cloud, group);
}

static void x_type(struct buf *b, const struct sim_aws_type *t)
{
	buf_puts(b, "<item>");
	x_tag(b, "instanceType", t->name);
	x_bool(b, "currentGeneration", true);
	x_bool(b, "freeTierEligible", false);
	buf_puts(b, "<supportedUsageClasses><item>on-demand</item><item>spot</item></supportedUsageClasses>"
		    "<supportedRootDeviceTypes><item>ebs</item></supportedRootDeviceTypes>"
		    "<supportedVirtualizationTypes><item>hvm</item></supportedVirtualizationTypes>");
	x_bool(b, "bareMetal", false);
	x_tag(b, "hypervisor", "nitro");
	buf_puts(b, "<processorInfo><supportedArchitectures><item>");
	x_esc(b, t->arch ? t->arch : "x86_64");
	buf_puts(b, "</item></supportedArchitectures></processorInfo><vCpuInfo>");
	x_int(b, "defaultVCpus", t->vcpus);
	x_int(b, "defaultCores", t->vcpus > 1 ? t->vcpus / 2 : 1);
	x_int(b, "defaultThreadsPerCore", t->vcpus > 1 ? 2 : 1);
	buf_puts(b, "</vCpuInfo><memoryInfo>");
	x_int(b, "sizeInMiB", t->memory_mib);
	buf_puts(b, "</memoryInfo>");
	x_bool(b, "instanceStorageSupported", false);
	if (t->gpus > 0) {
		buf_puts(b, "<gpuInfo><gpus><item>");
		x_tag(b, "name", t->gpu_name ? t->gpu_name : "T4");
		x_tag(b, "manufacturer", t->gpu_manufacturer ? t->gpu_manufacturer : "NVIDIA");
		x_int(b, "count", t->gpus);
		buf_puts(b, "<memoryInfo>");
		x_int(b, "sizeInMiB", t->gpu_memory_mib);
		buf_puts(b, "</memoryInfo></item></gpus>");
		x_int(b, "totalGpuMemoryInMiB", t->gpu_memory_mib * t->gpus);
		buf_puts(b, "</gpuInfo>");
	}
	x_bool(b, "hibernationSupported", false);
	x_bool(b, "burstablePerformanceSupported", strncmp(t->name, "t", 1) == 0);
	buf_puts(b, "</item>");
}

/* InstanceType.1..N into 'names' (room for 100, EC2's limit). */
static int read_type_names(struct areq *r, const char *names[100], size_t *n)
{
	size_t i;

	*n = 0;
	for (i = 1;; i++) {
		const char *v = form_getf(&r->form, "InstanceType.%zu", i);

		if (!v)
			return 0;
		if (*n == 100) {
			fail(r, 400, "InvalidParameterValue",
			     "The maximum number of instance types in a request is 100");
			return -1;
		}
		names[(*n)++] = v;
	}
}

static void describe_instance_types(struct areq *r)
{
	struct aws_face *f = r->f;
	const char *names[100];
	size_t n = 0, i, nt, offset, shown = 0;
	long long max = 100;
	struct filter fl[MAX_FILTERS];
	size_t nf;

	if (read_type_names(r, names, &n) < 0)
		return;
	if (read_filters(r, fl, &nf) < 0 || param_int(r, "MaxResults", 5, 100, &max, false) < 0 ||
	    param_token(r, &offset) < 0)
		return;
	if (nf) {
		fail(r, 400, "InvalidParameterValue",
		     "The simulator's DescribeInstanceTypes takes InstanceType.N, not filters ('%s')",
		     fl[0].name);
		return;
	}
	for (i = 0; i < n; i++) {
		if (!sim_aws_find_type(f->aws, names[i])) {
			fail(r, 400, "InvalidInstanceType",
			     "The following supplied instance types do not exist: [%s]", names[i]);
			return;
		}
	}
	if (!admit(r, NULL))
		return;
	ok_begin(r);
	buf_puts(&r->body, "<instanceTypeSet>");
	if (n) {
		for (i = 0; i < n; i++)
			x_type(&r->body, sim_aws_find_type(f->aws, names[i]));
	} else {
		sim_aws_type_at(f->aws, 0, &nt);
		for (i = offset; i < nt && shown < (size_t)max; i++, shown++)
			x_type(&r->body, sim_aws_type_at(f->aws, i, &nt));
	}
	buf_puts(&r->body, "</instanceTypeSet>");
	if (!n && offset + shown < nt)
		x_token(&r->body, "nextToken", offset + shown);
	ok_end(r, true);
}

/* ---- launch templates: one a group, with versions ---- */

/* DryRun=true: answered DryRunOperation (the checks passed); true when answered. */
static bool dry_run(struct areq *r)
{
	bool dry = false;

	if (param_bool(r, "DryRun", &dry, false) < 0)
		return true;
	if (dry)
		fail(r, 412, "DryRunOperation", "Request would have succeeded, but DryRun flag is set.");
	return dry;
}

/* The template a request names by LaunchTemplateName or LaunchTemplateId
 * (one of them): its group, or -1 answered. */
static int lt_param(struct areq *r)
{
	const char *name = aws_form_get(&r->form, "LaunchTemplateName");
	const char *id = aws_form_get(&r->form, "LaunchTemplateId");
	int gi;

	if (name && id) {
		fail(r, 400, "InvalidParameterCombination",
		     "Specify either LaunchTemplateName or LaunchTemplateId, not both");
		return -1;
	}
	if (!name && !id) {
		fail(r, 400, "MissingParameter",
		     "The request must contain the parameter LaunchTemplateName or LaunchTemplateId");
		return -1;
	}
	if (name && (strlen(name) < 3 || strlen(name) > 128 ||
		     strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789().-/_") !=
			     strlen(name))) {
		bad_param(r, "LaunchTemplateName", name, "3 to 128 of [a-zA-Z0-9().-/_]");
		return -1;
	}
	sim_cloud_lock(r->f->cloud);
	gi = sim_aws_find_template(r->f->aws, name, id);
	sim_cloud_unlock(r->f->cloud);
	if (gi >= 0)
		return gi;
	if (name)
		fail(r, 400, "InvalidLaunchTemplateName.NotFoundException",
		     "At least one of the launch templates specified in the request does not exist.");
	else
		fail(r, 400, "InvalidLaunchTemplateId.NotFound",
		     "The specified launch template, with template ID %s, does not exist.", id);
	return -1;
}

static void version_not_found(struct areq *r, const char *v)
{
	fail(r, 400, "InvalidLaunchTemplateId.VersionNotFound", "Could not find launch template version %s", v);
}

/* Version 'number' of group gi's template, as a launchTemplateVersion
 * (wrap). Lock held. */
static void x_lt_version(struct areq *r, size_t gi, size_t number, const char *wrap)
{
	struct aws_face *f = r->f;
	struct buf *b = &r->body;
	const struct sim_aws_group *g = sim_aws_group(f->aws, gi);
	const struct sim_aws_lt_version *v;
	size_t n, dflt, k;
	char arn[200];

	v = sim_aws_lt_versions(f->aws, gi, &n, &dflt) + number - 1;
	buf_printf(b, "<%s>", wrap);
	x_tag(b, "launchTemplateId", sim_aws_template_id(f->aws, gi));
	x_tag(b, "launchTemplateName", g->launch_template);
	x_int(b, "versionNumber", (long long)number);
	if (v->description[0])
		x_tag(b, "versionDescription", v->description);
	x_time(b, "createTime", v->created_wall);
	snprintf(arn, sizeof(arn), "arn:aws:iam::%s:root", f->conf->account);
	x_tag(b, "createdBy", arn);
	x_bool(b, "defaultVersion", number == dflt);
	buf_puts(b, "<launchTemplateData>");
	if (v->image[0])
		x_tag(b, "imageId", v->image); /* an AMI id: nothing for ResolveAlias to resolve */
	x_tag(b, "instanceType", g->types[0]);
	buf_puts(b, "<tagSpecificationSet><item><resourceType>instance</resourceType><tagSet>");
	for (k = 0; k < g->n_tags; k++) {
		buf_puts(b, "<item>");
		x_tag(b, "key", g->tags[k].key);
		x_tag(b, "value", g->tags[k].value);
		buf_puts(b, "</item>");
	}
	buf_puts(b, "</tagSet></item></tagSpecificationSet></launchTemplateData>");
	buf_printf(b, "</%s>", wrap);
}

/* The versions LaunchTemplateVersion.N name, in order, once each: their
 * count (0: none named), or -1 answered. Lock held. */
static long asked_versions(struct areq *r, size_t gi, size_t *out, size_t cap)
{
	size_t i, k, n = 0;

	for (i = 1;; i++) {
		const char *v = form_getf(&r->form, "LaunchTemplateVersion.%zu", i);
		size_t number;

		if (!v)
			break;
		number = sim_aws_lt_version_find(r->f->aws, gi, v);
		if (!number || !v[0]) {
			version_not_found(r, v);
			return -1;
		}
		for (k = 0; k < n && out[k] != number; k++)
			;
		if (k == n && n < cap)
			out[n++] = number;
	}
	return (long)n;
}

/* DescribeLaunchTemplateVersions of one template: the versions asked
 * ($Default, $Latest, numbers), or all of them (MaxResults, NextToken). */
static void describe_lt_versions(struct areq *r)
{
	struct aws_face *f = r->f;
	size_t asked[200], n, dflt, offset, i, shown = 0;
	long long max = 200;
	bool resolve = false;
	long na;
	int gi;

	if ((gi = lt_param(r)) < 0 || param_bool(r, "ResolveAlias", &resolve, false) < 0 ||
	    param_int(r, "MaxResults", 1, 200, &max, false) < 0 || param_token(r, &offset) < 0 ||
	    dry_run(r))
		return;
	sim_cloud_lock(f->cloud);
	na = asked_versions(r, (size_t)gi, asked, sizeof(asked) / sizeof(asked[0]));
	sim_cloud_unlock(f->cloud);
	if (na < 0 || !admit(r, NULL))
		return;
	sim_cloud_lock(f->cloud);
	sim_aws_lt_versions(f->aws, (size_t)gi, &n, &dflt);
	ok_begin(r);
	buf_puts(&r->body, "<launchTemplateVersionSet>");
	for (i = 0; i < (size_t)na; i++)
		x_lt_version(r, (size_t)gi, asked[i], "item");
	for (i = offset; !na && i < n && shown < (size_t)max; i++, shown++)
		x_lt_version(r, (size_t)gi, i + 1, "item");
	buf_puts(&r->body, "</launchTemplateVersionSet>");
	if (!na && offset + shown < n)
		x_token(&r->body, "nextToken", offset + shown);
	sim_cloud_unlock(f->cloud);
	ok_end(r, true);
}

/* LaunchTemplateData.ImageId: NULL when absent, "" answered when bad. */
static const char *param_image(struct areq *r)
{
	const char *v = aws_form_get(&r->form, "LaunchTemplateData.ImageId");
	size_t n;

	if (!v)
		return NULL;
	if (!strncmp(v, "resolve:ssm:", 12)) {
		fail(r, 400, "InvalidParameterValue",
		     "The simulator has no Systems Manager parameter to resolve: '%s'", v);
		return "";
	}
	n = strlen(v);
	if (strncmp(v, "ami-", 4) || (n != 12 && n != 21) || strspn(v + 4, "0123456789abcdef") != n - 4) {
		fail(r, 400, "InvalidAMIID.Malformed", "Invalid id: \"%s\" (expecting \"ami-...\")", v);
		return "";
	}
	return v;
}

/* What CreateLaunchTemplateVersion may set: LaunchTemplateData.ImageId
 * alone (the simulator's versions differ by image). false answered. */
static bool only_image_data(struct areq *r)
{
	size_t i, seen = 0;

	for (i = 0; i < r->form.n; i++) {
		if (strncmp(r->form.keys[i], "LaunchTemplateData.", 19))
			continue;
		seen++;
		if (strcmp(r->form.keys[i], "LaunchTemplateData.ImageId")) {
			fail(r, 400, "InvalidParameterValue",
			     "The simulator's launch template versions set ImageId only, not %s",
			     r->form.keys[i]);
			return false;
		}
	}
	if (!seen)
		fail(r, 400, "MissingParameter", "The request must contain the parameter LaunchTemplateData");
	return seen > 0;
}

/* A ClientToken (at most 128 ASCII characters): 0, or -1 answered. */
static int param_client_token(struct areq *r, const char **out)
{
	const char *t = aws_form_get(&r->form, "ClientToken");
	size_t i;

	*out = t;
	for (i = 0; t && t[i]; i++)
		if ((unsigned char)t[i] < 0x20 || (unsigned char)t[i] > 0x7e)
			break;
	if (t && (!t[0] || t[i] || i > 128)) {
		bad_param(r, "ClientToken", t, "at most 128 ASCII characters");
		return -1;
	}
	return 0;
}

/* CreateLaunchTemplateVersion: a new version (SourceVersion's copy) with
 * LaunchTemplateData.ImageId; answers it. */
static void create_lt_version(struct areq *r)
{
	struct aws_face *f = r->f;
	const char *src = aws_form_get(&r->form, "SourceVersion");
	const char *desc = aws_form_get(&r->form, "VersionDescription");
	const char *image, *token;
	size_t source = 0, number, n, dflt;
	bool resolve = false;
	struct errbuf err;
	int gi;

	if ((gi = lt_param(r)) < 0 || !only_image_data(r))
		return;
	image = param_image(r);
	if ((image && !image[0]) || param_bool(r, "ResolveAlias", &resolve, false) < 0 ||
	    param_client_token(r, &token) < 0)
		return;
	if (desc && strlen(desc) > 255) {
		bad_param(r, "VersionDescription", desc, "at most 255 characters");
		return;
	}
	sim_cloud_lock(f->cloud);
	if (src && (src[0] == '$' || !(source = sim_aws_lt_version_find(f->aws, (size_t)gi, src)))) {
		sim_cloud_unlock(f->cloud);
		version_not_found(r, src);
		return;
	}
	sim_cloud_unlock(f->cloud);
	if (dry_run(r) || !admit(r, NULL))
		return;
	sim_cloud_lock(f->cloud);
	/* a ClientToken seen before answers the version it made */
	number = sim_aws_lt_version_by_token(f->aws, (size_t)gi, token);
	if (number && image &&
	    strcmp(image, sim_aws_lt_versions(f->aws, (size_t)gi, &n, &dflt)[number - 1].image)) {
		sim_cloud_unlock(f->cloud);
		fail(r, 400, "IdempotentParameterMismatch",
		     "Client token '%s' was used with other parameters", token);
		return;
	}
	if (!number &&
	    sim_aws_lt_version_create(f->aws, (size_t)gi, source, image, desc, token, &number, &err) < 0) {
		sim_cloud_unlock(f->cloud);
		fail(r, 400, "VersionLimitExceeded", "%s", err.msg);
		return;
	}
	ok_begin(r);
	x_lt_version(r, (size_t)gi, number, "launchTemplateVersion");
	sim_cloud_unlock(f->cloud);
	ok_end(r, true);
	log_at(f->o.log, LOG_INFO, real_wall(), "sim aws: CreateLaunchTemplateVersion %s: version %zu%s%s",
	       sim_aws_group(f->aws, (size_t)gi)->launch_template, number, image ? ", image " : "",
	       image ? image : "");
	r->drop = sim_cloud_lose_answer(f->cloud, sim_cloud_group(f->cloud, (size_t)gi)->name);
}

/* ModifyLaunchTemplate: SetDefaultVersion (DefaultVersion too) makes a
 * version the default, which its ASG launches from then on. */
static void modify_lt(struct areq *r)
{
	struct aws_face *f = r->f;
	const char *v = aws_form_get(&r->form, "SetDefaultVersion");
	const char *token;
	size_t number = 0, n, dflt;
	char arn[200];
	int gi;

	if (!v)
		v = aws_form_get(&r->form, "DefaultVersion");
	if ((gi = lt_param(r)) < 0 || param_client_token(r, &token) < 0)
		return;
	if (v && (v[0] < '1' || v[0] > '9' || strspn(v, "0123456789") != strlen(v))) {
		bad_param(r, "SetDefaultVersion", v, "a version number");
		return;
	}
	sim_cloud_lock(f->cloud);
	number = v ? sim_aws_lt_version_find(f->aws, (size_t)gi, v) : 0;
	sim_cloud_unlock(f->cloud);
	if (v && !number) {
		version_not_found(r, v);
		return;
	}
	if (dry_run(r) || !admit(r, NULL))
		return;
	sim_cloud_lock(f->cloud);
	if (number)
		sim_aws_lt_set_default(f->aws, (size_t)gi, number);
	sim_aws_lt_versions(f->aws, (size_t)gi, &n, &dflt);
	ok_begin(r);
	buf_puts(&r->body, "<launchTemplate>");
	x_tag(&r->body, "launchTemplateId", sim_aws_template_id(f->aws, (size_t)gi));
	x_tag(&r->body, "launchTemplateName", sim_aws_group(f->aws, (size_t)gi)->launch_template);
	x_time(&r->body, "createTime", sim_aws_lt_versions(f->aws, (size_t)gi, &n, &dflt)[0].created_wall);
	snprintf(arn, sizeof(arn), "arn:aws:iam::%s:root", f->conf->account);
	x_tag(&r->body, "createdBy", arn);
	x_int(&r->body, "defaultVersionNumber", (long long)dflt);
	x_int(&r->body, "latestVersionNumber", (long long)n);
	buf_puts(&r->body, "</launchTemplate>");
	sim_cloud_unlock(f->cloud);
	ok_end(r, true);
	if (number)
		log_at(f->o.log, LOG_INFO, real_wall(), "sim aws: ModifyLaunchTemplate %s: default version %zu",
		       sim_aws_group(f->aws, (size_t)gi)->launch_template, number);
	r->drop = sim_cloud_lose_answer(f->cloud, sim_cloud_group(f->cloud, (size_t)gi)->name);
}

/* ---- spot prices ---- */

/* DescribeSpotPriceHistory: the latest Linux price of each type (asked, or
 * every priced one) in each zone that launches it, at SIM_AWS_SPOT_FACTOR
 * of its on-demand price (sim/clouds/aws_pricing_face.h). */
static void describe_spot_price_history(struct areq *r)
{
	struct aws_face *f = r->f;
	const char *names[100], *descs[8], *zones[32];
	const char *az = aws_form_get(&r->form, "AvailabilityZone");
	size_t n = 0, nd = 0, i, d, k, nz, nt, item = 0, offset, shown = 0, next = 0;
	long long max = 1000;
	struct filter fl[MAX_FILTERS];
	size_t nf;

	if (read_type_names(r, names, &n) < 0)
		return;
	for (i = 0; i < n; i++) {
		if (!sim_aws_find_type(f->aws, names[i])) {
			bad_param(r, "InstanceType", names[i], "unknown instance type");
			return;
		}
	}
	for (i = 1; nd < 8; i++) {
		const char *v = form_getf(&r->form, "ProductDescription.%zu", i);

		if (!v)
			break;
		descs[nd++] = v;
	}
	if (read_filters(r, fl, &nf) < 0 || param_int(r, "MaxResults", 5, 1000, &max, false) < 0 ||
	    param_token(r, &offset) < 0)
		return;
	if (nf) {
		fail(r, 400, "InvalidParameterValue",
		     "The simulator's DescribeSpotPriceHistory takes InstanceType.N and ProductDescription.N, not filters ('%s')",
		     fl[0].name);
		return;
	}
	if (!nd)
		descs[nd++] = "Linux/UNIX";
	if (!admit(r, NULL))
		return;
	if (!n) {
		sim_aws_type_at(f->aws, 0, &nt);
		for (i = 0; i < nt && n < 100; i++)
			names[n++] = sim_aws_type_at(f->aws, i, &nt)->name;
	}
	ok_begin(r);
	buf_puts(&r->body, "<spotPriceHistorySet>");
	for (i = 0; i < n; i++) {
		double price = sim_aws_price(f->aws, names[i]) * SIM_AWS_SPOT_FACTOR;

		if (price <= 0)
			continue;
		nz = sim_aws_price_zones(f->aws, names[i], zones, 32);
		for (d = 0; d < nd; d++) {
			if (strcmp(descs[d], "Linux/UNIX") && strcmp(descs[d], "Linux/UNIX (Amazon VPC)"))
				continue;
			for (k = 0; k < nz; k++, item++) {
				char p[32];

				if ((az && strcmp(az, zones[k])) || item < offset)
					continue;
				if (shown == (size_t)max) {
					next = item;
					goto full;
				}
				snprintf(p, sizeof(p), "%.6f", price);
				buf_puts(&r->body, "<item>");
				x_tag(&r->body, "instanceType", names[i]);
				x_tag(&r->body, "productDescription", descs[d]);
				x_tag(&r->body, "spotPrice", p);
				x_time(&r->body, "timestamp", sim_wall(f));
				x_tag(&r->body, "availabilityZone", zones[k]);
				buf_puts(&r->body, "</item>");
				shown++;
			}
		}
	}
full:
	buf_puts(&r->body, "</spotPriceHistorySet>");
	if (next)
		x_token(&r->body, "nextToken", next);
	else
		buf_puts(&r->body, "<nextToken/>");
	ok_end(r, true);
}

/* ---- CreateFleet ---- */

#define MAX_POOLS 300
#define MAX_FLEET_TAGS 50

struct pool {
	const char *type;
	const char *zone;     /* NULL: spread over the group's zones */
	const char *subnet;   /* as asked, or NULL */
	double priority;
	bool has_priority;
	size_t order;
	size_t vcpus;
	int64_t mem;
};

struct launched {
	char id[24];
	char zone[32];
	size_t pool;
};

/* One sub-launch of a fleet, waited for by the handler. */
struct fcall {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int refs;
	bool done;
	int made;
	struct provider_status st;
	struct launched *ids;
	size_t n_ids, cap_ids;
	size_t pool;
};

static void fcall_release(struct fcall *c)
{
	bool last;

	pthread_mutex_lock(&c->mu);
	last = --c->refs == 0;
	pthread_mutex_unlock(&c->mu);
	if (!last)
		return;
	free(c->ids);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	free(c);
}

static void fcall_instance(void *ctx, const struct sim_instance *in)
{
	struct fcall *c = ctx;

	pthread_mutex_lock(&c->mu);
	if (c->n_ids == c->cap_ids) {
		size_t cap = c->cap_ids ? c->cap_ids * 2 : 16;
		struct launched *n = realloc(c->ids, cap * sizeof(*n));

		if (n) {
			c->ids = n;
			c->cap_ids = cap;
		}
	}
	if (c->n_ids < c->cap_ids) {
		snprintf(c->ids[c->n_ids].id, sizeof(c->ids[c->n_ids].id), "%.23s", in->id);
		snprintf(c->ids[c->n_ids].zone, sizeof(c->ids[c->n_ids].zone), "%.31s", in->zone);
		c->ids[c->n_ids++].pool = c->pool;
	}
	pthread_mutex_unlock(&c->mu);
}

static void fcall_done(void *ctx, int count, const struct provider_status *st)
{
	struct fcall *c = ctx;

	pthread_mutex_lock(&c->mu);
	c->done = true;
	c->made = count;
	if (st)
		c->st = *st;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	fcall_release(c);
}

static bool face_stopping(struct aws_face *f)
{
	bool s;

	pthread_mutex_lock(&f->mu);
	s = f->stopping;
	pthread_mutex_unlock(&f->mu);
	return s;
}

/* Launches 'count' in one pool and waits: the call (release it), or NULL. */
static struct fcall *fleet_launch(struct aws_face *f, size_t gi, const struct pool *p, size_t pi,
				  int count, const struct sim_aws_launch *l)
{
	struct fcall *c = calloc(1, sizeof(*c));
	struct sim_launch_spec spec;
	pthread_condattr_t ca;
	int64_t deadline = real_ns() + CALL_TIMEOUT_NS;

	if (!c)
		return NULL;
	c->refs = 2;
	c->pool = pi;
	pthread_mutex_init(&c->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cv, &ca);
	pthread_condattr_destroy(&ca);
	memset(&spec, 0, sizeof(spec));
	spec.zone = p->zone;
	spec.instance_type = p->type;
	spec.spot = l->spot;
	spec.admitted = true;
	spec.arg = l;
	if (sim_cloud_launch_spec(f->cloud, sim_cloud_group(f->cloud, gi)->name, count, &spec,
				  fcall_instance, fcall_done, c) < 0) {
		c->refs = 1;
		fcall_release(c);
		return NULL;
	}
	pthread_mutex_lock(&c->mu);
	while (!c->done && !face_stopping(f) && real_ns() < deadline) {
		int64_t wake = real_ns() + 200 * CLOCK_NS_PER_MS;
		struct timespec ts = {(time_t)(wake / CLOCK_NS_PER_S), (long)(wake % CLOCK_NS_PER_S)};

		pthread_cond_timedwait(&c->cv, &c->mu, &ts);
	}
	if (!c->done) {
		c->st.code = PROVIDER_CANCELLED;
		c->made = (int)c->n_ids;
	}
	pthread_mutex_unlock(&c->mu);
	return c;
}

static int cmp_pool(const void *a, const void *b, void *ctx)
{
	const struct pool *x = a, *y = b;
	bool prioritized = *(const bool *)ctx;

	if (prioritized) {
		if (x->has_priority != y->has_priority)
			return x->has_priority ? -1 : 1;
		if (x->has_priority && x->priority != y->priority)
			return x->priority < y->priority ? -1 : 1;
	} else {
		if (x->vcpus != y->vcpus)
			return x->vcpus < y->vcpus ? -1 : 1;
		if (x->mem != y->mem)
			return x->mem < y->mem ? -1 : 1;
	}
	return x->order < y->order ? -1 : x->order > y->order;
}

static void x_pool(struct buf *b, struct aws_face *f, size_t gi, const struct pool *p,
		   const char *zone)
{
	char subnet[40];

	buf_puts(b, "<launchTemplateAndOverrides><launchTemplateSpecification>");
	x_tag(b, "launchTemplateId", sim_aws_template_id(f->aws, gi));
	x_tag(b, "launchTemplateName", sim_aws_group(f->aws, gi)->launch_template);
	x_tag(b, "version", "1");
	buf_puts(b, "</launchTemplateSpecification><overrides>");
	x_tag(b, "instanceType", p->type);
	if (zone) {
		sim_aws_subnet(zone, subnet, sizeof(subnet));
		x_tag(b, "subnetId", p->subnet ? p->subnet : subnet);
		x_tag(b, "availabilityZone", zone);
	}
	if (p->has_priority)
		buf_printf(b, "<priority>%g</priority>", p->priority);
	buf_puts(b, "</overrides></launchTemplateAndOverrides>");
}

static const char *fleet_error(enum provider_error e, const struct pool *p, const char *zone,
			       char *msg, size_t size)
{
	switch (e) {
	case PROVIDER_NO_CAPACITY:
		snprintf(msg, size,
			 "We currently do not have sufficient %s capacity in the Availability Zone you requested (%s). Our system will be working on provisioning additional capacity. You can currently get %s capacity by not specifying an Availability Zone in your request or choosing other Availability Zones.",
			 p->type, zone, p->type);
		return "InsufficientInstanceCapacity";
	case PROVIDER_QUOTA:
		snprintf(msg, size,
			 "You have requested more vCPU capacity than your current vCPU limit of 32 allows for the instance bucket that the specified instance type belongs to. Please visit http://aws.amazon.com/contact-us/ec2-request to request an adjustment to this limit.");
		return "VcpuLimitExceeded";
	case PROVIDER_INVALID:
		snprintf(msg, size,
			 "Your quota allows for 0 more running instance(s). You requested at least 1.");
		return "InstanceLimitExceeded";
	case PROVIDER_THROTTLED:
		snprintf(msg, size, "Request limit exceeded.");
		return "RequestLimitExceeded";
	default:
		snprintf(msg, size, "An internal error has occurred.");
		return "InternalError";
	}
}

/* Finds or claims 'token': NULL (claimed: the caller launches), an answer to
 * copy (the same request before), or (char *)-1 answered (a mismatch). */
static const char *token_claim(struct areq *r, const char *token, const char *request,
			       struct fleet_token **claimed)
{
	struct aws_face *f = r->f;
	struct fleet_token *t;

	*claimed = NULL;
	pthread_mutex_lock(&f->mu);
	for (t = f->fleets; t; t = t->next)
		if (strcmp(t->token, token) == 0)
			break;
	if (t) {
		if (strcmp(t->request, request) != 0) {
			pthread_mutex_unlock(&f->mu);
			fail(r, 400, "IdempotentParameterMismatch",
			     "Arguments on this idempotent request are inconsistent with arguments used in previous request(s).");
			return (const char *)-1;
		}
		while (!t->answer && !f->stopping)
			pthread_cond_wait(&f->cv, &f->mu);
		pthread_mutex_unlock(&f->mu);
		if (!t->answer) {
			fail(r, 503, "Unavailable", "The service is shutting down.");
			return (const char *)-1;
		}
		return t->answer; /* answers are never freed before the face */
	}
	t = calloc(1, sizeof(*t));
	if (t) {
		t->token = strdup(token);
		t->request = strdup(request);
	}
	if (!t || !t->token || !t->request || f->n_fleets >= MAX_FLEET_TOKENS) {
		pthread_mutex_unlock(&f->mu);
		if (t) {
			free(t->token);
			free(t->request);
			free(t);
		}
		fail(r, 500, "InternalError", "out of memory (or too many client tokens)");
		return (const char *)-1;
	}
	t->next = f->fleets;
	f->fleets = t;
	f->n_fleets++;
	pthread_mutex_unlock(&f->mu);
	*claimed = t;
	return NULL;
}

/* Stores the claimed token's answer (NULL: forget the token, the call failed whole). */
static void token_settle(struct aws_face *f, struct fleet_token *t, char *answer)
{
	struct fleet_token **pp;

	pthread_mutex_lock(&f->mu);
	if (answer) {
		t->answer = answer;
	} else {
		for (pp = &f->fleets; *pp; pp = &(*pp)->next) {
			if (*pp == t) {
				*pp = t->next;
				f->n_fleets--;
				break;
			}
		}
		free(t->token);
		free(t->request);
		free(t);
	}
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

static void create_fleet(struct areq *r, const char *raw_body)
{
	struct aws_face *f = r->f;
	struct pool *pools = NULL;
	struct sim_aws_tag tags[MAX_FLEET_TAGS];
	struct sim_aws_launch l;
	struct fleet_token *claim = NULL;
	struct launched *got = NULL;
	size_t n_pools = 0, n_tags = 0, n_got = 0, i, k;
	const char *type = aws_form_get(&r->form, "Type");
	const char *strategy = aws_form_get(&r->form, "OnDemandOptions.AllocationStrategy");
	const char *cap_type = aws_form_get(&r->form,
					    "TargetCapacitySpecification.DefaultTargetCapacityType");
	const char *token = aws_form_get(&r->form, "ClientToken");
	const char *cached;
	long long total = 0;
	bool prioritized = false, spot = false;
	struct buf ans = BUF_INIT, errs = BUF_INIT, insts = BUF_INIT;
	char fleet_id[64], msg[600];
	int gi = -1, remaining;

	memset(&l, 0, sizeof(l));
	if (!type || strcmp(type, "instant") != 0) {
		fail(r, 400, "InvalidParameterValue",
		     "The simulator's CreateFleet takes Type=instant only, got '%s'",
		     type ? type : "maintain");
		return;
	}
	if (param_int(r, "TargetCapacitySpecification.TotalTargetCapacity", 1, 10000, &total,
		      true) < 0)
		return;
	if (strategy && strcmp(strategy, "prioritized") == 0)
		prioritized = true;
	else if (strategy && strcmp(strategy, "lowest-price") != 0) {
		bad_param(r, "OnDemandOptions.AllocationStrategy", strategy,
			  "lowest-price or prioritized");
		return;
	}
	if (cap_type && strcmp(cap_type, "spot") == 0)
		spot = true;
	else if (cap_type && strcmp(cap_type, "on-demand") != 0) {
		bad_param(r, "TargetCapacitySpecification.DefaultTargetCapacityType", cap_type,
			  "on-demand or spot");
		return;
	}
	if (token && (strlen(token) > 64 || !token[0])) {
		bad_param(r, "ClientToken", token, "at most 64 characters");
		return;
	}
	pools = calloc(MAX_POOLS, sizeof(*pools));
	if (!pools) {
		fail(r, 500, "InternalError", "out of memory");
		return;
	}
	for (i = 1;; i++) {
		const char *name = form_getf(&r->form,
			"LaunchTemplateConfigs.%zu.LaunchTemplateSpecification.LaunchTemplateName", i);
		const char *id = form_getf(&r->form,
			"LaunchTemplateConfigs.%zu.LaunchTemplateSpecification.LaunchTemplateId", i);
		const char *ver = form_getf(&r->form,
			"LaunchTemplateConfigs.%zu.LaunchTemplateSpecification.Version", i);
		int g;

		if (!name && !id && !form_getf(&r->form, "LaunchTemplateConfigs.%zu.Overrides.1.InstanceType", i))
			break;
		if (!name && !id) {
			fail(r, 400, "MissingParameter",
			     "LaunchTemplateConfigs.%zu needs a LaunchTemplateName or LaunchTemplateId", i);
			goto out;
		}
		g = sim_aws_find_template(f->aws, name, id);
		if (g < 0) {
			fail(r, 400, name ? "InvalidLaunchTemplateName.NotFoundException" :
					    "InvalidLaunchTemplateId.NotFound",
			     "The specified launch template, with template %s %s, does not exist.",
			     name ? "name" : "ID", name ? name : id);
			goto out;
		}
		if (sim_aws_desired(f->aws, (size_t)g) >= 0) {
			fail(r, 400, "InvalidParameterValue",
			     "Launch template %s belongs to Auto Scaling group %s: launch it with SetDesiredCapacity (a fleet group's template is for CreateFleet)",
			     sim_aws_group(f->aws, (size_t)g)->launch_template,
			     sim_cloud_group(f->cloud, (size_t)g)->name);
			goto out;
		}
		if (gi >= 0 && g != gi) {
			fail(r, 400, "InvalidParameterValue",
			     "The simulator's CreateFleet takes one launch template a request");
			goto out;
		}
		gi = g;
		sim_cloud_lock(f->cloud);
		l.version = sim_aws_lt_version_find(f->aws, (size_t)gi, ver);
		sim_cloud_unlock(f->cloud);
		if (!l.version || (ver && !ver[0])) {
			version_not_found(r, ver ? ver : "$Default");
			goto out;
		}
		for (k = 1;; k++) {
			const char *it = form_getf(&r->form, "LaunchTemplateConfigs.%zu.Overrides.%zu.InstanceType", i, k);
			const char *sn = form_getf(&r->form, "LaunchTemplateConfigs.%zu.Overrides.%zu.SubnetId", i, k);
			const char *az = form_getf(&r->form, "LaunchTemplateConfigs.%zu.Overrides.%zu.AvailabilityZone", i, k);
			const char *pr = form_getf(&r->form, "LaunchTemplateConfigs.%zu.Overrides.%zu.Priority", i, k);
			const struct sim_aws_group *ag = sim_aws_group(f->aws, (size_t)gi);
			const struct sim_aws_type *t;
			struct pool *p;

			if (!it && !sn && !az && !pr)
				break;
			if (n_pools == MAX_POOLS) {
				fail(r, 400, "InvalidParameterValue", "At most %d overrides", MAX_POOLS);
				goto out;
			}
			p = &pools[n_pools];
			p->order = n_pools;
			p->type = it ? it : ag->types[0];
			t = sim_aws_find_type(f->aws, p->type);
			if (!t) {
				fail(r, 400, "InvalidParameterValue",
				     "Invalid value '%s' for InstanceType.", p->type);
				goto out;
			}
			p->vcpus = (size_t)t->vcpus;
			p->mem = t->memory_mib;
			if (sn) {
				const char *z = sim_aws_subnet_zone(f->aws, (size_t)gi, sn);

				if (!z) {
					fail(r, 400, "InvalidSubnetID.NotFound",
					     "The subnet ID '%s' does not exist", sn);
					goto out;
				}
				if (az && strcmp(az, z) != 0) {
					fail(r, 400, "InvalidParameterValue",
					     "Subnet %s is in %s, not %s", sn, z, az);
					goto out;
				}
				p->subnet = sn;
				p->zone = z;
			} else if (az) {
				size_t z;

				for (z = 0; z < ag->n_zones; z++)
					if (strcmp(ag->zones[z], az) == 0)
						break;
				if (z == ag->n_zones) {
					fail(r, 400, "InvalidParameterValue",
					     "Invalid availability zone: [%s]", az);
					goto out;
				}
				p->zone = ag->zones[z];
			}
			if (pr) {
				char *end;

				p->priority = strtod(pr, &end);
				if (end == pr || *end || !(p->priority >= 0)) {
					bad_param(r, "Priority", pr, "a number");
					goto out;
				}
				p->has_priority = true;
			}
			n_pools++;
		}
	}
	if (gi < 0) {
		fail(r, 400, "MissingParameter", "The request must contain the parameter LaunchTemplateConfigs");
		goto out;
	}
	if (!n_pools) {
		pools[0].type = sim_aws_group(f->aws, (size_t)gi)->types[0];
		n_pools = 1;
	}
	qsort_r(pools, n_pools, sizeof(*pools), cmp_pool, &prioritized);
	for (i = 1;; i++) {
		const char *rt = form_getf(&r->form, "TagSpecification.%zu.ResourceType", i);

		if (!rt)
			break;
		for (k = 1;; k++) {
			const char *key = form_getf(&r->form, "TagSpecification.%zu.Tag.%zu.Key", i, k);
			const char *val = form_getf(&r->form, "TagSpecification.%zu.Tag.%zu.Value", i, k);

			if (!key)
				break;
			if (strcmp(rt, "instance") != 0)
				continue;
			if (n_tags == MAX_FLEET_TAGS || strlen(key) > 127 ||
			    strncmp(key, "aws:", 4) == 0) {
				fail(r, 400, "InvalidParameterValue",
				     "Invalid tag key '%s' (at most 50 tags, 127 characters, no aws: prefix)", key);
				goto out;
			}
			tags[n_tags].key = key;
			tags[n_tags++].value = val ? val : "";
		}
	}
	if (!admit(r, NULL))
		goto out;
	if (token) {
		cached = token_claim(r, token, raw_body, &claim);
		if (cached == (const char *)-1)
			goto out;
		if (cached) {
			ok_begin(r);
			buf_puts(&r->body, cached);
			ok_end(r, true);
			log_at(f->o.log, LOG_INFO, real_wall(),
			       "sim aws: CreateFleet: ClientToken seen before, same answer, nothing launched");
			goto out;
		}
	}
	sim_cloud_lock(f->cloud);
	sim_aws_new_fleet_id(f->aws, fleet_id, sizeof(fleet_id));
	sim_cloud_unlock(f->cloud);
	l.fleet_id = fleet_id; /* l.version: the template's, above */
	l.tags = tags;
	l.n_tags = n_tags;
	l.spot = spot;
	remaining = (int)total;
	for (i = 0; i < n_pools && remaining > 0; i++) {
		struct fcall *c = fleet_launch(f, (size_t)gi, &pools[i], i, remaining, &l);
		const char *zone = pools[i].zone ? pools[i].zone :
				   sim_aws_group(f->aws, (size_t)gi)->zones[0];
		enum provider_error code;
		size_t j;

		if (!c) {
			code = PROVIDER_TRANSIENT;
		} else {
			pthread_mutex_lock(&c->mu);
			code = c->st.code;
			for (j = 0; j < c->n_ids; j++) {
				struct launched *ng = realloc(got, (n_got + 1) * sizeof(*got));

				if (!ng)
					break;
				got = ng;
				got[n_got++] = c->ids[j];
			}
			remaining -= (int)c->n_ids;
			pthread_mutex_unlock(&c->mu);
			fcall_release(c);
		}
		if (code != PROVIDER_OK && remaining > 0) {
			const char *ec = fleet_error(code, &pools[i], zone, msg, sizeof(msg));

			buf_puts(&errs, "<item>");
			x_pool(&errs, f, (size_t)gi, &pools[i], zone);
			x_tag(&errs, "lifecycle", spot ? "spot" : "on-demand");
			x_tag(&errs, "errorCode", ec);
			x_tag(&errs, "errorMessage", msg);
			buf_puts(&errs, "</item>");
			if (code != PROVIDER_NO_CAPACITY)
				break; /* only a capacity error moves on to the next pool */
		}
	}
	/* one fleetInstanceSet item per pool and zone */
	for (i = 0; i < n_got; i++) {
		size_t j;

		if (!got[i].id[0])
			continue;
		buf_puts(&insts, "<item>");
		x_pool(&insts, f, (size_t)gi, &pools[got[i].pool], got[i].zone);
		x_tag(&insts, "lifecycle", spot ? "spot" : "on-demand");
		buf_puts(&insts, "<instanceIds>");
		for (j = i; j < n_got; j++) {
			if (!got[j].id[0] || got[j].pool != got[i].pool ||
			    strcmp(got[j].zone, got[i].zone) != 0)
				continue;
			x_tag(&insts, "item", got[j].id);
			log_at(f->o.log, LOG_INFO, real_wall(),
			       "sim aws: CreateFleet %s: launched %s (%s, %s)", fleet_id, got[j].id,
			       pools[got[j].pool].type, got[j].zone);
			if (j != i)
				got[j].id[0] = '\0';
		}
		got[i].id[0] = '\0';
		buf_puts(&insts, "</instanceIds>");
		x_tag(&insts, "instanceType", pools[got[i].pool].type);
		buf_puts(&insts, "</item>");
	}
	x_tag(&ans, "fleetId", fleet_id);
	buf_puts(&ans, "<errorSet>");
	if (errs.len)
		buf_append(&ans, errs.data, errs.len);
	buf_puts(&ans, "</errorSet><fleetInstanceSet>");
	if (insts.len)
		buf_append(&ans, insts.data, insts.len);
	buf_puts(&ans, "</fleetInstanceSet>");
	if (ans.oom) {
		fail(r, 500, "InternalError", "out of memory");
		goto out;
	}
	ok_begin(r);
	buf_append(&r->body, ans.data, ans.len);
	ok_end(r, true);
	r->drop = sim_cloud_lose_answer(f->cloud, sim_cloud_group(f->cloud, (size_t)gi)->name);
	if (claim) {
		token_settle(f, claim, buf_take(&ans));
		claim = NULL;
	}
out:
	if (claim)
		token_settle(f, claim, NULL);
	buf_free(&ans);
	buf_free(&errs);
	buf_free(&insts);
	free(got);
	free(pools);
}

/* ---- STS ---- */

static void x_credentials(struct buf *b, const struct sim_aws_conf *c, int64_t expires)
{
	buf_puts(b, "<Credentials>");
	x_tag(b, "AccessKeyId", c->access_key_id);
	x_tag(b, "SecretAccessKey", c->secret_access_key);
	x_tag(b, "SessionToken", c->session_token ? c->session_token : "");
	x_time(b, "Expiration", expires);
	buf_puts(b, "</Credentials>");
}

static void get_caller_identity(struct areq *r)
{
	const struct sim_aws_conf *c = r->f->conf;
	char arn[300];

	ok_begin(r);
	if (r->session) {
		snprintf(arn, sizeof(arn), "arn:aws:sts::%s:assumed-role/%s/luascale-sim", c->account,
			 c->role);
		x_tag(&r->body, "UserId", "AROASIMULATEDROLE0001:luascale-sim");
	} else {
		snprintf(arn, sizeof(arn), "arn:aws:iam::%s:user/luascale-sim", c->account);
		x_tag(&r->body, "UserId", "AIDASIMULATEDUSER0001");
	}
	x_tag(&r->body, "Account", c->account);
	x_tag(&r->body, "Arn", arn);
	ok_end(r, true);
}

static void assume_role_web_identity(struct areq *r)
{
	const char *role = aws_form_get(&r->form, "RoleArn");
	const char *session = aws_form_get(&r->form, "RoleSessionName");
	const char *tok = aws_form_get(&r->form, "WebIdentityToken");
	const char *p, *role_name;
	long long duration = 3600;
	size_t dots = 0;
	char arn[400];

	if (!role) {
		bad_param(r, "RoleArn", NULL, NULL);
		return;
	}
	if (!session) {
		bad_param(r, "RoleSessionName", NULL, NULL);
		return;
	}
	if (!tok) {
		bad_param(r, "WebIdentityToken", NULL, NULL);
		return;
	}
	if (param_int(r, "DurationSeconds", 900, 43200, &duration, false) < 0)
		return;
	if (strncmp(role, "arn:aws:iam::", 13) != 0 || !strstr(role, ":role/") || strlen(role) > 2048) {
		bad_param(r, "RoleArn", role, "Member must be a role ARN (arn:aws:iam::ACCOUNT:role/NAME)");
		return;
	}
	if (strlen(session) < 2 || strlen(session) > 64 ||
	    strspn(session, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+=,.@-") !=
		    strlen(session)) {
		bad_param(r, "RoleSessionName", session,
			  "Member must satisfy regular expression pattern: [\\w+=,.@-]*");
		return;
	}
	for (p = tok; *p; p++)
		dots += *p == '.';
	if (strlen(tok) < 4 || dots != 2) {
		fail(r, 400, "InvalidIdentityToken",
		     "The ID Token provided is not a valid JWT. (You may see this error if you sent an Access Token)");
		return;
	}
	role_name = strstr(role, ":role/") + 6;
	ok_begin(r);
	x_credentials(&r->body, r->f->conf, real_wall() + duration);
	x_tag(&r->body, "SubjectFromWebIdentityToken", "system:serviceaccount:kube-system:luascale");
	buf_puts(&r->body, "<AssumedRoleUser>");
	snprintf(arn, sizeof(arn), "arn:aws:sts::%s:assumed-role/%s/%s", r->f->conf->account,
		 role_name, session);
	x_tag(&r->body, "Arn", arn);
	snprintf(arn, sizeof(arn), "AROASIMULATEDROLE0001:%s", session);
	x_tag(&r->body, "AssumedRoleId", arn);
	buf_puts(&r->body, "</AssumedRoleUser>");
	x_tag(&r->body, "Provider", "oidc.eks.amazonaws.com/id/SIMULATED");
	x_tag(&r->body, "Audience", "sts.amazonaws.com");
	ok_end(r, true);
	log_at(r->f->o.log, LOG_INFO, real_wall(), "sim aws: AssumeRoleWithWebIdentity %s (%s)",
	       role, session);
}

/* ---- signatures and dispatch ---- */

static const char *secret_for(void *ctx, const char *akid, const char **token_out)
{
	const struct sim_aws_conf *c = ctx;

	*token_out = NULL;
	if (!akid || strcmp(akid, c->access_key_id) != 0)
		return NULL;
	*token_out = c->session_token;
	return c->secret_access_key;
}

struct hdrs {
	struct sigv4_header h[MAX_HEADERS];
	size_t n;
	bool overflow;
};

static enum MHD_Result collect_header(void *cls, enum MHD_ValueKind kind, const char *key,
				      const char *value)
{
	struct hdrs *h = cls;

	(void)kind;
	if (h->n == MAX_HEADERS) {
		h->overflow = true;
		return MHD_NO;
	}
	h->h[h->n].name = key;
	h->h[h->n++].value = value ? value : "";
	return MHD_YES;
}

static const char *service_of_version(const char *v)
{
	if (v && strcmp(v, "2016-11-15") == 0)
		return "ec2";
	if (v && strcmp(v, "2011-01-01") == 0)
		return "autoscaling";
	if (v && strcmp(v, "2011-06-15") == 0)
		return "sts";
	if (v && strcmp(v, "2012-11-05") == 0)
		return "sqs";
	return NULL;
}

/* 'service' may be a signature's scope, gone when the request is logged:
 * r->service is always a static name. */
static void set_service(struct areq *r, const char *service)
{
	if (strcmp(service, "ec2") == 0) {
		r->service = "ec2";
		r->proto = PROTO_EC2;
		r->ns = NS_EC2;
	} else if (strcmp(service, "sts") == 0) {
		r->service = "sts";
		r->proto = PROTO_QUERY;
		r->ns = NS_STS;
	} else if (strcmp(service, "sqs") == 0) {
		r->service = "sqs";
		r->proto = PROTO_QUERY;
		r->ns = NS_SQS;
	} else {
		r->service = "autoscaling";
		r->proto = PROTO_QUERY;
		r->ns = NS_ASG;
	}
}

static void dispatch(struct areq *r, const char *raw_body)
{
	static const struct {
		const char *service, *action;
		void (*fn)(struct areq *r);
	} actions[] = {
		{"autoscaling", "DescribeAutoScalingGroups", describe_asgs},
		{"autoscaling", "SetDesiredCapacity", set_desired},
		{"autoscaling", "TerminateInstanceInAutoScalingGroup", terminate_in_asg},
		{"autoscaling", "DescribeScalingActivities", describe_activities},
		{"ec2", "DescribeInstances", describe_instances},
		{"ec2", "TerminateInstances", terminate_instances},
		{"ec2", "DescribeInstanceTypes", describe_instance_types},
		{"ec2", "DescribeLaunchTemplateVersions", describe_lt_versions},
		{"ec2", "CreateLaunchTemplateVersion", create_lt_version},
		{"ec2", "ModifyLaunchTemplate", modify_lt},
		{"ec2", "DescribeSpotPriceHistory", describe_spot_price_history},
		{"ec2", "CreateFleet", NULL},
		{"sts", "GetCallerIdentity", get_caller_identity},
		{"sts", "AssumeRoleWithWebIdentity", assume_role_web_identity},
	};
	const char *version = aws_form_get(&r->form, "Version");
	const char *want = strcmp(r->service, "ec2") == 0 ? "2016-11-15" :
			   strcmp(r->service, "sts") == 0 ? "2011-06-15" : "2011-01-01";
	size_t i;

	if (!r->action || !r->action[0]) {
		fail(r, 400, "MissingAction", "The request must contain the parameter Action");
		return;
	}
	if (!version || strcmp(version, want) != 0) {
		if (r->proto == PROTO_EC2)
			fail(r, 400, "NoSuchVersion",
			     "The requested version (%s) of service AmazonEC2 does not exist",
			     version ? version : "");
		else
			fail(r, 400, "InvalidAction",
			     "Could not find operation %s for version %s", r->action,
			     version ? version : "NO_VERSION_SPECIFIED");
		return;
	}
	for (i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
		if (strcmp(actions[i].service, r->service) != 0 ||
		    strcmp(actions[i].action, r->action) != 0)
			continue;
		if (actions[i].fn)
			actions[i].fn(r);
		else
			create_fleet(r, raw_body);
		return;
	}
	if (r->proto == PROTO_EC2)
		fail(r, 400, "InvalidAction", "The action %s is not valid for this web service.",
		     r->action);
	else
		fail(r, 400, "InvalidAction", "Could not find operation %s for version %s", r->action,
		     version);
}

/* ---- SQS (sim/clouds/sqs.c answers; here the wire) ---- */

static const char *form_param(void *ud, const char *name)
{
	return aws_form_get(ud, name);
}

/* SQS in the Query protocol (Version 2012-11-05), signed for "sqs". */
static void sqs_query(struct aws_face *f, struct areq *r)
{
	struct sim_sqs_answer ans;
	char base[64];

	if (!aws_form_get(&r->form, "Version") || strcmp(aws_form_get(&r->form, "Version"), "2012-11-05")) {
		fail(r, 400, "InvalidAction", "Could not find operation %s for version %s",
		     r->action ? r->action : "", aws_form_get(&r->form, "Version") ? aws_form_get(&r->form, "Version") : "NO_VERSION_SPECIFIED");
		return;
	}
	if (!sim_cloud_admit(f->cloud, NULL)) {
		fail(r, 400, "RequestThrottled", "Rate exceeded");
		return;
	}
	snprintf(base, sizeof(base), "http://127.0.0.1:%d", f->port);
	sim_sqs_answer(sim_aws_sqs(f->aws), false, r->action, form_param, &r->form, base, r->rid, &r->body,
		       &ans);
	r->code = ans.status;
	r->content_type = ans.content_type;
}

/* A JSON request's parameters: its top-level strings and numbers, as text. */
struct jparams {
	cJSON *doc;
	char num[8][32];
	size_t n_num;
};

static const char *json_param(void *ud, const char *name)
{
	struct jparams *j = ud;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j->doc, name);

	if (cJSON_IsString(v))
		return v->valuestring;
	if (cJSON_IsNumber(v) && j->n_num < 8) {
		char *s = j->num[j->n_num++];

		if (v->valuedouble != (double)(long long)v->valuedouble || v->valuedouble > 1e15 ||
		    v->valuedouble < -1e15)
			snprintf(s, 32, "%g", v->valuedouble);
		else
			snprintf(s, 32, "%lld", (long long)v->valuedouble);
		return s;
	}
	return NULL;
}

/*
 * Checks the SigV4 signature of a JSON-protocol POST for r->service in
 * 'region'. True when it holds; else answers r with the refusal (its
 * "__type" the verdict's code after 'type_prefix'), logs it and returns
 * false.
 */
static bool json_signed(struct aws_face *f, struct MHD_Connection *conn, const char *url,
			const char *body, size_t len, const char *region, const char *type_prefix,
			struct areq *r)
{
	struct hdrs h;
	struct sigv4_input in;
	struct errbuf msg;
	enum sigv4_verdict v;

	memset(&h, 0, sizeof(h));
	MHD_get_connection_values(conn, MHD_HEADER_KIND, collect_header, &h);
	memset(&in, 0, sizeof(in));
	in.method = "POST";
	in.path = url;
	in.query = "";
	in.headers = h.h;
	in.n_headers = h.n;
	in.body = body;
	in.body_len = len;
	in.region = region;
	in.service = r->service;
	msg.msg[0] = '\0';
	v = h.overflow ? SIGV4_MISSING : sigv4_verify(&in, real_wall(), secret_for, (void *)f->conf, NULL, &msg);
	if (v == SIGV4_OK)
		return true;
	r->code = sigv4_verdict_http_status(v);
	buf_printf(&r->body, "{\"__type\":\"%s%s\",\"message\":\"signature refused\"}", type_prefix,
		   sigv4_verdict_code(v, r->service));
	log_at(f->o.log, LOG_INFO, real_wall(), "sim aws: %s %s refused: %s", r->service, r->action,
	       msg.msg[0] ? msg.msg : sigv4_verdict_code(v, r->service));
	return false;
}

/* POST / with X-Amz-Target AmazonSQS.*: SQS in the JSON 1.0 protocol,
 * signed for "sqs" in the scenario's region. */
static void handle_sqs_json(struct aws_face *f, struct MHD_Connection *conn, const char *url,
			    const char *target, const char *body, size_t len, struct areq *r,
			    char *query_error, size_t qe_len)
{
	struct sim_sqs_answer ans;
	struct jparams jp;
	char base[64];

	r->service = "sqs";
	r->action = strchr(target, '.') + 1;
	r->content_type = "application/x-amz-json-1.0";
	if (!json_signed(f, conn, url, body, len, f->conf->region, "com.amazon.coral.service#", r))
		return;
	if (!sim_cloud_admit(f->cloud, NULL)) {
		r->code = 400;
		buf_puts(&r->body, "{\"__type\":\"com.amazonaws.sqs#RequestThrottled\",\"message\":\"Rate exceeded\"}");
		snprintf(query_error, qe_len, "RequestThrottled;Sender");
		return;
	}
	memset(&jp, 0, sizeof(jp));
	jp.doc = len ? cJSON_ParseWithLength(body, len) : NULL;
	if (!cJSON_IsObject(jp.doc)) {
		cJSON_Delete(jp.doc);
		r->code = 400;
		buf_puts(&r->body, "{\"__type\":\"com.amazon.coral.service#SerializationException\",\"message\":\"the body is not a JSON object\"}");
		return;
	}
	snprintf(base, sizeof(base), "http://127.0.0.1:%d", f->port);
	sim_sqs_answer(sim_aws_sqs(f->aws), true, r->action, json_param, &jp, base, r->rid, &r->body,
		       &ans);
	cJSON_Delete(jp.doc);
	r->code = ans.status;
	r->content_type = ans.content_type;
	snprintf(query_error, qe_len, "%s", ans.query_error);
}

/* POST /: the APIs. */
static void handle_api(struct aws_face *f, struct MHD_Connection *conn, const char *url,
		       const char *body, size_t len, struct areq *r)
{
	struct hdrs h;
	struct sigv4_input in;
	struct sigv4_scope scope;
	struct errbuf err, msg;
	enum sigv4_verdict v;
	const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	const char *guess;

	set_service(r, "autoscaling");
	if (aws_form_parse(&r->form, body, len, &err) < 0) {
		fail(r, 400, "MalformedQueryString", "The request body is not form-encoded: %s",
		     err.msg);
		return;
	}
	r->action = aws_form_get(&r->form, "Action");
	guess = service_of_version(aws_form_get(&r->form, "Version"));
	if (guess)
		set_service(r, guess);
	if (!auth) {
		/* AWS takes this one call unsigned */
		if (r->action && strcmp(r->action, "AssumeRoleWithWebIdentity") == 0 && guess &&
		    strcmp(guess, "sts") == 0) {
			dispatch(r, body);
			return;
		}
		fail(r, sigv4_verdict_http_status(SIGV4_MISSING),
		     sigv4_verdict_code(SIGV4_MISSING, r->service), "Request is missing Authentication Token");
		return;
	}
	memset(&h, 0, sizeof(h));
	MHD_get_connection_values(conn, MHD_HEADER_KIND, collect_header, &h);
	if (h.overflow) {
		fail(r, 400, "InvalidRequest", "too many headers");
		return;
	}
	memset(&in, 0, sizeof(in));
	in.method = "POST";
	in.path = url;
	in.query = "";
	in.headers = h.h;
	in.n_headers = h.n;
	in.body = body;
	in.body_len = len;
	in.region = f->conf->region;
	in.service = NULL;
	memset(&scope, 0, sizeof(scope));
	msg.msg[0] = '\0';
	v = sigv4_verify(&in, real_wall(), secret_for, (void *)f->conf, &scope, &msg);
	if (scope.service[0] && (strcmp(scope.service, "ec2") == 0 ||
				 strcmp(scope.service, "autoscaling") == 0 ||
				 strcmp(scope.service, "sts") == 0 || strcmp(scope.service, "sqs") == 0))
		set_service(r, scope.service);
	if (v != SIGV4_OK) {
		log_at(f->o.log, LOG_INFO, real_wall(), "sim aws: %s %s refused: %s (key %s)",
		       r->service, r->action ? r->action : "?", sigv4_verdict_code(v, r->service),
		       scope.access_key_id[0] ? scope.access_key_id : "?");
		fail(r, sigv4_verdict_http_status(v), sigv4_verdict_code(v, r->service), "%s",
		     msg.msg[0] ? msg.msg : "The request signature we calculated does not match the signature you provided.");
		sigv4_scope_free(&scope);
		return;
	}
	if (!scope.service[0] || (strcmp(scope.service, "ec2") != 0 &&
				  strcmp(scope.service, "autoscaling") != 0 &&
				  strcmp(scope.service, "sts") != 0 && strcmp(scope.service, "sqs") != 0)) {
		fail(r, 400, "InvalidAction", "The simulator serves ec2, autoscaling, sts and sqs, not \"%s\"",
		     scope.service);
		sigv4_scope_free(&scope);
		return;
	}
	r->session = f->conf->session_token && f->conf->session_token[0];
	sigv4_scope_free(&scope);
	if (!strcmp(r->service, "sqs")) {
		sqs_query(f, r);
		return;
	}
	dispatch(r, body);
}

/* POST / with X-Amz-Target AWSPriceListService.*: the Price List Query
 * API (JSON 1.1), signed for service "pricing" in us-east-1. */
static void handle_pricing(struct aws_face *f, struct MHD_Connection *conn, const char *url,
			   const char *target, const char *body, size_t len, struct areq *r)
{
	r->service = "pricing";
	r->action = strchr(target, '.') + 1;
	r->content_type = "application/x-amz-json-1.1";
	/* us-east-1: where the Price List API answers */
	if (!json_signed(f, conn, url, body, len, "us-east-1", "", r))
		return;
	if (!sim_cloud_admit(f->cloud, NULL)) {
		r->code = 400;
		buf_puts(&r->body, "{\"__type\":\"ThrottlingException\",\"message\":\"Rate exceeded\"}");
		return;
	}
	r->code = sim_aws_pricing_answer(f->aws, target, body, len, &r->body);
}

/* ---- IMDS and container credentials ---- */

static void creds_json(struct aws_face *f, struct buf *b, bool imds)
{
	const struct sim_aws_conf *c = f->conf;
	char now[40], exp[40];
	time_t t = (time_t)real_wall(), e = t + (time_t)c->credential_ttl_s;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
	gmtime_r(&e, &tm);
	strftime(exp, sizeof(exp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	buf_puts(b, "{");
	if (imds)
		buf_printf(b, "\"Code\":\"Success\",\"LastUpdated\":\"%s\",\"Type\":\"AWS-HMAC\",", now);
	buf_puts(b, "\"AccessKeyId\":");
	buf_json_string(b, c->access_key_id);
	buf_puts(b, ",\"SecretAccessKey\":");
	buf_json_string(b, c->secret_access_key);
	buf_puts(b, ",\"Token\":");
	buf_json_string(b, c->session_token ? c->session_token : "");
	buf_printf(b, ",\"Expiration\":\"%s\"", exp);
	if (!imds) {
		buf_printf(b, ",\"AccountId\":\"%s\",\"RoleArn\":\"arn:aws:iam::%s:role/", c->account,
			   c->account);
		x_esc(b, c->role); /* a role name holds no JSON specials ([\w+=,.@-]) */
		buf_puts(b, "\"");
	}
	buf_puts(b, "}");
}

static void text_reply(struct areq *r, int code, const char *ct, const char *text)
{
	buf_free(&r->body);
	r->code = code;
	r->content_type = ct;
	buf_puts(&r->body, text);
}

static bool imds_token_ok(struct aws_face *f, const char *tok)
{
	int64_t now = real_ns();
	size_t i;
	bool ok = false;

	pthread_mutex_lock(&f->mu);
	for (i = 0; i < MAX_IMDS_TOKENS; i++)
		if (f->imds[i].token[0] && strcmp(f->imds[i].token, tok) == 0 &&
		    f->imds[i].expires_ns > now)
			ok = true;
	pthread_mutex_unlock(&f->mu);
	return ok;
}

static void handle_imds(struct aws_face *f, struct MHD_Connection *conn, const char *method,
			const char *url, struct areq *r, const char **ttl_header)
{
	const struct sim_aws_conf *c = f->conf;
	const char *tok = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-aws-ec2-metadata-token");
	char path[256];
	size_t plen;

	/* a leaf is found with or without a trailing '/' (botocore asks for
	 * placement/availability-zone/) */
	snprintf(path, sizeof(path), "%s", url + strlen("/latest"));
	plen = strlen(path);
	if (plen > 1 && path[plen - 1] == '/' &&
	    strcmp(path, "/meta-data/iam/security-credentials/") != 0)
		path[plen - 1] = '\0';
	if (strcmp(path, "/api/token") == 0) {
		const char *ttl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							      "X-aws-ec2-metadata-token-ttl-seconds");
		long long secs;
		char token[48];

		if (strcmp(method, "PUT") != 0) {
			text_reply(r, 405, "text/plain", "Method Not Allowed");
			return;
		}
		if (MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Forwarded-For")) {
			text_reply(r, 403, "text/plain", "Forbidden");
			return;
		}
		if (!ttl || aws_parse_int(ttl, 1, 21600, &secs) < 0) {
			text_reply(r, 400, "text/plain", "Bad Request");
			return;
		}
		snprintf(token, sizeof(token), "AQAEA%016llx%016llx", (unsigned long long)face_rand(f),
			 (unsigned long long)face_rand(f));
		pthread_mutex_lock(&f->mu);
		snprintf(f->imds[f->imds_next].token, sizeof(f->imds[0].token), "%s", token);
		f->imds[f->imds_next].expires_ns = real_ns() + secs * CLOCK_NS_PER_S;
		f->imds_next = (f->imds_next + 1) % MAX_IMDS_TOKENS;
		pthread_mutex_unlock(&f->mu);
		text_reply(r, 200, "text/plain", token);
		*ttl_header = ttl;
		return;
	}
	if (strcmp(method, "GET") != 0) {
		text_reply(r, 405, "text/plain", "Method Not Allowed");
		return;
	}
	if (tok ? !imds_token_ok(f, tok) : c->imds_v2_only) {
		text_reply(r, 401, "text/plain", "Unauthorized");
		return;
	}
	if (strncmp(path, "/meta-data/iam/security-credentials/", 36) == 0) {
		const char *role = path + 36;

		if (!role[0]) {
			text_reply(r, 200, "text/plain", c->role);
		} else if (strcmp(role, c->role) == 0) {
			text_reply(r, 200, "application/json", "");
			creds_json(f, &r->body, true);
		} else {
			text_reply(r, 404, "text/plain", "Not Found");
		}
		return;
	}
	if (strcmp(path, "/meta-data/placement/availability-zone") == 0) {
		text_reply(r, 200, "text/plain",
			   sim_cloud_n_groups(f->cloud) ? sim_aws_group(f->aws, 0)->zones[0] : "");
		return;
	}
	if (strcmp(path, "/meta-data/placement/region") == 0) {
		text_reply(r, 200, "text/plain", c->region);
		return;
	}
	if (strcmp(path, "/meta-data/instance-id") == 0) {
		text_reply(r, 200, "text/plain", "i-0000000000000luas");
		return;
	}
	text_reply(r, 404, "text/plain", "Not Found");
}

static void handle_container(struct aws_face *f, struct MHD_Connection *conn, const char *method,
			     struct areq *r)
{
	const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");

	if (!f->conf->container_token) {
		text_reply(r, 404, "application/json", "{\"Message\":\"container credentials are not served: the scenario has no aws.container_token\"}");
		return;
	}
	if (strcmp(method, "GET") != 0) {
		text_reply(r, 405, "application/json", "{\"Message\":\"method not allowed\"}");
		return;
	}
	if (!auth || strcmp(auth, f->conf->container_token) != 0) {
		text_reply(r, 401, "application/json",
			   "{\"Message\":\"the Authorization token is missing or wrong\"}");
		return;
	}
	text_reply(r, 200, "application/json", "");
	creds_json(f, &r->body, false);
}

/* ---- the HTTP side (sim/clouds/face_http.c gathers the body) ---- */

/* The X-Amz-Target of an SQS JSON call, or NULL. */
static const char *sqs_target(struct MHD_Connection *conn)
{
	const char *t = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Amz-Target");

	return t && !strncmp(t, "AmazonSQS.", 10) && t[10] ? t : NULL;
}

/* The X-Amz-Target of a Price List call, or NULL. */
static const char *pricing_target(struct MHD_Connection *conn)
{
	const char *t = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Amz-Target");

	return t && !strncmp(t, "AWSPriceListService.", 20) ? t : NULL;
}

static enum MHD_Result on_request(void *ud, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *body, size_t body_len,
				  bool bad_body)
{
	struct aws_face *f = ud;
	struct MHD_Response *resp;
	struct areq r;
	const char *ttl_header = NULL;
	char query_error[128] = "";
	enum MHD_Result rc;

	face_http_sleep_ns(f->o.latency_ns);
	memset(&r, 0, sizeof(r));
	r.f = f;
	face_uuid(f, r.rid);
	set_service(&r, "autoscaling");
	if (strncmp(url, "/latest/", 8) == 0) {
		handle_imds(f, conn, method, url, &r, &ttl_header);
	} else if (strncmp(url, "/v1/credentials", 15) == 0) {
		handle_container(f, conn, method, &r);
	} else if (strcmp(url, "/") == 0 && strcmp(method, "POST") == 0 && sqs_target(conn) &&
		   !bad_body) {
		handle_sqs_json(f, conn, url, sqs_target(conn), body, body_len, &r, query_error,
				sizeof(query_error));
	} else if (strcmp(url, "/") == 0 && strcmp(method, "POST") == 0 && pricing_target(conn) &&
		   !bad_body) {
		handle_pricing(f, conn, url, pricing_target(conn), body, body_len, &r);
	} else if (strcmp(url, "/") == 0 && strcmp(method, "POST") == 0) {
		if (bad_body)
			fail(&r, 413, "RequestEntityTooLarge", "The request body is larger than 1 MiB");
		else
			handle_api(f, conn, url, body, body_len, &r);
	} else {
		text_reply(&r, 404, "text/plain", "Not Found");
	}
	if (!r.code)
		fail(&r, 500, "InternalFailure", "no answer");
	if (r.drop) {
		/* a lost_answer fault: the call took effect, its answer never comes */
		log_at(f->o.log, LOG_INFO, real_wall(), "sim aws: %s %s %s -> %d, answer lost (fault)", method, url,
		       r.action ? r.action : "", r.code);
		buf_free(&r.body);
		aws_form_free(&r.form);
		return MHD_NO;
	}
	log_at(f->o.log, LOG_DEBUG, real_wall(), "sim aws: %s %s %s%s%s -> %d", method, url,
	       r.action ? r.service : "", r.action ? " " : "", r.action ? r.action : "", r.code);
	resp = face_http_response(&r.body);
	if (!resp) {
		aws_form_free(&r.form);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", r.content_type ? r.content_type : "text/xml");
	if (r.action)
		MHD_add_response_header(resp, "x-amzn-RequestId", r.rid);
	if (ttl_header)
		MHD_add_response_header(resp, "X-aws-ec2-metadata-token-ttl-seconds", ttl_header);
	if (query_error[0])
		MHD_add_response_header(resp, "x-amzn-query-error", query_error);
	rc = face_http_queue(conn, r.code, resp);
	aws_form_free(&r.form);
	return rc;
}

struct aws_face *aws_face_new(struct sim_aws *aws, const struct aws_face_opts *o,
			      struct errbuf *err)
{
	struct aws_face *f = calloc(1, sizeof(*f));
	struct face_http_opts ho;

	if (!f) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	if (o)
		f->o = *o;
	f->aws = aws;
	f->cloud = sim_aws_cloud(aws);
	f->conf = sim_aws_conf(aws);
	f->rng = (uint64_t)real_ns() ^ 0x9e3779b97f4a7c15ULL;
	snprintf(f->cluster_key, sizeof(f->cluster_key), "k8s.io/cluster-autoscaler/%.120s",
		 f->conf->cluster);
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	memset(&ho, 0, sizeof(ho));
	ho.port = f->o.port;
	ho.name = "sim aws";
	ho.log = f->o.log;
	ho.timeout_s = 120;
	ho.binary = true;
	f->http = face_http_start(&ho, on_request, f, err);
	if (!f->http) {
		aws_face_free(f);
		return NULL;
	}
	f->port = face_http_port(f->http);
	log_at(f->o.log, LOG_INFO, real_wall(), "sim aws: serving on http://127.0.0.1:%d (region %s)",
	       f->port, f->conf->region);
	return f;
}

int aws_face_port(const struct aws_face *f)
{
	return f->port;
}

int aws_face_write_env(const struct aws_face *f, const char *path, struct errbuf *err)
{
	const struct sim_aws_conf *c = f->conf;
	char url[64], uri[96];
	FILE *out = face_open_private(path, err);

	if (!out)
		return -1;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", f->port);
	fprintf(out, "# Written by luascale sim: its AWS face on 127.0.0.1:%d. Holds the scenario's\n"
		     "# credentials. Use: set -a; . THIS_FILE; set +a\n", f->port);
	face_env_line(out, "AWS_ENDPOINT_URL", url);
	face_env_line(out, "AWS_REGION", c->region);
	face_env_line(out, "AWS_DEFAULT_REGION", c->region);
	face_env_line(out, "AWS_ACCESS_KEY_ID", c->access_key_id);
	face_env_line(out, "AWS_SECRET_ACCESS_KEY", c->secret_access_key);
	if (c->session_token && c->session_token[0])
		face_env_line(out, "AWS_SESSION_TOKEN", c->session_token);
	face_env_line(out, "LUASCALE_SIM_AWS_IMDS", url);
	if (c->container_token) {
		snprintf(uri, sizeof(uri), "%s/v1/credentials", url);
		face_env_line(out, "LUASCALE_SIM_AWS_CONTAINER_URI", uri);
		face_env_line(out, "LUASCALE_SIM_AWS_CONTAINER_TOKEN", c->container_token);
	}
	return face_close_file(out, path, err);
}

void aws_face_free(struct aws_face *f)
{
	struct fleet_token *t, *next;

	if (!f)
		return;
	pthread_mutex_lock(&f->mu);
	f->stopping = true;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
	face_http_stop(f->http);
	for (t = f->fleets; t; t = next) {
		next = t->next;
		free(t->token);
		free(t->request);
		free(t->answer);
		free(t);
	}
	pthread_mutex_destroy(&f->mu);
	pthread_cond_destroy(&f->cv);
	free(f);
}

#define DEFAULT_AWS_ENV "./luascale-sim.aws.env"

/* ---- luascale sim: --aws-port, --aws-env-out ---- */

enum { AWS_OPT_PORT, AWS_OPT_ENV };

static const struct sim_cloud_opt aws_opts[] = {
	[AWS_OPT_PORT] = {"port", true, -1, NULL},
	[AWS_OPT_ENV] = {"env-out", false, 0, DEFAULT_AWS_ENV},
};

static void *aws_serve(void *flavour, const struct sim_face_args *a, struct errbuf *err)
{
	struct aws_face_opts fo;
	struct aws_face *face;

	memset(&fo, 0, sizeof(fo));
	fo.port = a->port[AWS_OPT_PORT];
	fo.latency_ns = a->latency_ns;
	fo.log = a->log;
	face = aws_face_new(flavour, &fo, err);
	if (!face)
		return NULL;
	if (aws_face_write_env(face, a->path[AWS_OPT_ENV], err) < 0) {
		errbuf_prefix(err, "aws env");
		aws_face_free(face);
		return NULL;
	}
	return face;
}

static void aws_announce(const void *face, const struct sim_face_args *a, FILE *out)
{
	fprintf(out,
		"luascale sim: AWS face (EC2, Auto Scaling, STS, IMDS) at http://127.0.0.1:%d\n"
		"AWS endpoint, region and credentials written to %s; try:\n"
		"  (set -a; . %s; aws --endpoint-url $AWS_ENDPOINT_URL autoscaling describe-auto-scaling-groups)\n",
		aws_face_port(face), a->path[AWS_OPT_ENV], a->path[AWS_OPT_ENV]);
}

static void aws_face_release(void *face)
{
	aws_face_free(face);
}

const struct sim_cloud_face sim_face_aws = {
	.kind = &sim_cloud_aws,
	.opts = aws_opts,
	.n_opts = sizeof(aws_opts) / sizeof(aws_opts[0]),
	.synopsis = "                    [--aws-port PORT [--aws-env-out FILE]]\n",
	.usage = "AWS (a scenario with an aws: section): --aws-port PORT (0: a free one) also\n"
		 "serves the EC2, Auto Scaling and STS APIs, IMDSv2 and container credentials\n"
		 "on http://127.0.0.1:PORT, and writes the endpoint, region and credentials\n"
		 "to --aws-env-out (default " DEFAULT_AWS_ENV "). latency=DUR applies to it too.\n",
	.face_serve = aws_serve,
	.face_announce = aws_announce,
	.face_free = aws_face_release,
};
