/*
 * Tests for the AWS credential chain and region resolution against
 * loopback fakes (a libmicrohttpd server playing STS, the container agent
 * and the instance metadata service), with an injected environment, HOME,
 * a virtual clock and a captured log: every source, the chain's order,
 * refresh and expiry, token files re-read, and no secret in any log line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <spawn.h>
#include <sys/wait.h>
#include <pthread.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <microhttpd.h>

#include "model.h"
#include "providers/aws/credentials.h"
#include "providers/aws/profile.h"
#include "providers/cloudhttp/cloudhttp.h"
#include "providers/cloudhttp/credcache.h"

#define T0 1800000000LL

/* ---- a loopback fake ---- */

#define FK_MAX 64

struct fk_req {
	char method[16];
	char path[512];
	char headers[4096]; /* "name: value\n" each, names lowercased */
	char body[16384];
};

struct fk_resp {
	int status;
	char body[16384];
	int hang; /* answer nothing until the server stops */
};

struct fake;
typedef void (*fk_handler)(struct fake *f, const struct fk_req *rq, struct fk_resp *rs);

struct fake {
	struct MHD_Daemon *d;
	char url[64];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stopping;
	fk_handler handler;
	struct fk_req reqs[FK_MAX];
	int n;
	struct clock *clk; /* for Expiration values */
	/* knobs the handlers read */
	char imds_token[64];
	int put_status;   /* 0: 200 with imds_token; -1: hang */
	int v1_allowed;
	int fail_all;     /* answer 500 to everything */
	int serial;
	char sts_error[64];
	char expect_auth[256];
};

struct fk_conn {
	struct fk_req rq;
	size_t blen;
};

static enum MHD_Result fk_header(void *cls, enum MHD_ValueKind kind, const char *key,
				 const char *value)
{
	struct fk_req *rq = cls;
	size_t n = strlen(rq->headers), i;
	char name[128];

	(void)kind;
	for (i = 0; key[i] && i + 1 < sizeof(name); i++)
		name[i] = (char)((key[i] >= 'A' && key[i] <= 'Z') ? key[i] + 32 : key[i]);
	name[i] = '\0';
	snprintf(rq->headers + n, sizeof(rq->headers) - n, "%s: %s\n", name, value ? value : "");
	return MHD_YES;
}

static enum MHD_Result fk_access(void *cls, struct MHD_Connection *conn, const char *url,
				 const char *method, const char *version, const char *upload,
				 size_t *upload_size, void **con_cls)
{
	struct fake *f = cls;
	struct fk_conn *c = *con_cls;
	struct fk_resp rs;
	struct MHD_Response *r;
	enum MHD_Result ret;

	(void)version;
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return MHD_NO;
		snprintf(c->rq.method, sizeof(c->rq.method), "%s", method);
		snprintf(c->rq.path, sizeof(c->rq.path), "%s", url);
		MHD_get_connection_values(conn, MHD_HEADER_KIND, fk_header, &c->rq);
		*con_cls = c;
		return MHD_YES;
	}
	if (*upload_size) {
		size_t n = *upload_size;

		if (c->blen + n < sizeof(c->rq.body)) {
			memcpy(c->rq.body + c->blen, upload, n);
			c->blen += n;
		}
		*upload_size = 0;
		return MHD_YES;
	}
	memset(&rs, 0, sizeof(rs));
	rs.status = 200;
	pthread_mutex_lock(&f->mu);
	if (f->n < FK_MAX)
		f->reqs[f->n++] = c->rq;
	f->handler(f, &c->rq, &rs);
	if (rs.hang) {
		while (!f->stopping)
			pthread_cond_wait(&f->cv, &f->mu);
	}
	pthread_mutex_unlock(&f->mu);
	free(c);
	*con_cls = NULL;
	if (rs.hang)
		return MHD_NO;
	r = MHD_create_response_from_buffer(strlen(rs.body), rs.body, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	ret = MHD_queue_response(conn, (unsigned int)rs.status, r);
	MHD_destroy_response(r);
	return ret;
}

static void fk_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)conn;
	(void)toe;
	free(*con_cls);
	*con_cls = NULL;
}

static void fk_start(struct fake *f, fk_handler h, struct clock *clk)
{
	struct sockaddr_in sa;
	const union MHD_DaemonInfo *info;

	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	f->handler = h;
	f->clk = clk;
	f->v1_allowed = 1;
	snprintf(f->imds_token, sizeof(f->imds_token), "IMDSTOKS3KR1T-1");
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0,
				NULL, NULL, fk_access, f, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				MHD_OPTION_NOTIFY_COMPLETED, fk_completed, f, MHD_OPTION_END);
	assert_non_null(f->d);
	info = MHD_get_daemon_info(f->d, MHD_DAEMON_INFO_BIND_PORT);
	assert_non_null(info);
	snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%d", info->port);
}

static void fk_stop(struct fake *f)
{
	pthread_mutex_lock(&f->mu);
	f->stopping = 1;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
	MHD_stop_daemon(f->d);
	pthread_cond_destroy(&f->cv);
	pthread_mutex_destroy(&f->mu);
}

static int fk_count(struct fake *f)
{
	int n;

	pthread_mutex_lock(&f->mu);
	n = f->n;
	pthread_mutex_unlock(&f->mu);
	return n;
}

/* The value of header 'name' (lowercase) in 'rq' into 'out', or "" */
static const char *fk_hdr(const struct fk_req *rq, const char *name, char *out, size_t len)
{
	char key[160];
	const char *p, *e;

	snprintf(key, sizeof(key), "%s: ", name);
	out[0] = '\0';
	for (p = rq->headers; (p = strstr(p, key)); p++) {
		if (p != rq->headers && p[-1] != '\n')
			continue;
		p += strlen(key);
		e = strchr(p, '\n');
		snprintf(out, len, "%.*s", (int)(e ? e - p : (long)strlen(p)), p);
		return out;
	}
	return out;
}

/* Decodes form field 'name' of an x-www-form-urlencoded body into 'out'. */
static const char *form_get(const char *body, const char *name, char *out, size_t len)
{
	size_t nl = strlen(name), o = 0;
	const char *p = body;

	out[0] = '\0';
	while (p && *p) {
		if (strncmp(p, name, nl) == 0 && p[nl] == '=') {
			p += nl + 1;
			while (*p && *p != '&' && o + 1 < len) {
				if (*p == '%' && p[1] && p[2]) {
					char hex[3] = { p[1], p[2], 0 };

					out[o++] = (char)strtol(hex, NULL, 16);
					p += 3;
				} else {
					out[o++] = *p++;
				}
			}
			out[o] = '\0';
			return out;
		}
		p = strchr(p, '&');
		if (p)
			p++;
	}
	return out;
}

static void expiration(struct fake *f, int64_t in_s, char *out, size_t len)
{
	model_format_time(clock_wall(f->clk) + in_s, out, len);
}

/* ---- the handlers ---- */

static void creds_json(struct fake *f, struct fk_resp *rs, const char *extra)
{
	char exp[40];

	expiration(f, 3600, exp, sizeof(exp));
	f->serial++;
	snprintf(rs->body, sizeof(rs->body),
		 "{%s\"AccessKeyId\":\"ASIAKEYS3KR1T%d\",\"SecretAccessKey\":\"SKS3KR1T%d\","
		 "\"Token\":\"SESSIONS3KR1T%d\",\"Expiration\":\"%s\"}",
		 extra, f->serial, f->serial, f->serial, exp);
}

static void imds_handler(struct fake *f, const struct fk_req *rq, struct fk_resp *rs)
{
	char tok[256], ttl[32];

	if (f->fail_all) {
		rs->status = 500;
		return;
	}
	if (strcmp(rq->path, "/latest/api/token") == 0) {
		if (strcmp(rq->method, "PUT") != 0) {
			rs->status = 405;
			return;
		}
		if (f->put_status == -1) {
			rs->hang = 1;
			return;
		}
		if (f->put_status) {
			rs->status = f->put_status;
			return;
		}
		fk_hdr(rq, "x-aws-ec2-metadata-token-ttl-seconds", ttl, sizeof(ttl));
		if (strcmp(ttl, "21600") != 0) {
			rs->status = 400;
			return;
		}
		snprintf(rs->body, sizeof(rs->body), "%s", f->imds_token);
		return;
	}
	fk_hdr(rq, "x-aws-ec2-metadata-token", tok, sizeof(tok));
	if (tok[0] ? strcmp(tok, f->imds_token) != 0 : !f->v1_allowed) {
		rs->status = 401;
		return;
	}
	if (strcmp(rq->path, "/latest/meta-data/iam/security-credentials/") == 0)
		snprintf(rs->body, sizeof(rs->body), "node-role");
	else if (strcmp(rq->path, "/latest/meta-data/iam/security-credentials/node-role") == 0)
		creds_json(f, rs, "\"Code\":\"Success\",\"Type\":\"AWS-HMAC\",");
	else if (strcmp(rq->path, "/latest/meta-data/placement/region") == 0)
		snprintf(rs->body, sizeof(rs->body), "eu-central-1");
	else
		rs->status = 404;
}

