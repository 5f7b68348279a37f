/*
 * cloudhttp: requests to cloud APIs — one easy handle per call on the
 * shared connection cache of runtime/httpclient (which owns the libcurl
 * mechanics), retries with full jitter and Retry-After on an injected
 * clock, the wire exactly as a signer signed it, URL and header redaction.
 * Knows no cloud's wire format or credentials.
 */
#include "providers/cloudhttp/cloudhttp.h"
#include "providers/cloudhttp/credcache.h"

#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"
#include "runtime/clock.h"
#include "runtime/httpclient.h"
#include "textparse.h"

#define DEFAULT_CONNECT_MS 5000L
#define DEFAULT_REQUEST_MS 60000L
#define DEFAULT_MAX_BODY ((size_t)64 << 20)
#define DEFAULT_ATTEMPTS 3
#define DEFAULT_MAX_BACKOFF_MS 20000
#define WAIT_SLICE_NS (200 * CLOCK_NS_PER_MS) /* a retry wait looks at the cancel flag */
#define MAX_RESPONSE_HEADERS 256
#define URL_LOG_MAX 1024

struct cloudhttp {
	struct clock *clock;
	const struct logger *log;
	long connect_ms, request_ms;
	size_t max_body;
	char *ca_file;
	bool insecure;
	char *user_agent;
	int max_attempts;
	int64_t max_backoff_ms;
	_Atomic uint64_t rng;
	const atomic_bool *cancel;
	bool verbose;

	struct httpclient_share *share; /* connections, DNS, TLS sessions */
};

#define LOGF(h, level, ...) \
	do { \
		if ((h)->log) \
			log_at((h)->log, (level), clock_wall((h)->clock), __VA_ARGS__); \
	} while (0)

static bool cancelled(const struct cloudhttp *h)
{
	return h->cancel && atomic_load(h->cancel);
}

/* ---- headers ---- */

static bool is_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool valid_header(const char *name, const char *value)
{
	const char *p;

	if (!name || !name[0] || !value)
		return false;
	for (p = name; *p; p++)
		if (!is_tchar((unsigned char)*p))
			return false;
	for (p = value; *p; p++)
		if (*p == '\r' || *p == '\n')
			return false;
	return true;
}

static int headers_add_n(struct cloudhttp_headers *h, const char *name, size_t nl,
			 const char *value, size_t vl)
{
	char *n, *v;

	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 8;
		struct cloudhttp_header *nv = realloc(h->v, cap * sizeof(*nv));

		if (!nv)
			return -1;
		h->v = nv;
		h->cap = cap;
	}
	n = malloc(nl + 1);
	v = malloc(vl + 1);
	if (!n || !v) {
		free(n);
		free(v);
		return -1;
	}
	memcpy(n, name, nl);
	n[nl] = '\0';
	memcpy(v, value, vl);
	v[vl] = '\0';
	h->v[h->n].name = n;
	h->v[h->n].value = v;
	h->n++;
	return 0;
}

int cloudhttp_headers_add(struct cloudhttp_headers *h, const char *name, const char *value)
{
	if (!h || !valid_header(name, value))
		return -1;
	return headers_add_n(h, name, strlen(name), value, strlen(value));
}

int cloudhttp_headers_set(struct cloudhttp_headers *h, const char *name, const char *value)
{
	size_t i, j;
	char *v;

	if (!h || !valid_header(name, value))
		return -1;
	for (i = 0; i < h->n; i++)
		if (strcasecmp(h->v[i].name, name) == 0)
			break;
	if (i == h->n)
		return cloudhttp_headers_add(h, name, value);
	v = strdup(value);
	if (!v)
		return -1;
	free(h->v[i].value);
	h->v[i].value = v;
	/* drop the later ones */
	for (j = i + 1; j < h->n;) {
		if (strcasecmp(h->v[j].name, name) == 0) {
			free(h->v[j].name);
			free(h->v[j].value);
			memmove(&h->v[j], &h->v[j + 1], (h->n - j - 1) * sizeof(h->v[0]));
			h->n--;
		} else {
			j++;
		}
	}
	return 0;
}

int cloudhttp_headers_set_bearer(struct cloudhttp_headers *h, const char *token)
{
	size_t n = token ? strlen(token) : 0;
	char *v;
	int rc;

	if (!n || !(v = malloc(n + 8)))
		return -1;
	memcpy(v, "Bearer ", 7);
	memcpy(v + 7, token, n + 1);
	rc = cloudhttp_headers_set(h, "Authorization", v);
	credcache_wipe(v, n + 8);
	free(v);
	return rc;
}

const char *cloudhttp_headers_get(const struct cloudhttp_headers *h, const char *name)
{
	size_t i;

	if (!h || !name)
		return NULL;
	for (i = 0; i < h->n; i++)
		if (strcasecmp(h->v[i].name, name) == 0)
			return h->v[i].value;
	return NULL;
}

