/*
 * client: requests and watch streams to a Kubernetes API server on libcurl,
 * with the credentials a kubeconfig or the in-cluster environment names
 * (bearer token, rotating token file, client certificate, exec plugin).
 * One easy handle per call on the shared connection cache of
 * runtime/httpclient, which owns the libcurl mechanics. Knows no resource
 * types.
 */
#include "kube/client.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"
#include "model.h"
#include "runtime/clock.h"
#include "runtime/fence.h"
#include "runtime/httpclient.h"
#include "runtime/ratelimit.h"
#include "textparse.h"

extern char **environ;

#define DEFAULT_CONNECT_MS 10000L
#define DEFAULT_REQUEST_MS 60000L
#define DEFAULT_REREAD_S 60
#define DEFAULT_EXEC_MS 60000L
#define DEFAULT_MAX_BODY ((size_t)256 << 20)
#define DEFAULT_MAX_OBJECT ((size_t)64 << 20)
#define EXEC_MAX_OUTPUT ((size_t)1 << 20)
#define TOKEN_MAX_SIZE ((size_t)1 << 20)
#define EXEC_STDERR_KEPT ((size_t)4 << 10) /* of an exec plugin's stderr, logged */
#define CANCEL_POLL_MS 100L                /* a rate-limit wait looks at the cancel flag */

/* What the exec plugin last handed out. */
struct exec_cred {
	bool valid;
	char *token;
	char *cert, *key;      /* PEM */
	size_t cert_len, key_len;
	int64_t expiry;        /* unix seconds; 0: until a 401 */
};

struct kube_client {
	/* settings (immutable after _new) */
	char *server;
	char *server_log;         /* the server URL without user information */
	bool insecure;
	char *ca_file;
	unsigned char *ca_data;
	size_t ca_len;
	char *cert_file, *key_file;
	unsigned char *cert_data, *key_data;
	size_t cert_len, key_len;
	char *static_token;
	char *token_file;
	struct kube_exec *exec;   /* deep copy, or NULL */
	char *exec_info;          /* KUBERNETES_EXEC_INFO */
	struct clock *clock;
	const struct logger *log;
	long connect_ms, request_ms, exec_ms;
	int64_t reread_ns;
	size_t max_body;
	char *user_agent;
	bool verbose;
	void (*on_response)(void *ctx, const char *verb, long status);
	void *on_response_ctx;

	/* credentials that change (guarded by auth_mu) */
	pthread_mutex_t auth_mu;
	char *file_token;         /* last token read from token_file */
	int64_t file_read_ns;     /* when */
	bool file_read_once;
	struct exec_cred xc;

	/* shutdown: a kube_cancel level; waits on cancel_cv see it at once */
	atomic_int cancel;
	pthread_mutex_t cancel_mu;
	pthread_cond_t cancel_cv;

	/* writes (every method but GET): their own token bucket, or NULL */
	struct ratelimit *writes;
	atomic_int writes_waiting;
	struct fence *fence;      /* writes go out only while it holds; NULL none */
	bool read_only;           /* no write goes out (a dry run) */

	/* connections, DNS and TLS sessions shared by the calls */
	struct httpclient_share *share;
};

/* A credential copied out for one request. */
struct cred {
	char *token;
	char *cert, *key;
	size_t cert_len, key_len;
};

/* ---- small helpers ---- */

static void wipe(void *p, size_t n)
{
	volatile unsigned char *v = p;

	while (p && n--)
		*v++ = 0;
}

static void free_secret(char *s, size_t n)
{
	if (s) {
		wipe(s, n);
		free(s);
	}
}

static void free_secret_str(char *s)
{
	if (s)
		free_secret(s, strlen(s));
}

static char *xstrdup(const char *s)
{
	size_t n;
	char *d;

	if (!s)
		return NULL;
	n = strlen(s);
	d = malloc(n + 1);
	if (d)
		memcpy(d, s, n + 1);
	return d;
}

static void *xmemdup(const void *p, size_t n)
{
	char *d;

	if (!p)
		return NULL;
	d = malloc(n + 1);
	if (d) {
		memcpy(d, p, n);
		d[n] = '\0';
	}
	return d;
}

static void cred_free(struct cred *c)
{
	free_secret_str(c->token);
	free_secret(c->cert, c->cert_len);
	free_secret(c->key, c->key_len);
	memset(c, 0, sizeof(*c));
}

static void exec_cred_clear(struct exec_cred *x)
{
	free_secret_str(x->token);
	free_secret(x->cert, x->cert_len);
	free_secret(x->key, x->key_len);
	memset(x, 0, sizeof(*x));
}

static int64_t wall_now(const struct kube_client *c)
{
	return clock_wall(c->clock);
}

#define LOGF(c, level, ...) \
	do { \
		if ((c)->log) \
			log_at((c)->log, (level), wall_now(c), __VA_ARGS__); \
	} while (0)

/* Replaces every occurrence of 'secret' in 'msg' by "<redacted>". */
static void scrub(char *msg, size_t cap, const char *secret)
{
	static const char red[] = "<redacted>";
	size_t sl, rl = sizeof(red) - 1;
	char *p;

	if (!secret || (sl = strlen(secret)) < 4)
		return;
	while ((p = strstr(msg, secret)) != NULL) {
		size_t tail = strlen(p + sl);

		if ((size_t)(p - msg) + rl + tail >= cap)
			tail = cap - 1 - (size_t)(p - msg) - rl;
		memmove(p + rl, p + sl, tail);
		memcpy(p, red, rl);
		p[rl + tail] = '\0';
	}
}

/* ---- time ---- */

int kube_parse_time(const char *s, int64_t *out)
{
	int Y, M, D, h, m, sec, oh = 0, om = 0;
	int64_t t;
	const char *p;

	if (!s || strlen(s) < 20)
		return -1;
	if (textparse_digits(s, 4, &Y) || s[4] != '-' || textparse_digits(s + 5, 2, &M) || s[7] != '-' ||
	    textparse_digits(s + 8, 2, &D) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
	    textparse_digits(s + 11, 2, &h) || s[13] != ':' || textparse_digits(s + 14, 2, &m) || s[16] != ':' ||
	    textparse_digits(s + 17, 2, &sec))
		return -1;
	if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
		return -1;
	p = s + 19;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -1;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p == '-' ? -1 : 1;

		if (textparse_digits(p + 1, 2, &oh) || p[3] != ':' || textparse_digits(p + 4, 2, &om) || oh > 23 ||
		    om > 59)
			return -1;
		oh *= sign;
		om *= sign;
		p += 6;
	} else {
		return -1;
	}
	if (*p)
		return -1;
	t = textparse_days_from_civil(Y, M, D) * 86400 + h * 3600 + m * 60 + sec;
	*out = t - (oh * 3600 + om * 60);
	return 0;
}

/* ---- escaping ---- */

int kube_escape(struct buf *b, const char *s)
{
	return buf_percent_encode(b, s);
}

/* ---- the stream splitter ---- */

struct kube_splitter {
	kube_stream_fn fn;
	void *ctx;
	size_t max;
	struct buf cur;     /* the value being assembled */
	int depth;
	bool in_str, esc;
	uint64_t offset;    /* bytes consumed, for messages */
};