static void imds_noregion_handler(struct fake *f, const struct fk_req *rq, struct fk_resp *rs)
{
	if (strcmp(rq->path, "/latest/meta-data/placement/region") == 0) {
		rs->status = 404;
		return;
	}
	if (strcmp(rq->path, "/latest/meta-data/placement/availability-zone") == 0) {
		snprintf(rs->body, sizeof(rs->body), "ap-southeast-2b");
		return;
	}
	imds_handler(f, rq, rs);
}

static void imds_norole_handler(struct fake *f, const struct fk_req *rq, struct fk_resp *rs)
{
	if (strcmp(rq->path, "/latest/meta-data/iam/security-credentials/") == 0) {
		rs->status = 404;
		return;
	}
	imds_handler(f, rq, rs);
}

static void sts_handler(struct fake *f, const struct fk_req *rq, struct fk_resp *rs)
{
	char v[1024], exp[40], auth[256];

	if (f->fail_all) {
		rs->status = 503;
		return;
	}
	fk_hdr(rq, "authorization", auth, sizeof(auth));
	if (strcmp(rq->method, "POST") != 0 || strcmp(rq->path, "/") != 0 || auth[0] ||
	    strcmp(form_get(rq->body, "Action", v, sizeof(v)), "AssumeRoleWithWebIdentity") != 0 ||
	    strcmp(form_get(rq->body, "Version", v, sizeof(v)), "2011-06-15") != 0) {
		rs->status = 400;
		snprintf(rs->body, sizeof(rs->body),
			 "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidAction</Code>"
			 "<Message>bad request</Message></Error></ErrorResponse>");
		return;
	}
	if (f->sts_error[0]) {
		rs->status = 403;
		snprintf(rs->body, sizeof(rs->body),
			 "<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><Error>"
			 "<Type>Sender</Type><Code>%s</Code><Message>Not authorized to perform "
			 "sts:AssumeRoleWithWebIdentity</Message></Error><RequestId>r-1</RequestId>"
			 "</ErrorResponse>", f->sts_error);
		return;
	}
	expiration(f, 3600, exp, sizeof(exp));
	f->serial++;
	snprintf(rs->body, sizeof(rs->body),
		 "<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\n"
		 "  <AssumeRoleWithWebIdentityResult>\n"
		 "    <SubjectFromWebIdentityToken>system:serviceaccount:kube-system:luascale</SubjectFromWebIdentityToken>\n"
		 "    <Credentials>\n"
		 "      <SessionToken>STSSESSIONS3KR1T%d</SessionToken>\n"
		 "      <SecretAccessKey>STSSKS3KR1T%d</SecretAccessKey>\n"
		 "      <Expiration>%s</Expiration>\n"
		 "      <AccessKeyId>ASIASTSKEYS3KR1T%d</AccessKeyId>\n"
		 "    </Credentials>\n"
		 "  </AssumeRoleWithWebIdentityResult>\n"
		 "  <ResponseMetadata><RequestId>r-2</RequestId></ResponseMetadata>\n"
		 "</AssumeRoleWithWebIdentityResponse>\n",
		 f->serial, f->serial, exp, f->serial);
}

static void container_handler(struct fake *f, const struct fk_req *rq, struct fk_resp *rs)
{
	char auth[256];

	if (f->fail_all) {
		rs->status = 500;
		return;
	}
	fk_hdr(rq, "authorization", auth, sizeof(auth));
	if (strcmp(auth, f->expect_auth) != 0) {
		rs->status = 401;
		snprintf(rs->body, sizeof(rs->body), "{\"code\":\"AccessDenied\",\"message\":\"bad token\"}");
		return;
	}
	creds_json(f, rs, "\"AccountId\":\"123456789012\",");
}

/* ---- the fixture ---- */

#define ENV_MAX 32

struct fx {
	struct clock *clk;
	char dir[256];
	char names[ENV_MAX][64];
	char values[ENV_MAX][1024];
	int nenv;
	struct aws_env env;
	char log[65536];
	int warns;
	struct logger logger;
	struct cloudhttp *http;
	struct aws_credchain_opts o;
	struct fake fk;
	int fk_on;
};

static const char *fx_getenv(void *ud, const char *name)
{
	struct fx *f = ud;
	int i;

	for (i = 0; i < f->nenv; i++)
		if (strcmp(f->names[i], name) == 0)
			return f->values[i];
	return NULL;
}

static void fx_setenv(struct fx *f, const char *name, const char *value)
{
	int i;

	for (i = 0; i < f->nenv; i++)
		if (strcmp(f->names[i], name) == 0)
			break;
	assert_true(i < ENV_MAX);
	if (i == f->nenv)
		f->nenv++;
	snprintf(f->names[i], sizeof(f->names[i]), "%s", name);
	snprintf(f->values[i], sizeof(f->values[i]), "%s", value);
}

static void capture(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct fx *f = ctx;
	size_t n = strlen(f->log);

	(void)wall;
	if (level == LOG_WARN)
		f->warns++;
	snprintf(f->log + n, sizeof(f->log) - n, "%s\n", msg);
}