void cloudhttp_headers_free(struct cloudhttp_headers *h)
{
	size_t i;

	if (!h)
		return;
	for (i = 0; i < h->n; i++) {
		free(h->v[i].name);
		free(h->v[i].value);
	}
	free(h->v);
	h->v = NULL;
	h->n = h->cap = 0;
}

void cloudhttp_response_free(struct cloudhttp_response *r)
{
	if (!r)
		return;
	free(r->body);
	cloudhttp_headers_free(&r->headers);
	memset(r, 0, sizeof(*r));
	r->retry_after_ms = -1;
}

enum cloudhttp_verdict cloudhttp_classify_default(void *ctx, const struct cloudhttp_response *r)
{
	(void)ctx;
	if (r->status == 429)
		return CLOUDHTTP_RETRY_THROTTLED;
	if (r->status >= 500 && r->status <= 599)
		return CLOUDHTTP_RETRY;
	return CLOUDHTTP_DONE;
}

/* ---- redaction ---- */

static const char *const secret_keys[] = {
	"x-amz-signature", "x-amz-credential", "x-amz-security-token", "signature", "sig",
	"token", "access_token", "refresh_token", "id_token", "client_secret", "assertion",
	"client_assertion", "code", "password", "key", NULL,
};

/* Is the (possibly percent-encoded) query key at k[0..n) a secret one? */
static bool secret_key(const char *k, size_t n)
{
	char d[64];
	size_t i, m = 0;
	int j;

	for (i = 0; i < n; i++) {
		char c = k[i];

		if (m + 1 >= sizeof(d))
			return false; /* longer than any secret key */
		if (c == '%' && i + 2 < n && textparse_hexval(k[i + 1]) >= 0 && textparse_hexval(k[i + 2]) >= 0) {
			c = (char)(textparse_hexval(k[i + 1]) * 16 + textparse_hexval(k[i + 2]));
			i += 2;
		} else if (c == '+') {
			c = ' ';
		}
		d[m++] = c;
	}
	d[m] = '\0';
	for (j = 0; secret_keys[j]; j++)
		if (strcasecmp(d, secret_keys[j]) == 0)
			return true;
	return false;
}

struct out {
	char *p;
	size_t cap, len;
};

static void out_put(struct out *o, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++, o->len++)
		if (o->cap && o->len + 1 < o->cap)
			o->p[o->len] = s[i];
}

/* Copies a query or fragment "k=v&k=v" with secret values redacted. */
static void redact_pairs(struct out *o, const char *s, size_t n)
{
	size_t i = 0;

	while (i <= n) {
		size_t j = i, eq;

		while (j < n && s[j] != '&' && s[j] != ';')
			j++;
		for (eq = i; eq < j && s[eq] != '='; eq++)
			;
		if (eq < j && secret_key(s + i, eq - i)) {
			out_put(o, s + i, eq - i + 1);
			out_put(o, "REDACTED", 8);
		} else {
			out_put(o, s + i, j - i);
		}
		if (j < n)
			out_put(o, s + j, 1);
		i = j + 1;
	}
}

/* Is s[0..n) a URL scheme (a letter, then letters, digits, '+', '-', '.')? */
static bool is_scheme(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 16 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return false;
	for (i = 1; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '+' || s[i] == '-' || s[i] == '.'))
			return false;
	return true;
}

/* Copies one blank-free word [url, end) with its secrets redacted. */
static void redact_word(struct out *o, const char *url, const char *end)
{
	const char *p = url, *auth, *q, *f;

	/* scheme://[userinfo@]authority */
	auth = memmem(url, (size_t)(end - url), "://", 3);
	if (auth && !is_scheme(url, (size_t)(auth - url)))
		auth = NULL;
	if (auth) {
		const char *a = auth + 3, *ae = a, *at = NULL;

		while (ae < end && *ae != '/' && *ae != '?' && *ae != '#') {
			if (*ae == '@')
				at = ae;
			ae++;
		}
		out_put(o, url, (size_t)(a - url));
		if (at) {
			out_put(o, "REDACTED@", 9);
			a = at + 1;
		}
		out_put(o, a, (size_t)(ae - a));
		p = ae;
	}
	q = memchr(p, '?', (size_t)(end - p));
	f = memchr(p, '#', (size_t)(end - p));
	if (q && f && f < q)
		q = NULL;
	if (q) {
		out_put(o, p, (size_t)(q + 1 - p));
		redact_pairs(o, q + 1, (size_t)((f ? f : end) - (q + 1)));
	} else {
		out_put(o, p, (size_t)((f ? f : end) - p));
	}
	if (f) {
		out_put(o, "#", 1);
		redact_pairs(o, f + 1, (size_t)(end - (f + 1)));
	}
}