struct kube_splitter *kube_splitter_new(size_t max_object, kube_stream_fn fn, void *ctx)
{
	struct kube_splitter *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->fn = fn;
	s->ctx = ctx;
	s->max = max_object ? max_object : DEFAULT_MAX_OBJECT;
	return s;
}

void kube_splitter_free(struct kube_splitter *s)
{
	if (!s)
		return;
	buf_free(&s->cur);
	free(s);
}

size_t kube_splitter_pending(const struct kube_splitter *s)
{
	return s->cur.len;
}

int kube_splitter_feed(struct kube_splitter *s, const char *data, size_t len,
		       struct errbuf *err)
{
	size_t i = 0, start = 0;

	while (i < len) {
		char ch = data[i];

		if (s->depth == 0) {
			/* between values: whitespace, then '{' or '[' */
			if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t') {
				i++;
				continue;
			}
			if (ch != '{' && ch != '[')
				return errbuf_set(err,
						  "watch stream: expected a JSON object at byte %llu, found 0x%02x",
						  (unsigned long long)(s->offset + i), (unsigned char)ch);
			start = i;
			s->depth = 1;
			s->in_str = s->esc = false;
			i++;
		} else if (s->in_str) {
			if (s->esc)
				s->esc = false;
			else if (ch == '\\')
				s->esc = true;
			else if (ch == '"')
				s->in_str = false;
			i++;
		} else {
			if (ch == '"')
				s->in_str = true;
			else if (ch == '{' || ch == '[')
				s->depth++;
			else if (ch == '}' || ch == ']')
				s->depth--;
			i++;
		}
		if (s->depth == 0) {
			/* a value ended at i: hand it over */
			int r;

			if (s->cur.len + (i - start) > s->max)
				return errbuf_set(err, "watch stream: an object is larger than %zu bytes",
						  s->max);
			if (buf_append(&s->cur, data + start, i - start))
				return errbuf_set(err, "watch stream: out of memory");
			r = s->fn(s->ctx, s->cur.data, s->cur.len);
			s->cur.len = 0;
			s->cur.data[0] = '\0';
			if (r) {
				s->offset += i;
				return 1;
			}
			start = i;
		}
	}
	if (s->depth > 0 && start < len) {
		if (s->cur.len + (len - start) > s->max)
			return errbuf_set(err, "watch stream: an object is larger than %zu bytes",
					  s->max);
		if (buf_append(&s->cur, data + start, len - start))
			return errbuf_set(err, "watch stream: out of memory");
	}
	s->offset += len;
	return 0;
}

/* ---- construction ---- */

static struct kube_exec *exec_copy(const struct kube_exec *x)
{
	struct kube_exec *y = calloc(1, sizeof(*y));
	size_t i;

	if (!y)
		return NULL;
	y->command = xstrdup(x->command);
	y->api_version = xstrdup(x->api_version);
	y->install_hint = xstrdup(x->install_hint);
	y->interactive = x->interactive;
	y->provide_cluster_info = x->provide_cluster_info;
	y->args = x->n_args ? calloc(x->n_args, sizeof(char *)) : NULL;
	y->env_names = x->n_env ? calloc(x->n_env, sizeof(char *)) : NULL;
	y->env_values = x->n_env ? calloc(x->n_env, sizeof(char *)) : NULL;
	if ((x->n_args && !y->args) || (x->n_env && (!y->env_names || !y->env_values)))
		goto fail;
	for (i = 0; i < x->n_args; i++, y->n_args++)
		if (!(y->args[i] = xstrdup(x->args[i])))
			goto fail;
	for (i = 0; i < x->n_env; i++, y->n_env++) {
		y->env_names[i] = xstrdup(x->env_names[i]);
		y->env_values[i] = xstrdup(x->env_values[i]);
		if (!y->env_names[i] || !y->env_values[i]) {
			y->n_env++;
			goto fail;
		}
	}
	if (!y->command || !y->api_version)
		goto fail;
	return y;
fail:
	for (i = 0; i < y->n_args; i++)
		free(y->args[i]);
	for (i = 0; i < y->n_env; i++) {
		free(y->env_names[i]);
		free_secret_str(y->env_values[i]);
	}
	free(y->args);
	free(y->env_names);
	free(y->env_values);
	free(y->command);
	free(y->api_version);
	free(y->install_hint);
	free(y);
	return NULL;
}

static void exec_free(struct kube_exec *y)
{
	size_t i;

	if (!y)
		return;
	for (i = 0; i < y->n_args; i++)
		free(y->args[i]);
	for (i = 0; i < y->n_env; i++) {
		free(y->env_names[i]);
		free_secret_str(y->env_values[i]);
	}
	free(y->args);
	free(y->env_names);
	free(y->env_values);
	free(y->command);
	free(y->api_version);
	free(y->install_hint);
	free(y);
}

static void b64_encode(struct buf *b, const unsigned char *p, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		char o[4] = {tab[p[i] >> 2], tab[(p[i] & 3) << 4 | p[i + 1] >> 4],
			     tab[(p[i + 1] & 15) << 2 | p[i + 2] >> 6], tab[p[i + 2] & 63]};

		buf_append(b, o, 4);
	}
	if (n - i == 1) {
		char o[4] = {tab[p[i] >> 2], tab[(p[i] & 3) << 4], '=', '='};

		buf_append(b, o, 4);
	} else if (n - i == 2) {
		char o[4] = {tab[p[i] >> 2], tab[(p[i] & 3) << 4 | p[i + 1] >> 4],
			     tab[(p[i + 1] & 15) << 2], '='};

		buf_append(b, o, 4);
	}
}

/*
 * Reads the regular file at 'path' (a FIFO would block for a writer), at
 * most 'max' bytes; what was read is wiped on failure (tokens, keys).
 * Returns the contents, or NULL with "cannot read PATH: why" or "PATH:
 * larger than N bytes" in 'err'.
 */
static char *read_file_max(const char *path, size_t max, size_t *len, struct errbuf *err)
{
	struct buf b = BUF_INIT;
	char chunk[4096];
	FILE *f = buf_fopen_regular(path, err);
	size_t n;
	bool bad = false;

	if (!f)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (b.len + n > max) {
			errbuf_set(err, "%s: larger than %zu bytes", path, max);
			bad = true;
			break;
		}
		buf_append(&b, chunk, n);
	}
	if (!bad && ferror(f)) {
		errbuf_set(err, "cannot read %s: %s", path, strerror(errno ? errno : EIO));
		bad = true;
	}
	if (!bad && b.oom) {
		errbuf_set(err, "cannot read %s: out of memory", path);
		bad = true;
	}
	fclose(f);
	wipe(chunk, sizeof(chunk));
	if (bad) {
		wipe(b.data, b.len);
		buf_free(&b);
		return NULL;
	}
	*len = b.len;
	return buf_take(&b);
}

/* A TLS file that libcurl opens by path: refused now, with its name, when it
 * is not a regular file (a FIFO would block every connection for a writer). */
static int check_tls_file(const char *path, const char *what, struct errbuf *err)
{
	struct errbuf e;
	FILE *f;

	if (!path)
		return 0;
	f = buf_fopen_regular(path, &e);
	if (!f)
		return errbuf_set(err, "%s: %s", what, e.msg);
	fclose(f);
	return 0;
}