static void fx_write(struct fx *f, const char *name, const char *text, char *path, size_t len)
{
	char p[512];
	FILE *fp;

	snprintf(p, sizeof(p), "%s/%s", f->dir, name);
	fp = fopen(p, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
	if (path)
		snprintf(path, len, "%s", p);
}

static struct fx *fx_new(void)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct cloudhttp_opts ho;
	struct errbuf e = { "" };
	char aws[300];

	assert_non_null(f);
	f->clk = vclock_new(T0);
	snprintf(f->dir, sizeof(f->dir), "/tmp/luascale-awscreds-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(aws, sizeof(aws), "%s/.aws", f->dir);
	assert_int_equal(mkdir(aws, 0700), 0);
	f->env.get = fx_getenv;
	f->env.ud = f;
	f->logger = (struct logger){ capture, f, LOG_DEBUG, NULL };
	memset(&ho, 0, sizeof(ho));
	ho.clock = f->clk;
	ho.log = &f->logger;
	ho.connect_timeout_ms = 1000;
	ho.request_timeout_ms = 5000;
	ho.max_attempts = 2;
	ho.verbose = true; /* headers logged at debug: redaction is checked too */
	f->http = cloudhttp_new(&ho, &e);
	assert_non_null(f->http);
	f->o.env = &f->env;
	f->o.home = f->dir;
	f->o.http = f->http;
	f->o.clock = f->clk;
	f->o.log = &f->logger;
	f->o.imds_timeout_ms = 400;
	/* IMDS must never be reached by accident: a closed port */
	f->o.imds_base_url = "http://127.0.0.1:9";
	return f;
}

static void fx_fake(struct fx *f, fk_handler h)
{
	fk_start(&f->fk, h, f->clk);
	f->fk_on = 1;
}

/* Replaces the fixture's fake by one with another handler. */
static void fx_stop_and_serve(struct fx *f, fk_handler h)
{
	fk_stop(&f->fk);
	fk_start(&f->fk, h, f->clk);
}

static void rm_tree(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* Every secret this file hands out carries "S3KR1T": none may be logged. */
static void assert_no_secret_logged(struct fx *f)
{
	if (strstr(f->log, "S3KR1T"))
		fail_msg("a secret reached the log:\n%s", f->log);
}

static void fx_free(struct fx *f)
{
	assert_no_secret_logged(f);
	if (f->fk_on)
		fk_stop(&f->fk);
	cloudhttp_free(f->http);
	rm_tree(f->dir);
	vclock_free(f->clk);
	free(f);
}

static void at(struct fx *f, int64_t offset_s)
{
	vclock_set(f->clk, offset_s * CLOCK_NS_PER_S);
}

static struct aws_credchain *chain(struct fx *f, struct errbuf *e)
{
	return aws_credchain_new(&f->o, e);
}

/* ---- environment ---- */

static void test_env(void **state)
{
	struct fx *f = fx_new();
	struct aws_credchain *c;
	struct aws_credentials cr;
	struct errbuf e = { "" };
	char path[512];

	(void)state;
	fx_setenv(f, "AWS_ACCESS_KEY_ID", "AKIDENVS3KR1T");
	fx_setenv(f, "AWS_SECRET_ACCESS_KEY", "ENVSKS3KR1T");
	fx_setenv(f, "AWS_SESSION_TOKEN", "ENVTOKS3KR1T");
	/* a profile with keys loses to the environment */
	fx_write(f, ".aws/credentials", "[default]\naws_access_key_id=AKIDFILES3KR1T\n"
		 "aws_secret_access_key=FILESKS3KR1T\n", path, sizeof(path));
	c = chain(f, &e);
	assert_non_null(c);
	assert_string_equal(aws_credchain_source(c), "environment");
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_string_equal(cr.access_key_id, "AKIDENVS3KR1T");
	assert_string_equal(cr.secret_access_key, "ENVSKS3KR1T");
	assert_string_equal(cr.session_token, "ENVTOKS3KR1T");
	assert_string_equal(cr.source, "environment");
	assert_int_equal(cr.expires_s, 0);
	/* static keys never expire nor refresh */
	at(f, 400 * 86400);
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_string_equal(cr.access_key_id, "AKIDENVS3KR1T");
	assert_non_null(strstr(f->log, "credentials from environment"));
	aws_credchain_free(c);
	fx_free(f);
}

static void test_env_half_set_is_error(void **state)
{
	struct fx *f = fx_new();
	struct errbuf e = { "" };

	(void)state;
	fx_setenv(f, "AWS_ACCESS_KEY_ID", "AKIDENVS3KR1T");
	assert_null(chain(f, &e));
	assert_non_null(strstr(e.msg, "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"));
	assert_null(strstr(e.msg, "S3KR1T"));
	/* an empty variable is unset */
	fx_setenv(f, "AWS_ACCESS_KEY_ID", "");
	fx_setenv(f, "AWS_EC2_METADATA_DISABLED", "true");
	assert_null(chain(f, &e));
	assert_non_null(strstr(e.msg, "no AWS credentials"));
	fx_free(f);
}

static void test_env_expiration(void **state)
{
	struct fx *f = fx_new();
	struct aws_credchain *c;
	struct aws_credentials cr;
	struct errbuf e = { "" };
	char when[40];

	(void)state;
	fx_setenv(f, "AWS_ACCESS_KEY_ID", "AKIDENVS3KR1T");
	fx_setenv(f, "AWS_SECRET_ACCESS_KEY", "ENVSKS3KR1T");
	model_format_time(T0 + 4800, when, sizeof(when));
	fx_setenv(f, "AWS_CREDENTIAL_EXPIRATION", when);
	c = chain(f, &e);
	assert_non_null(c);
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_int_equal(cr.expires_s, T0 + 4800);
	at(f, 4800);
	assert_int_equal(aws_credchain_get(c, &cr, &e), -1);
	assert_non_null(strstr(e.msg, "expired"));
	aws_credchain_free(c);
	fx_setenv(f, "AWS_CREDENTIAL_EXPIRATION", "tomorrow");
	assert_null(chain(f, &e));
	assert_non_null(strstr(e.msg, "AWS_CREDENTIAL_EXPIRATION"));
	fx_free(f);
}

/* ---- shared files ---- */

static const char *const cred_file =
	"# luascale test credentials\n"
	"[default]\n"
	"aws_access_key_id = AKIDDEFAULTS3KR1T\n"
	"aws_secret_access_key = DEFAULTSKS3KR1T\n"
	"\n"
	"  ; an indented comment\n"
	"[dev]   # trailing comment\n"
	"\taws_access_key_id=AKIDDEVS3KR1T   \n"
	"aws_secret_access_key =   DEVSKS3KR1T ; inline comment\r\n"
	"aws_session_token = DEVTOKS3KR1T\n"
	"region = us-west-2\n";

static const char *const config_file =
	"[default]\n"
	"region = eu-west-1\n"
	"[profile dev]\n"
	"aws_access_key_id = AKIDCONFIGDEVS3KR1T\n"
	"aws_secret_access_key = CONFIGDEVSKS3KR1T\n"
	"region = eu-north-1\n"
	"s3 =\n"
	"  max_concurrent_requests = 10\n"
	"[cfgonly]\n" /* without "profile": not a profile in the config file */
	"aws_access_key_id = AKIDWRONGS3KR1T\n"
	"aws_secret_access_key = WRONGSKS3KR1T\n"
	"[profile cfgonly]\n"
	"aws_access_key_id = AKIDCFGS3KR1T\n"
	"aws_secret_access_key = CFGSKS3KR1T\n"
	"services = local\n"
	"[services local]\n"
	"ec2 =\n"
	"  endpoint_url = http://127.0.0.1:4566\n"
	"auto_scaling =\n"
	"  endpoint_url = http://127.0.0.1:4567\n";

static void test_shared_files(void **state)
{
	struct fx *f = fx_new();
	struct aws_credchain *c;
	struct aws_credentials cr;
	struct errbuf e = { "" };
	struct aws_profile *p = calloc(1, sizeof(*p));
	struct aws_profile_opts po = { &f->env, f->dir, NULL };
	char region[64];
	const char *from;

	(void)state;
	assert_non_null(p);
	fx_write(f, ".aws/credentials", cred_file, NULL, 0);
	fx_write(f, ".aws/config", config_file, NULL, 0);
	/* default profile: keys from the credentials file, region from config */
	c = chain(f, &e);
	assert_non_null(c);
	assert_string_equal(aws_credchain_source(c), "shared-credentials-file");
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_string_equal(cr.access_key_id, "AKIDDEFAULTS3KR1T");
	assert_string_equal(cr.secret_access_key, "DEFAULTSKS3KR1T");
	assert_string_equal(cr.session_token, "");
	aws_credchain_free(c);
	assert_int_equal(aws_region_resolve(&f->o, region, sizeof(region), &from, &e), 0);
	assert_string_equal(region, "eu-west-1");
	/* AWS_PROFILE=dev: the credentials file beats [profile dev] in config,
	 * whitespace, CRLF and comments stripped */
	fx_setenv(f, "AWS_PROFILE", "dev");
	c = chain(f, &e);
	assert_non_null(c);
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_string_equal(cr.access_key_id, "AKIDDEVS3KR1T");
	assert_string_equal(cr.secret_access_key, "DEVSKS3KR1T");
	assert_string_equal(cr.session_token, "DEVTOKS3KR1T");
	aws_credchain_free(c);
	assert_int_equal(aws_region_resolve(&f->o, region, sizeof(region), &from, &e), 0);
	assert_string_equal(region, "us-west-2"); /* the credentials file's region wins too */
	/* a profile only in the config file, as "[profile x]" */
	fx_setenv(f, "AWS_PROFILE", "cfgonly");
	c = chain(f, &e);
	assert_non_null(c);
	assert_string_equal(aws_credchain_source(c), "shared-config-file");
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_string_equal(cr.access_key_id, "AKIDCFGS3KR1T");
	aws_credchain_free(c);
	/* its services section feeds the endpoints */
	assert_int_equal(aws_profile_load(p, &po, &e), 0);
	assert_string_equal(p->endpoints.service_url[AWS_SERVICE_EC2], "http://127.0.0.1:4566");
	assert_string_equal(p->endpoints.service_url[AWS_SERVICE_AUTOSCALING], "http://127.0.0.1:4567");
	assert_string_equal(p->endpoints.service_url[AWS_SERVICE_STS], "");
	aws_profile_wipe(p);
	/* the provider's profile beats AWS_PROFILE; AWS_DEFAULT_PROFILE is the last */
	f->o.profile = "dev";
	c = chain(f, &e);
	assert_non_null(c);
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_string_equal(cr.access_key_id, "AKIDDEVS3KR1T");
	aws_credchain_free(c);
	f->o.profile = NULL;
	fx_setenv(f, "AWS_PROFILE", "");
	fx_setenv(f, "AWS_DEFAULT_PROFILE", "dev");
	c = chain(f, &e);
	assert_non_null(c);
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_string_equal(cr.access_key_id, "AKIDDEVS3KR1T");
	aws_credchain_free(c);
	/* a profile named but in neither file */
	fx_setenv(f, "AWS_DEFAULT_PROFILE", "nosuch");
	assert_null(chain(f, &e));
	assert_non_null(strstr(e.msg, "AWS profile \"nosuch\" is in neither"));
	free(p);
	fx_free(f);
}

static void test_shared_file_locations_and_errors(void **state)
{
	struct fx *f = fx_new();
	struct aws_credchain *c;
	struct aws_credentials cr;
	struct errbuf e = { "" };
	char path[512], cfg[512];

	(void)state;
	/* AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE move the files */
	fx_write(f, "creds-elsewhere", "[default]\naws_access_key_id = AKIDMOVEDS3KR1T\n"
		 "aws_secret_access_key = MOVEDSKS3KR1T\n", path, sizeof(path));
	fx_write(f, "config-elsewhere", "[profile x]\nregion = sa-east-1\n", cfg, sizeof(cfg));
	fx_setenv(f, "AWS_SHARED_CREDENTIALS_FILE", path);
	fx_setenv(f, "AWS_CONFIG_FILE", cfg);
	c = chain(f, &e);
	assert_non_null(c);
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_string_equal(cr.access_key_id, "AKIDMOVEDS3KR1T");
	aws_credchain_free(c);
	/* a secret without its key id */
	fx_write(f, "creds-elsewhere", "[default]\naws_access_key_id = AKIDLONELYS3KR1T\n", NULL, 0);
	assert_null(chain(f, &e));
	assert_non_null(strstr(e.msg, "creds-elsewhere:2: profile \"default\" has aws_access_key_id "
				      "but no aws_secret_access_key"));
	/* a malformed line names the file and line */
	fx_write(f, "creds-elsewhere", "[default]\naws_access_key_id AKIDBADS3KR1T\n", NULL, 0);
	assert_null(chain(f, &e));
	assert_non_null(strstr(e.msg, "creds-elsewhere:2: expected \"name = value\""));
	assert_null(strstr(e.msg, "S3KR1T"));
	fx_write(f, "creds-elsewhere", "aws_access_key_id = x\n[default]\n", NULL, 0);
	assert_null(chain(f, &e));
	assert_non_null(strstr(e.msg, ":1: a setting before any [section]"));
	/* a profile naming a services section that does not exist */
	fx_write(f, "creds-elsewhere", "", NULL, 0);
	fx_write(f, "config-elsewhere", "[default]\nservices = gone\n", NULL, 0);
	fx_setenv(f, "AWS_EC2_METADATA_DISABLED", "true");
	assert_null(chain(f, &e));
	assert_non_null(strstr(e.msg, "services section \"gone\""));
	/* a role without a token file is not silently skipped */
	fx_write(f, "config-elsewhere", "[default]\nrole_arn = arn:aws:iam::1:role/r\n"
		 "source_profile = other\n", NULL, 0);
	assert_null(chain(f, &e));
	assert_non_null(strstr(e.msg, "role_arn but no web_identity_token_file"));
	/* /dev/null switches a file off, as the SDKs read it: the environment's
	 * keys are then the source */
	fx_setenv(f, "AWS_SHARED_CREDENTIALS_FILE", "/dev/null");
	fx_setenv(f, "AWS_CONFIG_FILE", "/dev/null");
	{
		struct aws_profile prof;
		struct aws_profile_opts po = { f->o.env, f->o.home, NULL };

		if (aws_profile_load(&prof, &po, &e) < 0)
			fail_msg("%s", e.msg);
		assert_false(prof.found);
		aws_profile_wipe(&prof);
	}
	fx_free(f);
}

/* ---- web identity ---- */

static void test_web_identity_token_rotation(void **state)
{
	struct fx *f = fx_new();
	struct aws_credchain *c;
	struct aws_credentials cr;
	struct errbuf e = { "" };
	char tokfile[512], v[1024];
	struct fk_req rq;

	(void)state;
	fx_fake(f, sts_handler);
	fx_write(f, "token", "WEBIDTOKS3KR1T-ONE\n", tokfile, sizeof(tokfile));
	fx_setenv(f, "AWS_WEB_IDENTITY_TOKEN_FILE", tokfile);
	fx_setenv(f, "AWS_ROLE_ARN", "arn:aws:iam::111122223333:role/luascale");
	fx_setenv(f, "AWS_ROLE_SESSION_NAME", "luascale-test");
	fx_setenv(f, "AWS_ENDPOINT_URL_STS", f->fk.url);
	c = chain(f, &e);
	assert_non_null(c);
	assert_string_equal(aws_credchain_source(c), "web-identity");
	assert_int_equal(fk_count(&f->fk), 0); /* nothing fetched before it is needed */
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_string_equal(cr.access_key_id, "ASIASTSKEYS3KR1T1");
	assert_string_equal(cr.secret_access_key, "STSSKS3KR1T1");
	assert_string_equal(cr.session_token, "STSSESSIONS3KR1T1");
	assert_int_equal(cr.expires_s, T0 + 3600);
	assert_string_equal(cr.source, "web-identity");
	assert_int_equal(fk_count(&f->fk), 1);
	rq = f->fk.reqs[0];
	assert_string_equal(form_get(rq.body, "WebIdentityToken", v, sizeof(v)), "WEBIDTOKS3KR1T-ONE");
	assert_string_equal(form_get(rq.body, "RoleArn", v, sizeof(v)),
			    "arn:aws:iam::111122223333:role/luascale");
	assert_string_equal(form_get(rq.body, "RoleSessionName", v, sizeof(v)), "luascale-test");
	assert_non_null(strstr(fk_hdr(&rq, "content-type", v, sizeof(v)),
			       "application/x-www-form-urlencoded"));
	/* still fresh: no call */
	at(f, 3600 - 16 * 60);
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_int_equal(fk_count(&f->fk), 1);
	/* the kubelet rotates the token; the advisory window opens */
	fx_write(f, "token", "WEBIDTOKS3KR1T-TWO", NULL, 0);
	at(f, 3600 - 15 * 60);
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_int_equal(fk_count(&f->fk), 2);
	assert_string_equal(form_get(f->fk.reqs[1].body, "WebIdentityToken", v, sizeof(v)),
			    "WEBIDTOKS3KR1T-TWO");
	assert_string_equal(cr.access_key_id, "ASIASTSKEYS3KR1T2");
	assert_int_equal(cr.expires_s, T0 + 3600 - 15 * 60 + 3600);
	assert_non_null(strstr(f->log, "credentials from web-identity"));
	/* STS goes down: the current credentials serve until they expire */
	f->fk.fail_all = 1;
	at(f, 3600 - 15 * 60 + 3600 - 5 * 60);
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_string_equal(cr.access_key_id, "ASIASTSKEYS3KR1T2");
	at(f, 3600 - 15 * 60 + 3600);
	assert_int_equal(aws_credchain_get(c, &cr, &e), -1);
	assert_non_null(strstr(e.msg, "web identity: STS AssumeRoleWithWebIdentity at"));
	assert_non_null(strstr(e.msg, "HTTP 503"));
	aws_credchain_free(c);
	fx_free(f);
}

static void test_web_identity_refused_does_not_fall_through(void **state)
{
	struct fx *f = fx_new();
	struct aws_credchain *c;
	struct aws_credentials cr;
	struct errbuf e = { "" };
	struct fake imds;
	char tokfile[512];

	(void)state;
	fx_fake(f, sts_handler);
	fk_start(&imds, imds_handler, f->clk);
	f->o.imds_base_url = imds.url;
	snprintf(f->fk.sts_error, sizeof(f->fk.sts_error), "AccessDenied");
	fx_write(f, "token", "WEBIDTOKS3KR1T", tokfile, sizeof(tokfile));
	fx_setenv(f, "AWS_WEB_IDENTITY_TOKEN_FILE", tokfile);
	fx_setenv(f, "AWS_ROLE_ARN", "arn:aws:iam::111122223333:role/luascale");
	fx_setenv(f, "AWS_ENDPOINT_URL_STS", f->fk.url);
	c = chain(f, &e);
	assert_non_null(c);
	assert_int_equal(aws_credchain_get(c, &cr, &e), -1);
	assert_non_null(strstr(e.msg, "web identity"));
	assert_non_null(strstr(e.msg, "AccessDenied"));
	assert_non_null(strstr(e.msg, "Not authorized"));
	assert_null(strstr(e.msg, "S3KR1T"));
	assert_int_equal(fk_count(&imds), 0);
	assert_string_equal(cr.access_key_id, "");
	aws_credchain_free(c);
	/* a token file that is gone is an error naming the file */
	unlink(tokfile);
	f->fk.sts_error[0] = '\0';
	c = chain(f, &e);
	assert_non_null(c);
	assert_int_equal(aws_credchain_get(c, &cr, &e), -1);
	assert_non_null(strstr(e.msg, tokfile));
	aws_credchain_free(c);
	/* a token file without a role */
	fx_setenv(f, "AWS_ROLE_ARN", "");
	assert_null(chain(f, &e));
	assert_non_null(strstr(e.msg, "no role"));
	fk_stop(&imds);
	fx_free(f);
}

static void test_web_identity_from_profile(void **state)
{
	struct fx *f = fx_new();
	struct aws_credchain *c;
	struct aws_credentials cr;
	struct errbuf e = { "" };
	char tokfile[512], cfg[1200], v[1024];

	(void)state;
	fx_fake(f, sts_handler);
	fx_write(f, "token", "PROFILETOKS3KR1T", tokfile, sizeof(tokfile));
	snprintf(cfg, sizeof(cfg),
		 "[profile irsa]\nregion = us-east-2\nrole_arn = arn:aws:iam::1:role/from-profile\n"
		 "web_identity_token_file = %s\nrole_session_name = prof-session\n"
		 "endpoint_url = %s\n", tokfile, f->fk.url);
	fx_write(f, ".aws/config", cfg, NULL, 0);
	fx_setenv(f, "AWS_PROFILE", "irsa");
	c = chain(f, &e);
	assert_non_null(c);
	assert_string_equal(aws_credchain_source(c), "web-identity");
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_string_equal(cr.access_key_id, "ASIASTSKEYS3KR1T1");
	assert_string_equal(form_get(f->fk.reqs[0].body, "RoleArn", v, sizeof(v)),
			    "arn:aws:iam::1:role/from-profile");
	assert_string_equal(form_get(f->fk.reqs[0].body, "RoleSessionName", v, sizeof(v)),
			    "prof-session");
	assert_string_equal(form_get(f->fk.reqs[0].body, "WebIdentityToken", v, sizeof(v)),
			    "PROFILETOKS3KR1T");
	aws_credchain_free(c);
	fx_free(f);
}

/* ---- container credentials ---- */

static void test_container_full_uri_token_file(void **state)
{
	struct fx *f = fx_new();
	struct aws_credchain *c;
	struct aws_credentials cr;
	struct errbuf e = { "" };
	char tokfile[512], uri[256], v[256];

	(void)state;
	fx_fake(f, container_handler);
	snprintf(uri, sizeof(uri), "%s/v1/credentials", f->fk.url);
	fx_write(f, "pod-identity-token", "PODTOKS3KR1T-A\n", tokfile, sizeof(tokfile));
	snprintf(f->fk.expect_auth, sizeof(f->fk.expect_auth), "PODTOKS3KR1T-A");
	fx_setenv(f, "AWS_CONTAINER_CREDENTIALS_FULL_URI", uri);
	fx_setenv(f, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", tokfile);
	fx_setenv(f, "AWS_CONTAINER_AUTHORIZATION_TOKEN", "IGNOREDS3KR1T"); /* the file wins */
	c = chain(f, &e);
	assert_non_null(c);
	assert_string_equal(aws_credchain_source(c), "container");
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_string_equal(cr.access_key_id, "ASIAKEYS3KR1T1");
	assert_string_equal(cr.secret_access_key, "SKS3KR1T1");
	assert_string_equal(cr.session_token, "SESSIONS3KR1T1");
	assert_int_equal(cr.expires_s, T0 + 3600);
	assert_string_equal(f->fk.reqs[0].path, "/v1/credentials");
	assert_string_equal(fk_hdr(&f->fk.reqs[0], "accept", v, sizeof(v)), "application/json");
	/* the token file is re-read at the refresh */
	fx_write(f, "pod-identity-token", "PODTOKS3KR1T-B", NULL, 0);
	snprintf(f->fk.expect_auth, sizeof(f->fk.expect_auth), "PODTOKS3KR1T-B");
	at(f, 3600 - 10 * 60);
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_string_equal(cr.access_key_id, "ASIAKEYS3KR1T2");
	/* the agent refusing the token: an error with the agent's message */
	snprintf(f->fk.expect_auth, sizeof(f->fk.expect_auth), "something else");
	credcache_wipe(&cr, sizeof(cr));
	aws_credchain_invalidate(c);
	assert_int_equal(aws_credchain_get(c, &cr, &e), -1);
	assert_non_null(strstr(e.msg, "AccessDenied: bad token"));
	assert_non_null(strstr(e.msg, "container credentials at"));
	assert_non_null(strstr(e.msg, ": HTTP 401"));
	aws_credchain_free(c);
	fx_free(f);
}

static void test_container_relative_uri(void **state)
{
	struct fx *f = fx_new();
	struct aws_credchain *c;
	struct aws_credentials cr;
	struct errbuf e = { "" };

	(void)state;
	fx_fake(f, container_handler);
	f->o.container_base_url = f->fk.url; /* stands for 169.254.170.2 */
	fx_setenv(f, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/abc-123");
	fx_setenv(f, "AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://169.254.170.23/ignored");
	fx_setenv(f, "AWS_CONTAINER_AUTHORIZATION_TOKEN", "ECSTOKS3KR1T");
	snprintf(f->fk.expect_auth, sizeof(f->fk.expect_auth), "ECSTOKS3KR1T");
	c = chain(f, &e);
	assert_non_null(c);
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_string_equal(f->fk.reqs[0].path, "/v2/credentials/abc-123");
	assert_string_equal(cr.access_key_id, "ASIAKEYS3KR1T1");
	aws_credchain_free(c);
	fx_free(f);
}

static void test_container_hosts(void **state)
{
	static const char *const allowed[] = {
		"http://127.0.0.1:1/creds", "http://127.1.2.3/", "http://localhost:80/x",
		"http://169.254.170.2/v2/x", "http://169.254.170.23/v1/credentials",
		"http://[fd00:ec2::23]/v1/credentials", "http://[::1]:8080/", "https://127.0.0.1/",
		"https://creds.example.com/v1", /* https goes anywhere, as in botocore */
	};
	static const char *const refused[] = {
		"http://169.254.169.254/latest", "http://example.com/creds", "http://10.0.0.1/",
		"http://[fd00:ec2::254]/", "http://localhost.example.com/", "ftp://127.0.0.1/",
	};
	struct fx *f = fx_new();
	struct aws_credchain *c;
	struct errbuf e = { "" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		fx_setenv(f, "AWS_CONTAINER_CREDENTIALS_FULL_URI", allowed[i]);
		c = chain(f, &e);
		if (!c)
			fail_msg("refused %s: %s", allowed[i], e.msg);
		aws_credchain_free(c);
	}
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		fx_setenv(f, "AWS_CONTAINER_CREDENTIALS_FULL_URI", refused[i]);
		c = chain(f, &e);
		if (c)
			fail_msg("accepted %s", refused[i]);
		assert_non_null(strstr(e.msg, "AWS_CONTAINER_CREDENTIALS_FULL_URI"));
	}
	/* a token with a line break would inject a header */
	fx_setenv(f, "AWS_CONTAINER_CREDENTIALS_FULL_URI", allowed[0]);
	fx_setenv(f, "AWS_CONTAINER_AUTHORIZATION_TOKEN", "abc\r\nX-Evil: 1");
	assert_null(chain(f, &e));
	assert_non_null(strstr(e.msg, "line break"));
	fx_free(f);
}

/* ---- instance metadata ---- */

static void test_imds_v2(void **state)
{
	struct fx *f = fx_new();
	struct aws_credchain *c;
	struct aws_credentials cr;
	struct errbuf e = { "" };
	char v[256];
	int i;

	(void)state;
	fx_fake(f, imds_handler);
	f->fk.v1_allowed = 0; /* HttpTokens=required */
	fx_setenv(f, "AWS_EC2_METADATA_SERVICE_ENDPOINT", f->fk.url);
	c = chain(f, &e);
	assert_non_null(c);
	assert_string_equal(aws_credchain_source(c), "imds");
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_string_equal(cr.access_key_id, "ASIAKEYS3KR1T1");
	assert_string_equal(cr.session_token, "SESSIONS3KR1T1");
	assert_int_equal(cr.expires_s, T0 + 3600);
	assert_int_equal(fk_count(&f->fk), 3);
	assert_string_equal(f->fk.reqs[0].method, "PUT");
	assert_string_equal(f->fk.reqs[0].path, "/latest/api/token");
	assert_string_equal(fk_hdr(&f->fk.reqs[0], "x-aws-ec2-metadata-token-ttl-seconds", v, sizeof(v)),
			    "21600");
	assert_string_equal(f->fk.reqs[1].path, "/latest/meta-data/iam/security-credentials/");
	assert_string_equal(f->fk.reqs[2].path, "/latest/meta-data/iam/security-credentials/node-role");
	for (i = 1; i < 3; i++) {
		assert_string_equal(f->fk.reqs[i].method, "GET");
		assert_string_equal(fk_hdr(&f->fk.reqs[i], "x-aws-ec2-metadata-token", v, sizeof(v)),
				    "IMDSTOKS3KR1T-1");
	}
	/* the headers were logged (verbose), the token's value was not */
	assert_non_null(strstr(f->log, "x-aws-ec2-metadata-token:"));
	assert_non_null(strstr(f->log, "credentials from imds"));
	aws_credchain_free(c);
	fx_free(f);
}

static void v1_fallback(int put_status)
{
	struct fx *f = fx_new();
	struct aws_credchain *c;
	struct aws_credentials cr;
	struct errbuf e = { "" };
	char v[256];

	fx_fake(f, imds_handler);
	f->fk.put_status = put_status;
	f->o.imds_base_url = f->fk.url;
	c = chain(f, &e);
	assert_non_null(c);
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_string_equal(cr.access_key_id, "ASIAKEYS3KR1T1");
	assert_int_equal(fk_count(&f->fk), 3);
	assert_string_equal(fk_hdr(&f->fk.reqs[1], "x-aws-ec2-metadata-token", v, sizeof(v)), "");
	assert_string_equal(fk_hdr(&f->fk.reqs[2], "x-aws-ec2-metadata-token", v, sizeof(v)), "");
	assert_non_null(strstr(f->log, "using IMDSv1"));
	aws_credchain_free(c);
	fx_free(f);
}

static void test_imds_v1_fallback_403(void **state)
{
	(void)state;
	v1_fallback(403);
}

static void test_imds_v1_fallback_405(void **state)
{
	(void)state;
	v1_fallback(405);
}

static void test_imds_v1_disabled_by_variable(void **state)
{
	struct fx *f = fx_new();
	struct aws_credchain *c;
	struct aws_credentials cr;
	struct errbuf e = { "" };

	(void)state;
	fx_fake(f, imds_handler);
	f->fk.put_status = 403;
	f->o.imds_base_url = f->fk.url;
	fx_setenv(f, "AWS_EC2_METADATA_V1_DISABLED", "true");
	c = chain(f, &e);
	assert_non_null(c);
	assert_int_equal(aws_credchain_get(c, &cr, &e), -1);
	assert_non_null(strstr(e.msg, "IMDSv1 is disabled by AWS_EC2_METADATA_V1_DISABLED"));
	assert_int_equal(fk_count(&f->fk), 1); /* the PUT, no GET without a token */
	aws_credchain_free(c);
	fx_free(f);
}

static void test_imds_400_is_error(void **state)
{
	struct fx *f = fx_new();
	struct aws_credchain *c;
	struct aws_credentials cr;
	struct errbuf e = { "" };

	(void)state;
	fx_fake(f, imds_handler);
	f->fk.put_status = 400;
	f->o.imds_base_url = f->fk.url;
	c = chain(f, &e);
	assert_non_null(c);
	assert_int_equal(aws_credchain_get(c, &cr, &e), -1);
	assert_non_null(strstr(e.msg, "imds"));
	assert_non_null(strstr(e.msg, "HTTP 400"));
	assert_int_equal(fk_count(&f->fk), 1); /* no IMDSv1 after a 400 */
	aws_credchain_free(c);
	fx_free(f);
}

/* In a pod behind hop limit 1 the PUT's answer never arrives: the log says
 * why, and with IMDSv1 disabled the error names the hop limit. */
static void test_imds_put_timeout_hop_limit(void **state)
{
	struct fx *f = fx_new();
	struct aws_credchain *c;
	struct aws_credentials cr;
	struct errbuf e = { "" };

	(void)state;
	fx_fake(f, imds_handler);
	f->fk.put_status = -1;
	f->fk.v1_allowed = 0;
	f->o.imds_base_url = f->fk.url;
	f->o.imds_timeout_ms = 200;
	f->o.imds_attempts = 1;
	c = chain(f, &e);
	assert_non_null(c);
	assert_int_equal(aws_credchain_get(c, &cr, &e), -1);
	assert_non_null(strstr(e.msg, "HttpPutResponseHopLimit"));
	assert_non_null(strstr(e.msg, "IMDSv1 is disabled"));
	assert_non_null(strstr(f->log, "got no answer"));
	assert_non_null(strstr(f->log, "HttpPutResponseHopLimit must be 2"));
	aws_credchain_free(c);
	/* with IMDSv1 allowed the credentials still come */
	f->fk.v1_allowed = 1;
	c = chain(f, &e);
	assert_non_null(c);
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_string_equal(cr.access_key_id, "ASIAKEYS3KR1T1");
	aws_credchain_free(c);
	fx_free(f);
}

static void test_imds_unreachable_and_disabled(void **state)
{
	struct fx *f = fx_new();
	struct aws_credchain *c;
	struct aws_credentials cr;
	struct errbuf e = { "" };
	struct fake other;

	(void)state;
	/* nothing listens: the error says so */
	f->o.imds_attempts = 1;
	c = chain(f, &e);
	assert_non_null(c);
	assert_int_equal(aws_credchain_get(c, &cr, &e), -1);
	assert_non_null(strstr(e.msg, "no answer"));
	assert_non_null(strstr(e.msg, "AWS_EC2_METADATA_DISABLED"));
	aws_credchain_free(c);
	/* disabled: never asked */
	fk_start(&other, imds_handler, f->clk);
	fx_setenv(f, "AWS_EC2_METADATA_SERVICE_ENDPOINT", other.url);
	fx_setenv(f, "AWS_EC2_METADATA_DISABLED", "True");
	assert_null(chain(f, &e));
	assert_non_null(strstr(e.msg, "no AWS credentials"));
	assert_non_null(strstr(e.msg, "instance metadata service is disabled"));
	assert_int_equal(fk_count(&other), 0);
	fk_stop(&other);
	fx_free(f);
}

static void test_imds_no_role(void **state)
{
	struct fx *f = fx_new();
	struct aws_credchain *c;
	struct aws_credentials cr;
	struct errbuf e = { "" };

	(void)state;
	fx_fake(f, imds_norole_handler);
	f->o.imds_base_url = f->fk.url;
	c = chain(f, &e);
	assert_non_null(c);
	assert_int_equal(aws_credchain_get(c, &cr, &e), -1);
	assert_non_null(strstr(e.msg, "no IAM role"));
	aws_credchain_free(c);
	fx_free(f);
}

/* Refresh: the advisory window refreshes; a failed refresh keeps the old
 * credentials until they expire, then the error names the source. */
static void test_refresh_failure_keeps_old_until_expiry(void **state)
{
	struct fx *f = fx_new();
	struct aws_credchain *c;
	struct aws_credentials cr;
	struct errbuf e = { "" };
	int n;

	(void)state;
	fx_fake(f, imds_handler);
	f->o.imds_base_url = f->fk.url;
	c = chain(f, &e);
	assert_non_null(c);
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_string_equal(cr.access_key_id, "ASIAKEYS3KR1T1");
	/* advisory window: refreshed */
	at(f, 3600 - 14 * 60);
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_string_equal(cr.access_key_id, "ASIAKEYS3KR1T2");
	assert_int_equal(cr.expires_s, T0 + 3600 - 14 * 60 + 3600);
	/* the metadata service breaks */
	f->fk.fail_all = 1;
	n = fk_count(&f->fk);
	at(f, 2 * 3600 - 14 * 60 - 12 * 60);
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_string_equal(cr.access_key_id, "ASIAKEYS3KR1T2");
	assert_true(fk_count(&f->fk) > n); /* it did try */
	assert_true(f->warns >= 1);
	assert_non_null(strstr(f->log, "refresh failed"));
	at(f, 2 * 3600 - 14 * 60 - 1);
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_string_equal(cr.access_key_id, "ASIAKEYS3KR1T2");
	/* expired */
	at(f, 2 * 3600 - 14 * 60);
	assert_int_equal(aws_credchain_get(c, &cr, &e), -1);
	assert_non_null(strstr(e.msg, "imds"));
	assert_string_equal(cr.access_key_id, "");
	/* the service comes back */
	f->fk.fail_all = 0;
	assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
	assert_string_equal(cr.access_key_id, "ASIAKEYS3KR1T3");
	aws_credchain_free(c);
	fx_free(f);
}

static void test_bad_answers(void **state)
{
	struct fx *f = fx_new();
	struct aws_credchain *c;
	struct aws_credentials cr;
	struct errbuf e = { "" };
	char tokfile[512];

	(void)state;
	fx_fake(f, sts_handler);
	/* the STS answer is not for this call */
	fx_write(f, "token", "WEBIDTOKS3KR1T", tokfile, sizeof(tokfile));
	fx_setenv(f, "AWS_WEB_IDENTITY_TOKEN_FILE", tokfile);
	fx_setenv(f, "AWS_ROLE_ARN", "not-an-arn");
	fx_setenv(f, "AWS_ENDPOINT_URL_STS", f->fk.url);
	assert_null(chain(f, &e));
	assert_non_null(strstr(e.msg, "is not an ARN"));
	fx_setenv(f, "AWS_ROLE_ARN", "arn:aws:iam::1:role/r");
	fx_setenv(f, "AWS_ROLE_SESSION_NAME", "has space");
	assert_null(chain(f, &e));
	assert_non_null(strstr(e.msg, "role session name"));
	fx_setenv(f, "AWS_ROLE_SESSION_NAME", "");
	fx_setenv(f, "AWS_ENDPOINT_URL_STS", "http://127.0.0.1/?x=1");
	assert_null(chain(f, &e));
	assert_non_null(strstr(e.msg, "AWS_ENDPOINT_URL_STS"));
	/* the STS is down: retried, then an error */
	fx_setenv(f, "AWS_ENDPOINT_URL_STS", f->fk.url);
	f->fk.fail_all = 1;
	c = chain(f, &e);
	assert_non_null(c);
	assert_int_equal(aws_credchain_get(c, &cr, &e), -1);
	assert_non_null(strstr(e.msg, "HTTP 503"));
	assert_true(fk_count(&f->fk) >= 1);
	aws_credchain_free(c);
	fx_free(f);
}

/* ---- region ---- */

static void test_region(void **state)
{
	struct fx *f = fx_new();
	struct errbuf e = { "" };
	char region[64];
	const char *from = NULL;

	(void)state;
	fx_write(f, ".aws/config", "[default]\nregion = eu-west-3\n", NULL, 0);
	fx_setenv(f, "AWS_DEFAULT_REGION", "us-west-1");
	fx_setenv(f, "AWS_REGION", "us-east-2");
	assert_int_equal(aws_region_resolve(&f->o, region, sizeof(region), &from, &e), 0);
	assert_string_equal(region, "us-east-2");
	assert_string_equal(from, "AWS_REGION");
	f->o.region = "ca-central-1";
	assert_int_equal(aws_region_resolve(&f->o, region, sizeof(region), &from, &e), 0);
	assert_string_equal(region, "ca-central-1");
	f->o.region = NULL;
	fx_setenv(f, "AWS_REGION", "");
	assert_int_equal(aws_region_resolve(&f->o, region, sizeof(region), &from, &e), 0);
	assert_string_equal(region, "us-west-1");
	assert_string_equal(from, "AWS_DEFAULT_REGION");
	fx_setenv(f, "AWS_DEFAULT_REGION", "");
	assert_int_equal(aws_region_resolve(&f->o, region, sizeof(region), &from, &e), 0);
	assert_string_equal(region, "eu-west-3");
	/* a bad value is refused, naming where */
	fx_setenv(f, "AWS_REGION", "us-east-1; rm");
	assert_int_equal(aws_region_resolve(&f->o, region, sizeof(region), &from, &e), -1);
	assert_non_null(strstr(e.msg, "AWS_REGION"));
	fx_setenv(f, "AWS_REGION", "");
	/* from the metadata service: placement/region, with a token */
	fx_write(f, ".aws/config", "", NULL, 0);
	fx_fake(f, imds_handler);
	fx_setenv(f, "AWS_EC2_METADATA_SERVICE_ENDPOINT", f->fk.url);
	assert_int_equal(aws_region_resolve(&f->o, region, sizeof(region), &from, &e), 0);
	assert_string_equal(region, "eu-central-1");
	assert_non_null(strstr(from, "placement/region"));
	/* none anywhere: a clear error */
	fx_setenv(f, "AWS_EC2_METADATA_DISABLED", "true");
	assert_int_equal(aws_region_resolve(&f->o, region, sizeof(region), &from, &e), -1);
	assert_non_null(strstr(e.msg, "no AWS region: set provider.aws.region or AWS_REGION"));
	fx_free(f);
}

static void test_region_from_availability_zone(void **state)
{
	struct fx *f = fx_new();
	struct errbuf e = { "" };
	char region[64];
	const char *from = NULL;

	(void)state;
	fx_fake(f, imds_noregion_handler);
	f->o.imds_base_url = f->fk.url;
	assert_int_equal(aws_region_resolve(&f->o, region, sizeof(region), &from, &e), 0);
	assert_string_equal(region, "ap-southeast-2");
	assert_non_null(strstr(from, "availability-zone"));
	fx_free(f);
}

static void test_endpoints_with_profile(void **state)
{
	struct fx *f = fx_new();
	struct aws_resolved_endpoints ep;
	struct aws_endpoint_overrides ov = { { NULL, NULL, NULL } };
	struct errbuf e = { "" };

	(void)state;
	fx_write(f, ".aws/config", config_file, NULL, 0);
	fx_setenv(f, "AWS_PROFILE", "cfgonly");
	ov.url[AWS_SERVICE_STS] = "http://127.0.0.1:7000/";
	f->o.endpoints = &ov;
	assert_int_equal(aws_endpoints_resolve(&f->o, "us-east-1", &ep, &e), 0);
	assert_string_equal(ep.url[AWS_SERVICE_EC2], "http://127.0.0.1:4566");
	assert_string_equal(ep.url[AWS_SERVICE_AUTOSCALING], "http://127.0.0.1:4567");
	assert_string_equal(ep.url[AWS_SERVICE_STS], "http://127.0.0.1:7000");
	assert_string_equal(ep.from[AWS_SERVICE_STS], "provider.aws.endpoints.sts");
	assert_non_null(strstr(f->log, "aws: ec2 endpoint http://127.0.0.1:4566"));
	/* the default profile has no endpoints: regional defaults */
	fx_setenv(f, "AWS_PROFILE", "");
	f->o.endpoints = NULL;
	assert_int_equal(aws_endpoints_resolve(&f->o, "cn-north-1", &ep, &e), 0);
	assert_string_equal(ep.url[AWS_SERVICE_AUTOSCALING], "https://autoscaling.cn-north-1.amazonaws.com.cn");
	assert_string_equal(ep.from[AWS_SERVICE_EC2], "default");
	/* a bad override names the service */
	fx_setenv(f, "AWS_ENDPOINT_URL", "http://127.0.0.1/?a=b");
	assert_int_equal(aws_endpoints_resolve(&f->o, "us-east-1", &ep, &e), -1);
	assert_non_null(strstr(e.msg, "the ec2 endpoint: AWS_ENDPOINT_URL"));
	fx_free(f);
}

/* ---- the same source as botocore ---- */

/* Prints botocore's choice for the environment it runs in: the method and
 * the access key (web identity is deferred: no STS call, no key). */
static const char botocore_script[] =
	"import sys, botocore.session\n"
	"c = botocore.session.Session().get_credentials()\n"
	"if c is None:\n"
	"    print('none -')\n"
	"elif c.method == 'assume-role-with-web-identity':\n"
	"    print(c.method, '-')\n"
	"else:\n"
	"    print(c.method, c.get_frozen_credentials().access_key)\n";

/* Runs /usr/bin/python3 with botocore in exactly the fixture's environment
 * (plus HOME); its one line of output into 'out'. Fails the test when
 * python3 or botocore is missing. */
static void run_botocore(struct fx *f, char *out, size_t len)
{
	char *envp[ENV_MAX + 2], home[320];
	char *argv[] = { "/usr/bin/python3", "-c", (char *)botocore_script, NULL };
	posix_spawn_file_actions_t fa;
	int fds[2], i, n = 0, status;
	pid_t pid;
	ssize_t got;
	size_t used = 0;

	snprintf(home, sizeof(home), "HOME=%s", f->dir);
	envp[n++] = home;
	for (i = 0; i < f->nenv; i++) {
		if (!f->values[i][0])
			continue;
		size_t sz = strlen(f->names[i]) + strlen(f->values[i]) + 2;

		envp[n] = malloc(sz);
		assert_non_null(envp[n]);
		snprintf(envp[n], sz, "%s=%s", f->names[i], f->values[i]);
		n++;
	}
	envp[n] = NULL;
	assert_int_equal(pipe(fds), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, envp) != 0)
		fail_msg("cannot run /usr/bin/python3 (install python3-botocore)");
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	while (used + 1 < len && (got = read(fds[0], out + used, len - 1 - used)) > 0)
		used += (size_t)got;
	out[used] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	for (i = 1; i < n; i++)
		free(envp[i]);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("botocore failed (is python3-botocore installed?): %s", out);
	out[strcspn(out, "\n")] = '\0';
}

static const char *ours_as_botocore(const char *source)
{
	static const char *const map[][2] = {
		{ "environment", "env" },
		{ "shared-credentials-file", "shared-credentials-file" },
		{ "shared-config-file", "config-file" },
		{ "web-identity", "assume-role-with-web-identity" },
		{ "container", "container-role" },
		{ "imds", "iam-role" },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(map[i][0], source) == 0)
			return map[i][1];
	return "?";
}

/* Builds our chain and botocore's in the same environment and compares
 * the source chosen and, for static keys, the key. */
static void same_as_botocore(struct fx *f, const char *want_method)
{
	struct aws_credchain *c;
	struct aws_credentials cr;
	struct errbuf e = { "" };
	char bc[512], ours[512];

	run_botocore(f, bc, sizeof(bc));
	c = chain(f, &e);
	if (!c) {
		snprintf(ours, sizeof(ours), "none -");
	} else {
		const char *m = ours_as_botocore(aws_credchain_source(c));

		if (strcmp(m, "assume-role-with-web-identity") == 0) {
			snprintf(ours, sizeof(ours), "%s -", m);
		} else {
			assert_int_equal(aws_credchain_get(c, &cr, &e), 0);
			snprintf(ours, sizeof(ours), "%s %s", m, cr.access_key_id);
		}
		aws_credchain_free(c);
	}
	/* dynamic sources hand each caller a new serial: compare without it */
	if (strncmp(ours, "iam-role ", 9) == 0 || strncmp(ours, "container-role ", 15) == 0) {
		ours[strcspn(ours, "0123456789")] = '\0';
		bc[strcspn(bc, "0123456789")] = '\0';
	}
	if (strcmp(ours, bc) != 0)
		fail_msg("luascale chose \"%s\", botocore \"%s\"", ours, bc);
	if (strncmp(bc, want_method, strlen(want_method)) != 0)
		fail_msg("expected %s, both chose \"%s\"", want_method, bc);
}

static void test_same_source_as_botocore(void **state)
{
	struct fx *f = fx_new();
	char uri[256], tokfile[512];

	(void)state;
	fx_fake(f, imds_handler);
	fx_setenv(f, "AWS_EC2_METADATA_SERVICE_ENDPOINT", f->fk.url);
	/* nothing but the instance: IMDSv2 */
	same_as_botocore(f, "iam-role");
	/* IMDSv2 refused: both fall back to IMDSv1 */
	f->fk.put_status = 403;
	same_as_botocore(f, "iam-role");
	f->fk.put_status = 0;
	/* the shared files: credentials file, then config file, by profile */
	fx_write(f, ".aws/credentials", cred_file, NULL, 0);
	fx_write(f, ".aws/config", config_file, NULL, 0);
	same_as_botocore(f, "shared-credentials-file");
	fx_setenv(f, "AWS_PROFILE", "dev");
	same_as_botocore(f, "shared-credentials-file AKIDDEVS3KR1T");
	fx_setenv(f, "AWS_PROFILE", "cfgonly");
	same_as_botocore(f, "config-file AKIDCFGS3KR1T");
	/* the environment beats them */
	fx_setenv(f, "AWS_ACCESS_KEY_ID", "AKIDENVS3KR1T");
	fx_setenv(f, "AWS_SECRET_ACCESS_KEY", "ENVSKS3KR1T");
	same_as_botocore(f, "env AKIDENVS3KR1T");
	fx_setenv(f, "AWS_ACCESS_KEY_ID", "");
	fx_setenv(f, "AWS_SECRET_ACCESS_KEY", "");
	/* without keys in the profile: web identity, then container */
	fx_setenv(f, "AWS_PROFILE", "");
	fx_write(f, ".aws/credentials", "", NULL, 0);
	fx_write(f, ".aws/config", "[default]\nregion = us-east-1\n", NULL, 0);
	fx_write(f, "token", "WEBIDTOKS3KR1T", tokfile, sizeof(tokfile));
	fx_setenv(f, "AWS_WEB_IDENTITY_TOKEN_FILE", tokfile);
	fx_setenv(f, "AWS_ROLE_ARN", "arn:aws:iam::111122223333:role/luascale");
	same_as_botocore(f, "assume-role-with-web-identity");
	fx_setenv(f, "AWS_WEB_IDENTITY_TOKEN_FILE", "");
	fx_stop_and_serve(f, container_handler);
	snprintf(uri, sizeof(uri), "%s/creds", f->fk.url);
	fx_setenv(f, "AWS_CONTAINER_CREDENTIALS_FULL_URI", uri);
	fx_setenv(f, "AWS_CONTAINER_AUTHORIZATION_TOKEN", "ECSTOKS3KR1T");
	snprintf(f->fk.expect_auth, sizeof(f->fk.expect_auth), "ECSTOKS3KR1T");
	same_as_botocore(f, "container-role ASIAKEYS");
	/* nothing at all */
	fx_setenv(f, "AWS_CONTAINER_CREDENTIALS_FULL_URI", "");
	fx_setenv(f, "AWS_EC2_METADATA_DISABLED", "true");
	same_as_botocore(f, "none");
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_env_half_set_is_error),
		cmocka_unit_test(test_env_expiration),
		cmocka_unit_test(test_shared_files),
		cmocka_unit_test(test_shared_file_locations_and_errors),
		cmocka_unit_test(test_web_identity_token_rotation),
		cmocka_unit_test(test_web_identity_refused_does_not_fall_through),
		cmocka_unit_test(test_web_identity_from_profile),
		cmocka_unit_test(test_container_full_uri_token_file),
		cmocka_unit_test(test_container_relative_uri),
		cmocka_unit_test(test_container_hosts),
		cmocka_unit_test(test_imds_v2),
		cmocka_unit_test(test_imds_v1_fallback_403),
		cmocka_unit_test(test_imds_v1_fallback_405),
		cmocka_unit_test(test_imds_v1_disabled_by_variable),
		cmocka_unit_test(test_imds_400_is_error),
		cmocka_unit_test(test_imds_put_timeout_hop_limit),
		cmocka_unit_test(test_imds_unreachable_and_disabled),
		cmocka_unit_test(test_imds_no_role),
		cmocka_unit_test(test_refresh_failure_keeps_old_until_expiry),
		cmocka_unit_test(test_bad_answers),
		cmocka_unit_test(test_region),
		cmocka_unit_test(test_region_from_availability_zone),
		cmocka_unit_test(test_endpoints_with_profile),
		cmocka_unit_test(test_same_source_as_botocore),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