size_t cloudhttp_redact_url(const char *url, char *out, size_t outlen)
{
	struct out o = {out, outlen, 0};
	const char *p = url ? url : "";

	/* word by word: a request line ("POST /?q HTTP/1.1") works too */
	while (*p) {
		size_t blanks = strspn(p, " \t"), word;

		out_put(&o, p, blanks);
		p += blanks;
		word = strcspn(p, " \t");
		redact_word(&o, p, p + word);
		p += word;
	}
	if (outlen)
		out[o.len < outlen ? o.len : outlen - 1] = '\0';
	return o.len;
}

static bool ends_with_ci(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && strcasecmp(s + n - m, suf) == 0;
}

bool cloudhttp_header_is_secret(const char *name)
{
	static const char *const exact[] = {
		"authorization", "proxy-authorization", "cookie", "set-cookie",
		"x-amz-security-token", "x-aws-ec2-metadata-token", "api-key", "x-api-key",
		NULL,
	};
	int i;

	if (!name)
		return false;
	for (i = 0; exact[i]; i++)
		if (strcasecmp(name, exact[i]) == 0)
			return true;
	if (ends_with_ci(name, "-token") || ends_with_ci(name, "-api-key"))
		return true;
	return strcasestr(name, "authorization") != NULL;
}

/* ---- URLs ---- */