/* The KUBERNETES_EXEC_INFO value: an ExecCredential with its spec. */
static char *make_exec_info(const struct kube_config *cfg)
{
	const struct kube_exec *x = cfg->exec;
	struct buf b = BUF_INIT;

	buf_puts(&b, "{\"apiVersion\":");
	buf_json_string(&b, x->api_version);
	buf_puts(&b, ",\"kind\":\"ExecCredential\",\"spec\":{");
	if (x->provide_cluster_info) {
		buf_puts(&b, "\"cluster\":{\"server\":");
		buf_json_string(&b, cfg->server);
		if (cfg->tls_server_name) {
			buf_puts(&b, ",\"tls-server-name\":");
			buf_json_string(&b, cfg->tls_server_name);
		}
		if (cfg->insecure_skip_tls_verify)
			buf_puts(&b, ",\"insecure-skip-tls-verify\":true");
		if (cfg->ca_data) {
			buf_puts(&b, ",\"certificate-authority-data\":\"");
			b64_encode(&b, cfg->ca_data, cfg->ca_len);
			buf_puts(&b, "\"");
		} else if (cfg->ca_file) {
			size_t n = 0;
			struct errbuf e;
			char *ca = read_file_max(cfg->ca_file, 4u << 20, &n, &e);

			if (ca) {
				buf_puts(&b, ",\"certificate-authority-data\":\"");
				b64_encode(&b, (const unsigned char *)ca, n);
				buf_puts(&b, "\"");
				free(ca);
			}
		}
		buf_puts(&b, "},");
	}
	buf_puts(&b, "\"interactive\":false}}");
	if (b.oom) {
		buf_free(&b);
		return NULL;
	}
	return buf_take(&b);
}

static void wake_waiters(void *ctx);

void kube_client_free(struct kube_client *c)
{
	if (!c)
		return;
	if (c->fence)
		fence_unlisten(c->fence, wake_waiters, c);
	httpclient_share_free(c->share);
	pthread_mutex_destroy(&c->auth_mu);
	pthread_cond_destroy(&c->cancel_cv);
	pthread_mutex_destroy(&c->cancel_mu);
	ratelimit_free(c->writes);
	free(c->server);
	free(c->server_log);
	free(c->ca_file);
	free(c->ca_data);
	free(c->cert_file);
	free(c->key_file);
	free(c->cert_data);
	free_secret((char *)c->key_data, c->key_len);
	free_secret_str(c->static_token);
	free(c->token_file);
	exec_free(c->exec);
	free(c->exec_info);
	free(c->user_agent);
	free_secret_str(c->file_token);
	exec_cred_clear(&c->xc);
	free(c);
}

struct kube_client *kube_client_new(const struct kube_config *cfg,
				    const struct kube_client_opts *opts, struct errbuf *err)
{
	struct kube_client_opts o = {0};
	struct kube_client *c;

	if (opts)
		o = *opts;
	if (!cfg || !cfg->server || !cfg->server[0]) {
		errbuf_set(err, "no API server URL");
		return NULL;
	}
	if (cfg->tls_server_name) {
		errbuf_set(err, "cluster %s: tls-server-name is not supported",
			   cfg->cluster_name ? cfg->cluster_name : "");
		return NULL;
	}
	if (cfg->exec && cfg->exec->interactive == KUBE_EXEC_ALWAYS) {
		errbuf_set(err, "user %s: the exec plugin wants interactiveMode Always, but luascale has no terminal",
			   cfg->user_name ? cfg->user_name : "");
		return NULL;
	}
	if (cfg->token && kube_token_check(cfg->token) >= 0) {
		errbuf_set(err, "user %s: the token contains a control character (byte %td); "
			   "a token is one line of printable text",
			   cfg->user_name ? cfg->user_name : "", kube_token_check(cfg->token) + 1);
		return NULL;
	}
	if (o.write_qps < 0 || (o.write_qps > 0 && (!(o.write_qps >= KUBE_WRITE_QPS_MIN) ||
						     o.write_qps > KUBE_WRITE_QPS_MAX ||
						     o.write_burst < 1))) {
		errbuf_set(err, "write rate limit: qps %g, burst %d: expected qps in [%g, %g] and "
			   "a burst of at least 1", o.write_qps, o.write_burst, KUBE_WRITE_QPS_MIN,
			   KUBE_WRITE_QPS_MAX);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&c->auth_mu, NULL);
	pthread_mutex_init(&c->cancel_mu, NULL);
	{
		pthread_condattr_t attr;

		pthread_condattr_init(&attr);
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		pthread_cond_init(&c->cancel_cv, &attr);
		pthread_condattr_destroy(&attr);
	}
	atomic_init(&c->cancel, KUBE_CANCEL_NONE);
	atomic_init(&c->writes_waiting, 0);
	c->share = httpclient_share_new(err);
	if (!c->share)
		goto fail;
	c->clock = o.clock ? o.clock : clock_real();
	c->log = o.log;
	c->connect_ms = o.connect_timeout_ms > 0 ? o.connect_timeout_ms : DEFAULT_CONNECT_MS;
	c->request_ms = o.request_timeout_ms > 0 ? o.request_timeout_ms : DEFAULT_REQUEST_MS;
	c->exec_ms = o.exec_timeout_ms > 0 ? o.exec_timeout_ms : DEFAULT_EXEC_MS;
	c->reread_ns = (o.token_reread_s > 0 ? o.token_reread_s : DEFAULT_REREAD_S) * CLOCK_NS_PER_S;
	c->max_body = o.max_body ? o.max_body : DEFAULT_MAX_BODY;
	c->verbose = o.verbose;
	c->on_response = o.on_response;
	c->on_response_ctx = o.on_response_ctx;
	c->user_agent = httpclient_user_agent(o.user_agent);
	c->server = xstrdup(cfg->server);
	if (c->server) {
		size_t n = strlen(c->server) + 16;

		c->server_log = malloc(n);
		if (c->server_log)
			kube_url_redact(c->server, c->server_log, n);
	}
	c->fence = o.fence;
	c->read_only = o.read_only;
	if (c->fence && fence_listen(c->fence, wake_waiters, c) < 0) {
		errbuf_set(err, "write fence: too many clients listen to it");
		goto fail;
	}
	if (o.write_qps > 0 && !(c->writes = ratelimit_new(c->clock, o.write_qps, o.write_burst))) {
		errbuf_set(err, "write rate limit: qps %g, burst %d refused", o.write_qps,
			   o.write_burst);
		goto fail;
	}
	if (check_tls_file(cfg->ca_file, "certificate-authority", err) < 0 ||
	    check_tls_file(cfg->cert_file, "client-certificate", err) < 0 ||
	    check_tls_file(cfg->key_file, "client-key", err) < 0)
		goto fail;
	c->insecure = cfg->insecure_skip_tls_verify;
	c->ca_file = xstrdup(cfg->ca_file);
	c->ca_data = xmemdup(cfg->ca_data, cfg->ca_len);
	c->ca_len = cfg->ca_len;
	c->cert_file = xstrdup(cfg->cert_file);
	c->key_file = xstrdup(cfg->key_file);
	c->cert_data = xmemdup(cfg->cert_data, cfg->cert_len);
	c->cert_len = cfg->cert_len;
	c->key_data = xmemdup(cfg->key_data, cfg->key_len);
	c->key_len = cfg->key_len;
	c->static_token = xstrdup(cfg->token);
	c->token_file = xstrdup(cfg->token_file);
	if (cfg->exec) {
		c->exec = exec_copy(cfg->exec);
		c->exec_info = make_exec_info(cfg);
	}
	if (!c->user_agent || !c->server || !c->server_log || (cfg->ca_file && !c->ca_file) ||
	    (cfg->ca_data && !c->ca_data) || (cfg->cert_file && !c->cert_file) ||
	    (cfg->key_file && !c->key_file) || (cfg->cert_data && !c->cert_data) ||
	    (cfg->key_data && !c->key_data) || (cfg->token && !c->static_token) ||
	    (cfg->token_file && !c->token_file) || (cfg->exec && (!c->exec || !c->exec_info))) {
		errbuf_set(err, "out of memory");
		goto fail;
	}
	return c;
fail:
	kube_client_free(c);
	return NULL;
}

const char *kube_client_server(const struct kube_client *c)
{
	return c->server_log;
}

void kube_client_cancel(struct kube_client *c, enum kube_cancel level)
{
	pthread_mutex_lock(&c->cancel_mu);
	if ((int)level > atomic_load(&c->cancel))
		atomic_store(&c->cancel, (int)level);
	pthread_cond_broadcast(&c->cancel_cv);
	pthread_mutex_unlock(&c->cancel_mu);
}

int kube_client_writes_waiting(struct kube_client *c)
{
	return atomic_load(&c->writes_waiting);
}

/* Whether a transfer of this kind must end now. */
static bool cancelled(struct kube_client *c, bool write)
{
	int level = atomic_load(&c->cancel);

	return level >= KUBE_CANCEL_ALL || (level >= KUBE_CANCEL_READS && !write);
}

/* The fence's listener: waits for a write token look at the fence again. */
static void wake_waiters(void *ctx)
{
	struct kube_client *c = ctx;

	pthread_mutex_lock(&c->cancel_mu);
	pthread_cond_broadcast(&c->cancel_cv);
	pthread_mutex_unlock(&c->cancel_mu);
}

/* Whether a write may go out now by the fence: 0, or -1 with a message. */
static int fenced_out(struct kube_client *c, const char *method, const char *path,
		      struct errbuf *err)
{
	char why[160];

	if (c->read_only)
		return errbuf_set(err, "%s %s: not sent: a dry run writes nothing", method, path);
	if (fence_holds(c->fence))
		return 0;
	fence_count_refusal(c->fence);
	fence_why(c->fence, why, sizeof(why));
	return errbuf_set(err, "%s %s: not sent: %s", method, path, why);
}

/*
 * Waits for a token of the write bucket: at most 'max_ns' ahead, cut short
 * by kube_client_cancel(KUBE_CANCEL_ALL) and by the write fence closing or
 * lapsing. A write still waits at KUBE_CANCEL_READS: the writes of the
 * grace period give cordons back. Returns 0, or -1 with a message.
 */
static int take_write_token(struct kube_client *c, const char *method, const char *path,
			    struct errbuf *err)
{
	int64_t at, now;
	int rc = 0;

	if (!c->writes)
		return 0;
	now = clock_now(c->clock);
	at = ratelimit_reserve(c->writes, now + (int64_t)c->request_ms * CLOCK_NS_PER_MS);
	if (at < 0)
		return errbuf_set(err, "%s %s: no token of the Kubernetes write rate limit within "
				  "%ld ms (too many writes queued)", method, path, c->request_ms);
	if (at <= now)
		return 0;
	atomic_fetch_add(&c->writes_waiting, 1);
	pthread_mutex_lock(&c->cancel_mu);
	while (atomic_load(&c->cancel) < KUBE_CANCEL_ALL && fence_holds(c->fence) &&
	       (now = clock_now(c->clock)) < at) {
		/* the bucket's clock may be virtual (tests): look again
		 * every CANCEL_POLL_MS of real time at most, and when the
		 * fence would lapse */
		int64_t real = clock_now(clock_real()), step = at - now;
		int64_t lapse = fence_deadline(c->fence);
		struct timespec ts;

		if (c->fence && lapse - now < step)
			step = lapse - now > 0 ? lapse - now : 0;
		if (step > CANCEL_POLL_MS * CLOCK_NS_PER_MS)
			step = CANCEL_POLL_MS * CLOCK_NS_PER_MS;
		real += step;
		ts.tv_sec = (time_t)(real / CLOCK_NS_PER_S);
		ts.tv_nsec = (long)(real % CLOCK_NS_PER_S);
		pthread_cond_timedwait(&c->cancel_cv, &c->cancel_mu, &ts);
	}
	if (atomic_load(&c->cancel) >= KUBE_CANCEL_ALL)
		rc = errbuf_set(err, "%s %s: not sent: luascale is stopping", method, path);
	pthread_mutex_unlock(&c->cancel_mu);
	if (rc == 0)
		rc = fenced_out(c, method, path, err);
	atomic_fetch_sub(&c->writes_waiting, 1);
	return rc;
}

void kube_response_free(struct kube_response *r)
{
	if (!r)
		return;
	free(r->body);
	memset(r, 0, sizeof(*r));
}

/* ---- credentials ---- */

/* Reads the token file into c->file_token (auth_mu held). */
static int reread_token_file(struct kube_client *c, struct errbuf *err)
{
	size_t len = 0;
	struct errbuf why;
	char *t = read_file_max(c->token_file, TOKEN_MAX_SIZE, &len, &why);

	c->file_read_ns = clock_now(c->clock);
	if (t) {
		while (len > 0 && (t[len - 1] == '\n' || t[len - 1] == '\r' || t[len - 1] == ' ' ||
				   t[len - 1] == '\t'))
			t[--len] = '\0';
		if (len == 0 || kube_token_check(t) >= 0) {
			free_secret(t, len);
			t = NULL;
			errbuf_set(&why, "%s: empty, or not one line of printable text", c->token_file);
		}
	}
	if (!t) {
		/* 'why' names the file */
		if (c->file_token) {
			LOGF(c, LOG_WARN, "token file: %s; keeping the previous token", why.msg);
			return 0;
		}
		return errbuf_set(err, "token file: %s", why.msg);
	}
	if (c->file_token && strcmp(c->file_token, t) != 0)
		LOGF(c, LOG_INFO, "token file %s: the token changed", c->token_file);
	free_secret_str(c->file_token);
	c->file_token = t;
	c->file_read_once = true;
	return 0;
}

/* Logs what an exec plugin wrote to stderr: the first EXEC_STDERR_KEPT
 * bytes, a log line per line of it (long ones cut; log_at escapes what
 * could forge a line or reach the terminal), any credential in it
 * redacted; then how much more there was. */
static void log_plugin_stderr(struct kube_client *c, const char *cmd, const struct buf *e,
			      size_t total, const char *token1, const char *token2)
{
	size_t i = 0;

	while (i < e->len) {
		size_t j = i;
		struct buf b = BUF_INIT;

		while (j < e->len && e->data[j] != '\n')
			j++;
		if (j > i) {
			buf_append(&b, e->data + i, j - i);
			if (!b.oom && b.data) {
				/* scrub() works in place within the capacity it is given */
				scrub(b.data, b.len + 1, token1);
				scrub(b.data, strlen(b.data) + 1, token2);
				LOGF(c, LOG_WARN, "exec plugin %s: stderr: %.700s%s", cmd, b.data,
				     strlen(b.data) > 700 ? " [cut]" : "");
			}
			wipe(b.data, b.len);
			buf_free(&b);
		}
		i = j + 1;
	}
	if (total > e->len)
		LOGF(c, LOG_WARN, "exec plugin %s: stderr: %zu more bytes not shown", cmd,
		     total - e->len);
}