int cloudhttp_url_parse(const char *url, struct cloudhttp_url *u, struct errbuf *err)
{
	char shown[URL_LOG_MAX];
	const char *p, *a, *ae, *hs, *he, *ps = NULL;
	size_t sl;

	memset(u, 0, sizeof(*u));
	if (!url || !url[0])
		return errbuf_set(err, "empty URL");
	cloudhttp_redact_url(url, shown, sizeof(shown));
	p = strstr(url, "://");
	if (!p)
		return errbuf_set(err, "%s: not an absolute URL", shown);
	sl = (size_t)(p - url);
	if (sl == 4 && strncasecmp(url, "http", 4) == 0) {
		snprintf(u->scheme, sizeof(u->scheme), "http");
		u->port = 80;
	} else if (sl == 5 && strncasecmp(url, "https", 5) == 0) {
		snprintf(u->scheme, sizeof(u->scheme), "https");
		u->port = 443;
	} else {
		return errbuf_set(err, "%s: only http and https URLs are allowed", shown);
	}
	a = p + 3;
	for (ae = a; *ae && *ae != '/' && *ae != '?' && *ae != '#'; ae++) {
		if (*ae == '@')
			return errbuf_set(err, "%s: user information in a URL is refused", shown);
		if ((unsigned char)*ae <= ' ' || *ae == 0x7f || *ae == '\\')
			return errbuf_set(err, "%s: invalid character in the host", shown);
	}
	if (ae == a)
		return errbuf_set(err, "%s: no host", shown);
	if ((size_t)(ae - a) >= sizeof(u->authority))
		return errbuf_set(err, "%s: host too long", shown);
	memcpy(u->authority, a, (size_t)(ae - a));
	u->authority[ae - a] = '\0';
	/* host and port */
	if (*a == '[') {
		const char *rb = memchr(a, ']', (size_t)(ae - a));

		if (!rb)
			return errbuf_set(err, "%s: unterminated IPv6 address", shown);
		hs = a + 1;
		he = rb;
		p = rb + 1;
		if (p < ae && *p != ':')
			return errbuf_set(err, "%s: junk after the IPv6 address", shown);
	} else {
		hs = a;
		for (he = a; he < ae && *he != ':'; he++)
			;
		p = he;
	}
	if (he == hs)
		return errbuf_set(err, "%s: no host", shown);
	if ((size_t)(he - hs) >= sizeof(u->host))
		return errbuf_set(err, "%s: host too long", shown);
	memcpy(u->host, hs, (size_t)(he - hs));
	u->host[he - hs] = '\0';
	if (p < ae) { /* ':' port */
		long port = 0;
		const char *d = p + 1;

		if (d == ae)
			return errbuf_set(err, "%s: empty port", shown);
		for (; d < ae; d++) {
			if (*d < '0' || *d > '9' || port > 65535)
				return errbuf_set(err, "%s: invalid port", shown);
			port = port * 10 + (*d - '0');
		}
		if (port < 1 || port > 65535)
			return errbuf_set(err, "%s: invalid port", shown);
		u->port = (int)port;
	}
	if (*ae == '/')
		ps = ae;
	if (ps) {
		const char *pe = ps + strcspn(ps, "?#");

		u->path = ps;
		u->path_len = (size_t)(pe - ps);
		ae = pe;
	}
	if (*ae == '?') {
		u->query = ae + 1;
		u->query_len = strcspn(u->query, "#");
	}
	for (p = url; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return errbuf_set(err, "%s: a space or control character in the URL", shown);
	return 0;
}

int cloudhttp_escape(struct buf *b, const char *s)
{
	return buf_percent_encode(b, s);
}

/* ---- Retry-After ---- */

static int month_of(const char *s)
{
	static const char *const m[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
					"Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	int i;

	for (i = 0; i < 12; i++)
		if (strncmp(s, m[i], 3) == 0)
			return i + 1;
	return 0;
}

static int hms(const char *s, int *h, int *m, int *sec)
{
	if (textparse_digits(s, 2, h) || s[2] != ':' || textparse_digits(s + 3, 2, m) || s[5] != ':' || textparse_digits(s + 6, 2, sec))
		return -1;
	return (*h > 23 || *m > 59 || *sec > 60) ? -1 : 0;
}

int cloudhttp_parse_http_date(const char *s, int64_t *out)
{
	static const char *const wk[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
	int Y, M, D, h, mi, se, i;
	const char *p = s;

	for (i = 0; i < 7; i++)
		if (strncmp(p, wk[i], 3) == 0)
			break;
	if (i == 7)
		return -1;
	if (p[3] == ',') {
		/* IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT"; RFC 1123 also lets
		 * the day be one digit ("Sun, 6 Nov ..."), as some servers write it */
		p += 4;
		if (*p == ' ' && p[1] >= '1' && p[1] <= '9' && p[2] == ' ') {
			D = p[1] - '0';
			p--; /* the rest sits one place earlier */
		} else if (*p != ' ' || textparse_digits(p + 1, 2, &D)) {
			return -1;
		}
		if (p[3] != ' ' || !(M = month_of(p + 4)) || p[7] != ' ' || textparse_digits(p + 8, 4, &Y) ||
		    p[12] != ' ' || hms(p + 13, &h, &mi, &se) || strcmp(p + 21, " GMT") != 0)
			return -1;
	} else if (p[3] == ' ') {
		/* asctime: "Sun Nov  6 08:49:37 1994" */
		p += 4;
		if (!(M = month_of(p)) || p[3] != ' ')
			return -1;
		p += 4;
		if (p[0] == ' ') {
			if (textparse_digits(p + 1, 1, &D))
				return -1;
		} else if (textparse_digits(p, 2, &D)) {
			return -1;
		}
		if (p[2] != ' ' || hms(p + 3, &h, &mi, &se) || p[11] != ' ' || textparse_digits(p + 12, 4, &Y) ||
		    p[16] != '\0')
			return -1;
	} else {
		/* RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT" */
		const char *c = strchr(p, ',');

		if (!c || c - p > 9)
			return -1;
		p = c + 1;
		if (*p != ' ' || textparse_digits(p + 1, 2, &D) || p[3] != '-' || !(M = month_of(p + 4)) ||
		    p[7] != '-' || textparse_digits(p + 8, 2, &Y) || p[10] != ' ' || hms(p + 11, &h, &mi, &se) ||
		    strcmp(p + 19, " GMT") != 0)
			return -1;
		Y += Y < 70 ? 2000 : 1900;
	}
	if (D < 1 || D > 31)
		return -1;
	*out = textparse_days_from_civil(Y, M, D) * 86400 + h * 3600 + mi * 60 + se;
	return 0;
}

#define RETRY_AFTER_MAX_MS (INT64_MAX / 2)

int cloudhttp_parse_retry_after(const char *value, int64_t now_wall_s, int64_t *out_ms)
{
	const char *p = value, *e;
	int64_t t;

	if (!value)
		return -1;
	while (*p == ' ' || *p == '\t')
		p++;
	e = p + strlen(p);
	while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	if (e == p)
		return -1;
	if (*p >= '0' && *p <= '9') {
		int64_t v = 0;
		const char *d;

		for (d = p; d < e; d++) {
			if (*d < '0' || *d > '9')
				return -1;
			if (v < RETRY_AFTER_MAX_MS / 1000)
				v = v * 10 + (*d - '0');
		}
		*out_ms = v >= RETRY_AFTER_MAX_MS / 1000 ? RETRY_AFTER_MAX_MS : v * 1000;
		return 0;
	}
	{
		char tmp[64];
		size_t n = (size_t)(e - p);

		if (n >= sizeof(tmp))
			return -1;
		memcpy(tmp, p, n);
		tmp[n] = '\0';
		if (cloudhttp_parse_http_date(tmp, &t))
			return -1;
	}
	*out_ms = t <= now_wall_s ? 0 : (t - now_wall_s) * 1000;
	return 0;
}

/* Strict non-negative decimal milliseconds (retry-after-ms). */
static int parse_ms(const char *s, int64_t *out)
{
	int64_t v = 0;

	while (*s == ' ')
		s++;
	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++)
		if (v < RETRY_AFTER_MAX_MS)
			v = v * 10 + (*s - '0');
	while (*s == ' ')
		s++;
	if (*s)
		return -1;
	*out = v > RETRY_AFTER_MAX_MS ? RETRY_AFTER_MAX_MS : v;
	return 0;
}

static int64_t retry_after_of(const struct cloudhttp *h, const struct cloudhttp_headers *hd)
{
	const char *v;
	int64_t ms;

	if ((v = cloudhttp_headers_get(hd, "retry-after-ms")) && parse_ms(v, &ms) == 0)
		return ms;
	if ((v = cloudhttp_headers_get(hd, "x-ms-retry-after-ms")) && parse_ms(v, &ms) == 0)
		return ms;
	if ((v = cloudhttp_headers_get(hd, "retry-after")) &&
	    cloudhttp_parse_retry_after(v, clock_wall(h->clock), &ms) == 0)
		return ms;
	return -1;
}

/* ---- the client ---- */

void cloudhttp_free(struct cloudhttp *h)
{
	if (!h)
		return;
	httpclient_share_free(h->share);
	free(h->ca_file);
	free(h->user_agent);
	free(h);
}

struct cloudhttp *cloudhttp_new(const struct cloudhttp_opts *opts, struct errbuf *err)
{
	struct cloudhttp_opts o = {0};
	struct cloudhttp *h;
	uint64_t seed;

	if (opts)
		o = *opts;
	if (o.max_attempts < 0 || o.max_attempts > CLOUDHTTP_MAX_ATTEMPTS_LIMIT) {
		errbuf_set(err, "max attempts %d: expected 1 to %d (0: %d)", o.max_attempts,
			   CLOUDHTTP_MAX_ATTEMPTS_LIMIT, DEFAULT_ATTEMPTS);
		return NULL;
	}
	if (o.max_backoff_ms < 0 || o.connect_timeout_ms < 0 || o.request_timeout_ms < 0) {
		errbuf_set(err, "negative timeout or backoff");
		return NULL;
	}
	if (o.user_agent && !valid_header("User-Agent", o.user_agent)) {
		errbuf_set(err, "user agent: a line break is not allowed");
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	h->share = httpclient_share_new(err);
	if (!h->share)
		goto fail;
	h->clock = o.clock ? o.clock : clock_real();
	h->log = o.log;
	h->connect_ms = o.connect_timeout_ms > 0 ? o.connect_timeout_ms : DEFAULT_CONNECT_MS;
	h->request_ms = o.request_timeout_ms > 0 ? o.request_timeout_ms : DEFAULT_REQUEST_MS;
	h->max_body = o.max_body ? o.max_body : DEFAULT_MAX_BODY;
	h->insecure = o.insecure_skip_verify;
	h->max_attempts = o.max_attempts ? o.max_attempts : DEFAULT_ATTEMPTS;
	h->max_backoff_ms = o.max_backoff_ms ? o.max_backoff_ms : DEFAULT_MAX_BACKOFF_MS;
	h->cancel = o.cancel;
	h->verbose = o.verbose;
	seed = o.seed;
	if (!seed)
		seed = (uint64_t)clock_now(clock_real()) ^ ((uint64_t)getpid() << 32) ^
		       (uint64_t)(uintptr_t)h;
	atomic_init(&h->rng, seed);
	h->user_agent = httpclient_user_agent(o.user_agent);
	if (o.ca_file) {
		if (access(o.ca_file, R_OK) != 0) {
			errbuf_set(err, "CA file %s: %s", o.ca_file, strerror(errno));
			goto fail;
		}
		h->ca_file = strdup(o.ca_file);
	}
	if (!h->user_agent || (o.ca_file && !h->ca_file)) {
		errbuf_set(err, "out of memory");
		goto fail;
	}
	return h;
fail:
	cloudhttp_free(h);
	return NULL;
}

/* A uniform double in [0, 1) (splitmix64 over an atomic counter). */
static double rand01(struct cloudhttp *h)
{
	uint64_t z = atomic_fetch_add(&h->rng, 0x9e3779b97f4a7c15ULL) + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (double)(z >> 11) / 9007199254740992.0;
}

/* ---- one transfer ---- */

struct xfer {
	struct cloudhttp *h;
	struct httpclient_body body;
	struct cloudhttp_headers hdrs;
	bool stopped, hdr_oom;
};

static size_t on_header(char *data, size_t size, size_t nmemb, void *ud)
{
	struct xfer *x = ud;
	size_t n = size * nmemb, len = n, nl;
	const char *colon, *v, *ve;

	while (len && (data[len - 1] == '\n' || data[len - 1] == '\r'))
		len--;
	if (len >= 5 && strncmp(data, "HTTP/", 5) == 0) {
		/* a new response (after a 1xx): its headers replace the last */
		cloudhttp_headers_free(&x->hdrs);
		return n;
	}
	if (!len)
		return n;
	colon = memchr(data, ':', len);
	if (!colon || colon == data)
		return n; /* a continuation or junk line: ignored */
	if (x->hdrs.n >= MAX_RESPONSE_HEADERS)
		return n;
	nl = (size_t)(colon - data);
	v = colon + 1;
	ve = data + len;
	while (v < ve && (*v == ' ' || *v == '\t'))
		v++;
	while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
		ve--;
	if (headers_add_n(&x->hdrs, data, nl, v, (size_t)(ve - v)))
		x->hdr_oom = true;
	return n;
}

static int on_progress(void *ud, curl_off_t dlt, curl_off_t dln, curl_off_t ult, curl_off_t uln)
{
	struct xfer *x = ud;

	(void)dlt;
	(void)dln;
	(void)ult;
	(void)uln;
	if (cancelled(x->h)) {
		x->stopped = true;
		return 1;
	}
	return 0;
}

/* Logs one header line ("Name: value") with a secret value redacted. */
static void log_header_line(struct cloudhttp *h, const char *dir, const char *s, size_t len)
{
	const char *colon = memchr(s, ':', len);
	char name[128];
	size_t nl;

	if (colon && (nl = (size_t)(colon - s)) < sizeof(name)) {
		memcpy(name, s, nl);
		name[nl] = '\0';
		if (cloudhttp_header_is_secret(name)) {
			LOGF(h, LOG_DEBUG, "http %s %s: <redacted>", dir, name);
			return;
		}
	} else if (colon) {
		LOGF(h, LOG_DEBUG, "http %s <a header with a long name, not shown>", dir);
		return;
	}
	LOGF(h, LOG_DEBUG, "http %s %.*s", dir, (int)len, s);
}

/* Logs a request line "POST /path?query HTTP/1.1" with secrets redacted. */
static void log_request_line(struct cloudhttp *h, const char *s, size_t len)
{
	char line[URL_LOG_MAX], shown[URL_LOG_MAX];

	snprintf(line, sizeof(line), "%.*s", (int)len, s);
	cloudhttp_redact_url(line, shown, sizeof(shown));
	LOGF(h, LOG_DEBUG, "http > %s", shown);
}

struct debug_chunk {
	struct cloudhttp *h;
	bool out;                 /* headers sent, not received */
};

static void debug_line(void *ud, const char *s, size_t len, bool first)
{
	const struct debug_chunk *d = ud;

	if (d->out && first)
		log_request_line(d->h, s, len);
	else if (len >= 5 && strncmp(s, "HTTP/", 5) == 0)
		LOGF(d->h, LOG_DEBUG, "http < %.*s", (int)len, s);
	else
		log_header_line(d->h, d->out ? ">" : "<", s, len);
}

/* curl's headers as sent and received, line by line; bodies, TLS data and
 * curl's own text are not logged. */
static int on_debug(CURL *c, curl_infotype type, char *data, size_t size, void *ud)
{
	struct xfer *x = ud;
	struct debug_chunk d = {x->h, type == CURLINFO_HEADER_OUT};

	(void)c;
	if (type != CURLINFO_HEADER_OUT && type != CURLINFO_HEADER_IN)
		return 0;
	httpclient_debug_lines(data, size, debug_line, &d);
	return 0;
}

static bool has_header(const struct cloudhttp_headers *a, const struct cloudhttp_headers *b,
		       const char *name)
{
	return cloudhttp_headers_get(a, name) || cloudhttp_headers_get(b, name);
}

/* Appends "Name: value" lines of 'l' to the curl list. */
static struct curl_slist *add_list(struct curl_slist *sl, const struct cloudhttp_headers *l,
				   bool *fail)
{
	struct buf line = BUF_INIT;
	size_t i;

	for (i = 0; l && i < l->n && !*fail; i++) {
		line.len = 0;
		/* "Name;" is curl's way to send a header with an empty value */
		if (l->v[i].value[0])
			buf_printf(&line, "%s: %s", l->v[i].name, l->v[i].value);
		else
			buf_printf(&line, "%s;", l->v[i].name);
		*fail |= line.oom != 0;
		sl = httpclient_slist_add(sl, line.data, fail);
	}
	if (line.data)
		memset(line.data, 0, line.cap);
	buf_free(&line);
	return sl;
}

static void wipe_headers(struct cloudhttp_headers *hd)
{
	size_t i;

	for (i = 0; i < hd->n; i++)
		memset(hd->v[i].value, 0, strlen(hd->v[i].value));
	cloudhttp_headers_free(hd);
}

static bool retryable_transport(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_SSL_CONNECT_ERROR:
		return true;
	default:
		return false;
	}
}

/* The outcome of one attempt. */
enum attempt_result {
	ATTEMPT_ANSWERED,
	ATTEMPT_TRANSIENT,   /* no answer; worth another try */
	ATTEMPT_FATAL,       /* no answer; retrying would not help */
};

/*
 * One attempt: prepare, send, collect. Fills resp (status, body, headers,
 * retry_after_ms) when answered; else sets 'err' (method and redacted URL
 * first) and leaves resp with status 0.
 */
static enum attempt_result attempt(struct cloudhttp *h, const struct cloudhttp_request *req,
				   const char *shown, struct cloudhttp_response *resp,
				   struct errbuf *err)
{
	struct cloudhttp_headers extra = CLOUDHTTP_HEADERS_INIT;
	struct cloudhttp_url u;
	struct curl_slist *sl = NULL;
	struct xfer x;
	struct buf host = BUF_INIT;
	char curl_err[CURL_ERROR_SIZE] = "";
	bool fail = false, has_body;
	enum attempt_result ar = ATTEMPT_FATAL;
	const char *method = req->method;
	struct errbuf perr = {{0}};
	CURLcode rc;
	CURL *c = NULL;

	memset(&x, 0, sizeof(x));
	x.h = h;
	x.body.max = h->max_body;
	{
		int a = resp->attempts;

		cloudhttp_response_free(resp);
		resp->attempts = a;
	}
	if (cancelled(h)) {
		errbuf_set(err, "%s %s: not sent: luascale is stopping", method, shown);
		return ATTEMPT_FATAL;
	}
	if (cloudhttp_url_parse(req->url, &u, &perr)) {
		errbuf_set(err, "%s %s", method, perr.msg);
		return ATTEMPT_FATAL;
	}
	perr.msg[0] = '\0';
	if (req->prepare && req->prepare(req->ctx, req, &extra, &perr)) {
		errbuf_set(err, "%s %s: %s", method, shown, perr.msg[0] ? perr.msg : "not prepared");
		goto out;
	}
	resp->attempts++;
	/* what libcurl would add behind the caller's back */
	if (!has_header(req->headers, &extra, "Host")) {
		buf_printf(&host, "Host: %s", u.authority);
		sl = httpclient_slist_add(sl, host.oom ? "" : host.data, &fail);
		fail |= host.oom != 0;
	}
	sl = add_list(sl, req->headers, &fail);
	sl = add_list(sl, &extra, &fail);
	if (!has_header(req->headers, &extra, "Expect"))
		sl = httpclient_slist_add(sl, "Expect:", &fail);
	if (!has_header(req->headers, &extra, "Accept"))
		sl = httpclient_slist_add(sl, "Accept:", &fail);
	has_body = req->body || strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 ||
		   strcmp(method, "PATCH") == 0;
	if (has_body && !has_header(req->headers, &extra, "Content-Type"))
		sl = httpclient_slist_add(sl, "Content-Type:", &fail);
	if (fail) {
		errbuf_set(err, "%s %s: out of memory", method, shown);
		goto out;
	}
	c = httpclient_easy_new(h->share, &(const struct httpclient_easy_opts){
		.url = req->url,
		.method = method,
		.body = has_body ? (req->body ? req->body : "") : NULL,
		.body_len = req->body_len,
		.headers = sl,
		.user_agent = h->user_agent,
		.connect_ms = h->connect_ms,
		.timeout_ms = req->timeout_ms > 0 ? req->timeout_ms : h->request_ms,
		.tls = &(const struct httpclient_tls){.insecure = h->insecure, .ca_file = h->ca_file},
		.error_buf = curl_err,
		.on_write = httpclient_body_write,
		.write_ud = &x.body,
		.on_header = on_header,
		.header_ud = &x,
		.on_progress = on_progress,
		.progress_ud = &x,
		.on_debug = h->verbose && h->log ? on_debug : NULL,
		.debug_ud = &x,
	});
	if (!c) {
		errbuf_set(err, "%s %s: out of memory", method, shown);
		goto out;
	}
	if (req->fresh_connect)
		curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, 1L);
	curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, NULL);
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		if (x.stopped) {
			errbuf_set(err, "%s %s: abandoned: luascale is stopping", method, shown);
		} else if (x.body.too_big) {
			errbuf_set(err, "%s %s: response larger than %zu bytes", method, shown,
				   h->max_body);
		} else {
			char msg[CURL_ERROR_SIZE + 80];

			httpclient_error_text(c, rc, curl_err, msg, sizeof(msg));
			errbuf_set(err, "%s %s: %s", method, shown, msg);
			if (retryable_transport(rc))
				ar = ATTEMPT_TRANSIENT;
		}
		goto out;
	}
	if (x.body.data.oom || x.hdr_oom) {
		errbuf_set(err, "%s %s: out of memory", method, shown);
		goto out;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp->status);
	if (resp->status == 0) {
		errbuf_set(err, "%s %s: no HTTP status in the answer", method, shown);
		ar = ATTEMPT_TRANSIENT;
		goto out;
	}
	resp->body_len = x.body.data.len;
	resp->body = buf_take(&x.body.data);
	if (!resp->body) {
		resp->status = 0;
		resp->body_len = 0;
		errbuf_set(err, "%s %s: out of memory", method, shown);
		goto out;
	}
	resp->headers = x.hdrs;
	memset(&x.hdrs, 0, sizeof(x.hdrs));
	resp->retry_after_ms = retry_after_of(h, &resp->headers);
	ar = ATTEMPT_ANSWERED;
out:
	if (c)
		curl_easy_cleanup(c);
	httpclient_slist_free(sl); /* values may hold a signature or a token */
	wipe_headers(&extra);
	buf_free(&host);
	buf_free(&x.body.data);
	cloudhttp_headers_free(&x.hdrs);
	if (ar != ATTEMPT_ANSWERED)
		resp->status = 0;
	return ar;
}

int cloudhttp_send(struct cloudhttp *h, const struct cloudhttp_request *req,
		   struct cloudhttp_response *resp, struct errbuf *err)
{
	char shown[URL_LOG_MAX];

	memset(resp, 0, sizeof(*resp));
	resp->retry_after_ms = -1;
	if (!req || !req->method || !req->url)
		return errbuf_set(err, "request without a method or URL");
	cloudhttp_redact_url(req->url, shown, sizeof(shown));
	return attempt(h, req, shown, resp, err) == ATTEMPT_ANSWERED ? 0 : -1;
}

/* Waits 'ms' on the client's clock in slices, watching the cancel flag.
 * Returns 0, 1 when cancelled, -1 when the clock cannot wait. */
static int wait_ms(struct cloudhttp *h, int64_t ms)
{
	int64_t until = clock_now(h->clock) + ms * CLOCK_NS_PER_MS;

	for (;;) {
		int64_t now = clock_now(h->clock), next;

		if (cancelled(h))
			return 1;
		if (now >= until)
			return 0;
		next = until - now > WAIT_SLICE_NS ? now + WAIT_SLICE_NS : until;
		if (h->clock->ops->sleep_until(h->clock, next) < 0)
			return -1;
	}
}