/*
 * Runs the exec plugin and parses its ExecCredential into c->xc
 * (auth_mu held). The plugin's stderr is collected (the first few KiB)
 * and logged, escaped, once the plugin has ended.
 */
static int run_exec(struct kube_client *c, struct errbuf *err)
{
	const struct kube_exec *x = c->exec;
	posix_spawn_file_actions_t fa;
	char **argv = NULL, **envp = NULL;
	size_t n_environ = 0, i, k = 0;
	struct buf out = BUF_INIT, info = BUF_INIT, errout = BUF_INIT;
	size_t err_total = 0;
	int fds[2] = {-1, -1}, efds[2] = {-1, -1}, rc = -1, status = 0, sp;
	pid_t pid = -1;
	struct timespec t0;
	cJSON *doc = NULL;
	const cJSON *st, *v;
	struct exec_cred nx = {0};
	bool spawned_fa = false, killed = false;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (environ && environ[n_environ])
		n_environ++;
	argv = calloc(x->n_args + 2, sizeof(char *));
	envp = calloc(n_environ + x->n_env + 2, sizeof(char *));
	if (!argv || !envp) {
		errbuf_set(err, "out of memory");
		goto out;
	}
	argv[0] = x->command;
	for (i = 0; i < x->n_args; i++)
		argv[i + 1] = x->args[i];
	/* the environment: ours, minus what the plugin's env overrides */
	for (i = 0; i < n_environ; i++) {
		size_t j;
		bool over = strncmp(environ[i], "KUBERNETES_EXEC_INFO=", 21) == 0;

		for (j = 0; j < x->n_env && !over; j++) {
			size_t nl = strlen(x->env_names[j]);

			over = strncmp(environ[i], x->env_names[j], nl) == 0 && environ[i][nl] == '=';
		}
		if (!over)
			envp[k++] = environ[i];
	}
	for (i = 0; i < x->n_env; i++) {
		buf_printf(&info, "%s=%s", x->env_names[i], x->env_values[i]);
		buf_append(&info, "", 1); /* keep the NUL: entries are packed */
	}
	buf_printf(&info, "KUBERNETES_EXEC_INFO=%s", c->exec_info);
	buf_append(&info, "", 1);
	if (info.oom) {
		errbuf_set(err, "out of memory");
		goto out;
	}
	{
		const char *p = info.data, *end = info.data + info.len;

		while (p < end) {
			envp[k++] = (char *)p;
			p += strlen(p) + 1;
		}
	}
	envp[k] = NULL;
	if (pipe2(fds, O_CLOEXEC) != 0 || pipe2(efds, O_CLOEXEC) != 0) {
		errbuf_set(err, "exec plugin %s: pipe: %s", x->command, strerror(errno));
		goto out;
	}
	if (posix_spawn_file_actions_init(&fa) != 0) {
		errbuf_set(err, "out of memory");
		goto out;
	}
	spawned_fa = true;
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_adddup2(&fa, efds[1], 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
	/* the plugin gets stdin, stdout and stderr, not our sockets */
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
#endif
	sp = strchr(x->command, '/') ? posix_spawn(&pid, x->command, &fa, NULL, argv, envp)
				     : posix_spawnp(&pid, x->command, &fa, NULL, argv, envp);
	close(fds[1]);
	fds[1] = -1;
	close(efds[1]);
	efds[1] = -1;
	if (sp != 0) {
		errbuf_set(err, "exec plugin %s: cannot run it: %s%s%s", x->command, strerror(sp),
			   x->install_hint ? "; " : "", x->install_hint ? x->install_hint : "");
		pid = -1;
		goto out;
	}
	for (;;) {
		struct timespec t1;
		long left;
		struct pollfd pfd[2] = {{fds[0], POLLIN, 0}, {efds[0], POLLIN, 0}};
		char chunk[4096];
		ssize_t n;
		int pr;

		clock_gettime(CLOCK_MONOTONIC, &t1);
		left = c->exec_ms - ((t1.tv_sec - t0.tv_sec) * 1000L +
				     (t1.tv_nsec - t0.tv_nsec) / 1000000L);
		if (left <= 0) {
			kill(pid, SIGKILL);
			killed = true;
			break;
		}
		pr = poll(pfd, efds[0] >= 0 ? 2 : 1, (int)(left > 1000 ? 1000 : left));
		if (pr < 0 && errno != EINTR) {
			kill(pid, SIGKILL);
			killed = true;
			break;
		}
		if (pr <= 0)
			continue;
		if (efds[0] >= 0 && pfd[1].revents) {
			/* stderr: keep the first few KiB, count the rest */
			n = read(efds[0], chunk, sizeof(chunk));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				close(efds[0]);
				efds[0] = -1;
			} else {
				if (errout.len < EXEC_STDERR_KEPT)
					buf_append(&errout, chunk, (size_t)n > EXEC_STDERR_KEPT - errout.len ?
						   EXEC_STDERR_KEPT - errout.len : (size_t)n);
				err_total += (size_t)n;
			}
			if (!pfd[0].revents)
				continue;
		}
		if (!pfd[0].revents)
			continue;
		n = read(fds[0], chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (out.len + (size_t)n > EXEC_MAX_OUTPUT) {
			kill(pid, SIGKILL);
			errbuf_set(err, "exec plugin %s: more than %zu bytes of output", x->command,
				   EXEC_MAX_OUTPUT);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			pid = -1;
			goto out;
		}
		buf_append(&out, chunk, (size_t)n);
		wipe(chunk, sizeof(chunk));
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	pid = -1;
	if (killed) {
		errbuf_set(err, "exec plugin %s: no answer within %ld ms", x->command, c->exec_ms);
		goto out;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (WIFEXITED(status))
			errbuf_set(err, "exec plugin %s: exited with status %d%s%s", x->command,
				   WEXITSTATUS(status), x->install_hint ? "; " : "",
				   x->install_hint ? x->install_hint : "");
		else
			errbuf_set(err, "exec plugin %s: killed by signal %d", x->command,
				   WIFSIGNALED(status) ? WTERMSIG(status) : 0);
		goto out;
	}
	if (out.oom) {
		errbuf_set(err, "out of memory");
		goto out;
	}
	doc = cJSON_ParseWithLength(out.data ? out.data : "", out.len);
	if (!doc || !cJSON_IsObject(doc)) {
		errbuf_set(err, "exec plugin %s: output is not an ExecCredential JSON object",
			   x->command);
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(doc, "kind");
	if (!cJSON_IsString(v) || strcmp(v->valuestring, "ExecCredential") != 0) {
		errbuf_set(err, "exec plugin %s: output kind is not ExecCredential", x->command);
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(doc, "apiVersion");
	if (!cJSON_IsString(v) || strcmp(v->valuestring, x->api_version) != 0) {
		errbuf_set(err, "exec plugin %s: output apiVersion is not %s", x->command,
			   x->api_version);
		goto out;
	}
	st = cJSON_GetObjectItemCaseSensitive(doc, "status");
	if (!cJSON_IsObject(st)) {
		errbuf_set(err, "exec plugin %s: output has no status", x->command);
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(st, "token");
	if (v && !cJSON_IsNull(v)) {
		if (!cJSON_IsString(v) || kube_token_check(v->valuestring) >= 0) {
			errbuf_set(err, "exec plugin %s: status.token is not one line of printable "
				   "text (a control character, or not a string)", x->command);
			goto out;
		}
		if (v->valuestring[0] && !(nx.token = xstrdup(v->valuestring))) {
			errbuf_set(err, "out of memory");
			goto out;
		}
	}
	{
		const cJSON *cc = cJSON_GetObjectItemCaseSensitive(st, "clientCertificateData");
		const cJSON *ck = cJSON_GetObjectItemCaseSensitive(st, "clientKeyData");
		bool hc = cJSON_IsString(cc) && cc->valuestring[0];
		bool hk = cJSON_IsString(ck) && ck->valuestring[0];

		if (hc != hk) {
			errbuf_set(err, "exec plugin %s: status has %s without %s", x->command,
				   hc ? "clientCertificateData" : "clientKeyData",
				   hc ? "clientKeyData" : "clientCertificateData");
			goto out;
		}
		if (hc) {
			nx.cert_len = strlen(cc->valuestring);
			nx.key_len = strlen(ck->valuestring);
			nx.cert = xmemdup(cc->valuestring, nx.cert_len);
			nx.key = xmemdup(ck->valuestring, nx.key_len);
			if (!nx.cert || !nx.key) {
				errbuf_set(err, "out of memory");
				goto out;
			}
		}
	}
	if (!nx.token && !nx.cert) {
		errbuf_set(err, "exec plugin %s: status has neither token nor clientCertificateData/clientKeyData",
			   x->command);
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(st, "expirationTimestamp");
	if (v && !cJSON_IsNull(v)) {
		if (!cJSON_IsString(v) || kube_parse_time(v->valuestring, &nx.expiry) < 0) {
			errbuf_set(err, "exec plugin %s: status.expirationTimestamp is not an RFC 3339 time",
				   x->command);
			goto out;
		}
		if (nx.expiry == 0)
			nx.expiry = 1;
	}
	nx.valid = true;
	exec_cred_clear(&c->xc);
	c->xc = nx;
	memset(&nx, 0, sizeof(nx));
	if (c->xc.expiry) {
		char ts[32];

		model_format_time(c->xc.expiry, ts, sizeof(ts));
		LOGF(c, LOG_DEBUG, "exec plugin %s: new credential, expires %s", x->command, ts);
	} else {
		LOGF(c, LOG_DEBUG, "exec plugin %s: new credential without expiry", x->command);
	}
	rc = 0;
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	if (spawned_fa)
		posix_spawn_file_actions_destroy(&fa);
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	if (efds[0] >= 0) {
		/* what the plugin wrote to stderr after its stdout ended */
		struct pollfd pe = {efds[0], POLLIN, 0};
		char chunk[4096];
		ssize_t n;

		while (poll(&pe, 1, 0) > 0 && (n = read(efds[0], chunk, sizeof(chunk))) > 0) {
			if (errout.len < EXEC_STDERR_KEPT)
				buf_append(&errout, chunk, (size_t)n > EXEC_STDERR_KEPT - errout.len ?
					   EXEC_STDERR_KEPT - errout.len : (size_t)n);
			err_total += (size_t)n;
		}
		close(efds[0]);
	}
	if (efds[1] >= 0)
		close(efds[1]);
	if (errout.len && !errout.oom)
		log_plugin_stderr(c, x->command, &errout, err_total, nx.token,
				  rc == 0 ? c->xc.token : NULL);
	wipe(errout.data, errout.len);
	buf_free(&errout);
	if (doc) {
		/* the parsed credential is a secret too */
		v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "status"),
						     "token");
		if (cJSON_IsString(v))
			wipe(v->valuestring, strlen(v->valuestring));
		cJSON_Delete(doc);
	}
	exec_cred_clear(&nx);
	wipe(out.data, out.len);
	buf_free(&out);
	wipe(info.data, info.len);
	buf_free(&info);
	free(argv);
	free(envp);
	return rc;
}

static bool refreshable(const struct kube_client *c)
{
	return c->exec || c->token_file;
}

/*
 * Copies the credential to use now into 'out' (freed with cred_free).
 * 'force' re-reads the token file or re-runs the plugin whatever the cache
 * says (after a 401).
 */
static int cred_get(struct kube_client *c, bool force, struct cred *out, struct errbuf *err)
{
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!refreshable(c)) {
		if (c->static_token && !(out->token = xstrdup(c->static_token)))
			return errbuf_set(err, "out of memory");
		return 0;
	}
	pthread_mutex_lock(&c->auth_mu);
	if (c->exec) {
		bool fresh = c->xc.valid && (c->xc.expiry == 0 || wall_now(c) < c->xc.expiry);

		if (force || !fresh)
			rc = run_exec(c, err);
		if (rc == 0) {
			out->token = xstrdup(c->xc.token);
			out->cert = xmemdup(c->xc.cert, c->xc.cert_len);
			out->key = xmemdup(c->xc.key, c->xc.key_len);
			out->cert_len = c->xc.cert_len;
			out->key_len = c->xc.key_len;
			if ((c->xc.token && !out->token) || (c->xc.cert && (!out->cert || !out->key)))
				rc = errbuf_set(err, "out of memory");
		}
	} else {
		if (force || !c->file_read_once ||
		    clock_now(c->clock) - c->file_read_ns >= c->reread_ns)
			rc = reread_token_file(c, err);
		if (rc == 0 && !(out->token = xstrdup(c->file_token)))
			rc = errbuf_set(err, "out of memory");
	}
	pthread_mutex_unlock(&c->auth_mu);
	if (rc)
		cred_free(out);
	return rc;
}

/* ---- one transfer ---- */

struct xfer {
	struct kube_client *c;
	CURL *h;
	struct httpclient_body body; /* whole body, or an error body of a stream */
	/* streams */
	bool streaming;
	struct kube_splitter *sp;
	const atomic_int *stop;
	void (*on_open)(void *ctx);
	void *open_ctx;
	bool opened;              /* on_open was called */
	bool write;               /* not a GET: KUBE_CANCEL_READS lets it finish */
	bool stopped, cb_stopped, split_failed, fed;
	struct errbuf split_err;
};

static size_t on_write(char *data, size_t size, size_t nmemb, void *ud)
{
	struct xfer *x = ud;
	size_t n = size * nmemb;

	if (x->streaming) {
		long code = 0;

		curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &code);
		if (code >= 200 && code < 300) {
			int r;

			if (!x->opened && x->on_open) {
				x->opened = true;
				x->on_open(x->open_ctx);
			}
			x->fed = true;
			r = kube_splitter_feed(x->sp, data, n, &x->split_err);
			if (r < 0) {
				x->split_failed = true;
				return 0;
			}
			if (r > 0) {
				x->cb_stopped = true;
				return 0;
			}
			return n;
		}
	}
	return httpclient_body_append(&x->body, data, n);
}

static int on_progress(void *ud, curl_off_t dlt, curl_off_t dln, curl_off_t ult, curl_off_t uln)
{
	struct xfer *x = ud;

	(void)dlt;
	(void)dln;
	(void)ult;
	(void)uln;
	if ((x->stop && atomic_load(x->stop)) || cancelled(x->c, x->write)) {
		x->stopped = true;
		return 1;
	}
	if (x->streaming && x->on_open && !x->opened && x->h) {
		long code = 0;

		/* the headers of a quiet watch: connected, though no byte of
		 * body has come yet */
		curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &code);
		if (code >= 200 && code < 300) {
			x->opened = true;
			x->on_open(x->open_ctx);
		}
	}
	return 0;
}

/* Logs curl's verbose output line by line, Authorization headers redacted. */
struct debug_chunk {
	struct kube_client *c;
	const char *dir;          /* "*" curl's text, ">" sent, "<" received */
};

/* Logs one line of curl's verbose output, a credential header's value
 * redacted. */
static void debug_line(void *ud, const char *s, size_t len, bool first)
{
	static const char *const secret_headers[] = {"authorization:", "proxy-authorization:",
						     "cookie:", "set-cookie:", NULL};
	const struct debug_chunk *d = ud;
	int k;

	(void)first;
	for (k = 0; secret_headers[k]; k++) {
		size_t hl = strlen(secret_headers[k]);

		if (len >= hl && strncasecmp(s, secret_headers[k], hl) == 0) {
			LOGF(d->c, LOG_DEBUG, "http %s %.*s <redacted>", d->dir, (int)(hl - 1), s);
			return;
		}
	}
	LOGF(d->c, LOG_DEBUG, "http %s %.*s", d->dir, (int)len, s);
}

static int on_debug(CURL *h, curl_infotype type, char *data, size_t size, void *ud)
{
	struct xfer *x = ud;
	struct debug_chunk d;

	(void)h;
	switch (type) {
	case CURLINFO_TEXT:
		d.dir = "*";
		break;
	case CURLINFO_HEADER_OUT:
		d.dir = ">";
		break;
	case CURLINFO_HEADER_IN:
		d.dir = "<";
		break;
	default:
		return 0; /* bodies and TLS data are not logged */
	}
	d.c = x->c;
	httpclient_debug_lines(data, size, debug_line, &d);
	return 0;
}

/* Fills resp->reason/message from an error body (a Status, or anything). */
static void describe_error(struct kube_response *r, const struct cred *cr)
{
	cJSON *doc = NULL;
	const cJSON *v;

	if (r->body && r->body_len)
		doc = cJSON_ParseWithLength(r->body, r->body_len);
	if (doc && cJSON_IsObject(doc)) {
		v = cJSON_GetObjectItemCaseSensitive(doc, "reason");
		if (cJSON_IsString(v))
			snprintf(r->reason, sizeof(r->reason), "%s", v->valuestring);
		v = cJSON_GetObjectItemCaseSensitive(doc, "message");
		if (cJSON_IsString(v) && v->valuestring[0])
			snprintf(r->message, sizeof(r->message), "%s", v->valuestring);
	}
	cJSON_Delete(doc);
	if (!r->message[0]) {
		char snippet[160];
		size_t i, n = 0;

		for (i = 0; r->body && i < r->body_len && n < sizeof(snippet) - 1; i++) {
			unsigned char ch = (unsigned char)r->body[i];

			snippet[n++] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : ' ';
		}
		snippet[n] = '\0';
		while (n > 0 && snippet[n - 1] == ' ')
			snippet[--n] = '\0';
		if (n)
			snprintf(r->message, sizeof(r->message), "HTTP %ld: %s", r->status, snippet);
		else
			snprintf(r->message, sizeof(r->message), "HTTP %ld", r->status);
	}
	scrub(r->message, sizeof(r->message), cr->token);
	scrub(r->reason, sizeof(r->reason), cr->token);
}

/*
 * Sets up and performs one transfer with credential 'cr'. Returns the
 * CURLcode; the status lands in resp->status.
 */
static CURLcode perform(struct kube_client *c, struct xfer *x, const char *method,
			const char *path, const char *content_type, const char *body,
			size_t body_len, const struct cred *cr, long timeout_ms, long idle_ms,
			struct kube_response *resp, char *curl_err)
{
	struct curl_slist *hdrs = NULL;
	struct buf url = BUF_INIT, auth = BUF_INIT, ct = BUF_INIT;
	struct httpclient_tls tls = {0};
	bool fail = false;
	CURLcode rc = CURLE_OUT_OF_MEMORY;
	CURL *h = NULL;

	x->body.max = c->max_body;
	buf_printf(&url, "%s%s%s", c->server, path[0] == '/' ? "" : "/", path);
	hdrs = httpclient_slist_add(hdrs, "Accept: application/json", &fail);
	hdrs = httpclient_slist_add(hdrs, "Expect:", &fail); /* no 100-continue round trip */
	if (content_type) {
		buf_printf(&ct, "Content-Type: %s", content_type);
		hdrs = httpclient_slist_add(hdrs, ct.data ? ct.data : "", &fail);
	}
	if (cr->token) {
		buf_printf(&auth, "Authorization: Bearer %s", cr->token);
		hdrs = httpclient_slist_add(hdrs, auth.data ? auth.data : "", &fail);
	}
	if (url.oom || ct.oom || auth.oom || fail)
		goto out;
	/* TLS: verified unless the kubeconfig says otherwise; the exec
	 * plugin's client certificate before the kubeconfig's */
	tls.insecure = c->insecure;
	tls.ca_data = c->ca_data;
	tls.ca_len = c->ca_len;
	tls.ca_file = c->ca_file;
	if (cr->cert) {
		tls.cert_data = cr->cert;
		tls.cert_len = cr->cert_len;
		tls.key_data = cr->key;
		tls.key_len = cr->key_len;
	} else if (c->cert_data) {
		tls.cert_data = c->cert_data;
		tls.cert_len = c->cert_len;
		tls.key_data = c->key_data;
		tls.key_len = c->key_len;
	} else {
		tls.cert_file = c->cert_file;
		tls.key_file = c->key_file;
	}
	/* a GET sends no body; a DELETE none unless given; other writes an
	 * empty one */
	if (strcmp(method, "GET") == 0) {
		body = NULL;
	} else if (!body && strcmp(method, "DELETE") != 0) {
		body = "";
		body_len = 0;
	}
	h = httpclient_easy_new(c->share, &(const struct httpclient_easy_opts){
		.url = url.data,
		.method = method,
		.body = body,
		.body_len = body_len,
		.headers = hdrs,
		.user_agent = c->user_agent,
		.connect_ms = c->connect_ms,
		.timeout_ms = timeout_ms,
		.idle_ms = idle_ms,
		.tls = &tls,
		.error_buf = curl_err,
		.on_write = on_write,
		.write_ud = x,
		/* every transfer: the stop flag and kube_client_cancel() end it
		 * within about a second */
		.on_progress = on_progress,
		.progress_ud = x,
		.on_debug = c->verbose && c->log ? on_debug : NULL,
		.debug_ud = x,
	});
	if (!h)
		goto out;
	x->h = h;
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
out:
	if (h)
		curl_easy_cleanup(h);
	x->h = NULL;
	httpclient_slist_free(hdrs); /* the Authorization line holds the token */
	wipe(auth.data, auth.len);
	buf_free(&auth);
	buf_free(&url);
	buf_free(&ct);
	return rc;
}

/* Moves the collected body into resp. */
static void take_body(struct xfer *x, struct kube_response *resp)
{
	free(resp->body);
	resp->body_len = x->body.data.len;
	resp->body = buf_take(&x->body.data);
	if (!resp->body)
		resp->body_len = 0;
}

static int transport_error(struct kube_client *c, const char *method, const char *path,
			   CURLcode rc, const char *curl_err, const struct cred *cr,
			   struct errbuf *err)
{
	char msg[CURL_ERROR_SIZE + 64];

	httpclient_error_text(NULL, rc, curl_err, msg, sizeof(msg));
	scrub(msg, sizeof(msg), cr->token);
	return errbuf_set(err, "%s %s%s: %s", method, c->server_log, path, msg);
}

static int request(struct kube_client *c, const char *method, const char *path,
		   const char *content_type, const char *body, size_t body_len,
		   struct kube_response *resp, struct errbuf *err)
{
	int attempt;

	bool write = strcmp(method, "GET") != 0;

	memset(resp, 0, sizeof(*resp));
	for (attempt = 0; attempt < 2; attempt++) {
		struct xfer x;
		struct cred cr;
		char curl_err[CURL_ERROR_SIZE] = "";
		CURLcode rc;

		memset(&x, 0, sizeof(x));
		x.c = c;
		x.write = write;
		if (cancelled(c, write))
			return errbuf_set(err, "%s %s: not sent: luascale is stopping", method, path);
		if (write && (fenced_out(c, method, path, err) < 0 ||
			      take_write_token(c, method, path, err) < 0))
			return -1;
		if (cred_get(c, attempt > 0, &cr, err))
			return -1;
		/* the last look before the write goes out: a process that was
		 * paused finds its hold lapsed here */
		if (write && fenced_out(c, method, path, err) < 0) {
			cred_free(&cr);
			return -1;
		}
		kube_response_free(resp);
		rc = perform(c, &x, method, path, content_type, body, body_len, &cr,
			     c->request_ms, 0, resp, curl_err);
		if (rc != CURLE_OK) {
			if (x.stopped)
				errbuf_set(err, "%s %s: abandoned: luascale is stopping", method, path);
			else if (x.body.too_big)
				errbuf_set(err, "%s %s: response larger than %zu bytes", method, path,
					   c->max_body);
			else
				transport_error(c, method, path, rc, curl_err, &cr, err);
			buf_free(&x.body.data);
			cred_free(&cr);
			resp->status = 0;
			return -1;
		}
		take_body(&x, resp);
		if (resp->status == 401 && attempt == 0 && refreshable(c)) {
			LOGF(c, LOG_INFO, "%s %s: 401 Unauthorized; refreshing the credential", method,
			     path);
			cred_free(&cr);
			continue;
		}
		if (resp->status >= 400 || resp->status < 200)
			describe_error(resp, &cr);
		cred_free(&cr);
		return 0;
	}
	return 0;
}

int kube_request(struct kube_client *c, const char *method, const char *path,
		 const char *content_type, const char *body, size_t body_len,
		 struct kube_response *resp, struct errbuf *err)
{
	int rc = request(c, method, path, content_type, body, body_len, resp, err);

	if (c->on_response)
		c->on_response(c->on_response_ctx, method, rc < 0 ? 0 : resp->status);
	return rc;
}

static int stream(struct kube_client *c, const char *path, const struct kube_stream_opts *opts,
		  kube_stream_fn fn, void *ctx, enum kube_stream_end *end,
		  struct kube_response *resp, struct errbuf *err)
{
	struct kube_stream_opts o = {0};
	int attempt;

	if (opts)
		o = *opts;
	memset(resp, 0, sizeof(*resp));
	*end = KUBE_STREAM_EOF;
	for (attempt = 0; attempt < 2; attempt++) {
		struct xfer x;
		struct cred cr;
		char curl_err[CURL_ERROR_SIZE] = "";
		CURLcode rc;
		int ret = 0;

		memset(&x, 0, sizeof(x));
		x.c = c;
		x.streaming = true;
		x.stop = o.stop;
		x.on_open = o.on_open;
		x.open_ctx = ctx;
		if ((o.stop && atomic_load(o.stop)) || cancelled(c, false)) {
			*end = KUBE_STREAM_STOPPED;
			return 0;
		}
		x.sp = kube_splitter_new(o.max_object, fn, ctx);
		if (!x.sp)
			return errbuf_set(err, "out of memory");
		if (cred_get(c, attempt > 0, &cr, err)) {
			kube_splitter_free(x.sp);
			return -1;
		}
		kube_response_free(resp);
		rc = perform(c, &x, "GET", path, NULL, NULL, 0, &cr, o.timeout_ms,
			     o.idle_timeout_ms, resp, curl_err);
		if (x.split_failed) {
			errbuf_set(err, "GET %s: %s", path, x.split_err.msg);
			ret = -1;
		} else if (x.cb_stopped) {
			*end = KUBE_STREAM_CALLBACK;
		} else if (x.stopped) {
			*end = KUBE_STREAM_STOPPED;
		} else if (x.body.too_big) {
			errbuf_set(err, "GET %s: error response larger than %zu bytes", path,
				   c->max_body);
			ret = -1;
		} else if (rc == CURLE_OPERATION_TIMEDOUT && resp->status != 0) {
			*end = KUBE_STREAM_TIMEOUT;
		} else if (rc != CURLE_OK) {
			transport_error(c, "GET", path, rc, curl_err, &cr, err);
			ret = -1;
		}
		if (ret == 0 && resp->status != 0 && (resp->status < 200 || resp->status >= 300)) {
			take_body(&x, resp);
			if (resp->status == 401 && attempt == 0 && refreshable(c) && !x.fed &&
			    *end == KUBE_STREAM_EOF) {
				LOGF(c, LOG_INFO, "GET %s: 401 Unauthorized; refreshing the credential",
				     path);
				buf_free(&x.body.data);
				kube_splitter_free(x.sp);
				cred_free(&cr);
				continue;
			}
			describe_error(resp, &cr);
			if (*end == KUBE_STREAM_EOF)
				*end = KUBE_STREAM_STATUS;
		}
		if (ret == 0 && kube_splitter_pending(x.sp) && *end == KUBE_STREAM_EOF)
			LOGF(c, LOG_DEBUG, "GET %s: stream ended inside an object (%zu bytes dropped)",
			     path, kube_splitter_pending(x.sp));
		if (ret < 0)
			resp->status = resp->status ? resp->status : 0;
		buf_free(&x.body.data);
		kube_splitter_free(x.sp);
		cred_free(&cr);
		return ret;
	}
	return 0;
}

const char *kube_stream_verb(const char *path)
{
	const char *q = strchr(path, '?');

	/* the API server's own verbs: a GET with watch=1 or watch=true
	 * watches, any other streamed GET of a collection lists */
	while (q) {
		q++;
		if (strncmp(q, "watch=1", 7) == 0 || strncmp(q, "watch=true", 10) == 0)
			return "WATCH";
		q = strchr(q, '&');
	}
	return "LIST";
}

int kube_stream(struct kube_client *c, const char *path, const struct kube_stream_opts *opts,
		kube_stream_fn fn, void *ctx, enum kube_stream_end *end,
		struct kube_response *resp, struct errbuf *err)
{
	int rc = stream(c, path, opts, fn, ctx, end, resp, err);

	if (c->on_response)
		c->on_response(c->on_response_ctx, kube_stream_verb(path),
			       rc < 0 && resp->status < 300 ? 0 : resp->status);
	return rc;
}