/* The delay before attempt n + 1 after n failed ones (n >= 1). */
static int64_t backoff_ms(struct cloudhttp *h, int n, int64_t retry_after_ms)
{
	int64_t cap = h->max_backoff_ms, base, d;

	base = n - 1 >= 30 ? cap : (int64_t)1000 << (n - 1);
	if (base > cap)
		base = cap;
	d = (int64_t)(rand01(h) * (double)base);
	if (retry_after_ms >= 0) {
		int64_t ra = retry_after_ms > cap ? cap : retry_after_ms;

		if (d < ra)
			d = ra;
	}
	return d;
}

static void append_attempts(struct errbuf *err, int n)
{
	size_t l;

	if (!err)
		return;
	l = strlen(err->msg);
	if (l < sizeof(err->msg))
		snprintf(err->msg + l, sizeof(err->msg) - l, " after %d attempts", n);
}

int cloudhttp_call(struct cloudhttp *h, const struct cloudhttp_request *req,
		   struct cloudhttp_response *resp, struct errbuf *err)
{
	char shown[URL_LOG_MAX];
	enum cloudhttp_verdict (*classify)(void *, const struct cloudhttp_response *);
	int n;

	memset(resp, 0, sizeof(*resp));
	resp->retry_after_ms = -1;
	if (!req || !req->method || !req->url)
		return errbuf_set(err, "request without a method or URL");
	cloudhttp_redact_url(req->url, shown, sizeof(shown));
	classify = req->classify ? req->classify : cloudhttp_classify_default;
	for (n = 1;; n++) {
		enum attempt_result ar = attempt(h, req, shown, resp, err);
		enum cloudhttp_verdict v = CLOUDHTTP_RETRY;
		int64_t d;
		int w;

		if (ar == ATTEMPT_FATAL) {
			if (resp->attempts > 1 && !cancelled(h))
				append_attempts(err, resp->attempts);
			return -1;
		}
		if (ar == ATTEMPT_ANSWERED) {
			v = classify(req->ctx, resp);
			resp->throttled = v == CLOUDHTTP_RETRY_THROTTLED;
			if (v == CLOUDHTTP_DONE)
				return 0;
		}
		if (n >= h->max_attempts) {
			if (ar == ATTEMPT_ANSWERED)
				return 0;
			if (n > 1)
				append_attempts(err, resp->attempts);
			return -1;
		}
		d = backoff_ms(h, n, ar == ATTEMPT_ANSWERED ? resp->retry_after_ms : -1);
		if (ar == ATTEMPT_ANSWERED)
			LOGF(h, LOG_DEBUG, "%s %s: HTTP %ld%s, attempt %d of %d, retrying in %lld ms",
			     req->method, shown, resp->status,
			     v == CLOUDHTTP_RETRY_THROTTLED ? " (throttled)" : "", n, h->max_attempts,
			     (long long)d);
		else
			LOGF(h, LOG_DEBUG, "%s, attempt %d of %d, retrying in %lld ms", err->msg, n,
			     h->max_attempts, (long long)d);
		w = wait_ms(h, d);
		if (w > 0) {
			int a = resp->attempts;

			cloudhttp_response_free(resp);
			resp->attempts = a;
			return errbuf_set(err, "%s %s: abandoned after %d attempt%s: luascale is stopping",
					  req->method, shown, a, a == 1 ? "" : "s");
		}
		if (w < 0)
			return ar == ATTEMPT_ANSWERED ? 0 : -1;
	}
}
