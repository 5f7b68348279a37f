/*
 * sigv4: the canonical request, the string to sign and the HMAC chain of
 * AWS Signature Version 4, shared by the signer and the verifier so both
 * sides build the same bytes. Crypto through OpenSSL's EVP interfaces.
 * Owns no state; sending the request is the caller's business.
 */
#include "wire/sigv4.h"
#include "textparse.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#define SIGV4_ALGORITHM "AWS4-HMAC-SHA256"
#define SIGV4_MAX_SKEW_S (15 * 60)

void aws_credentials_wipe(struct aws_credentials *c)
{
	if (c)
		explicit_bzero(c, sizeof(*c));
}

void sigv4_output_free(struct sigv4_output *o)
{
	if (!o)
		return;
	buf_free(&o->canonical_request);
	buf_free(&o->string_to_sign);
}

void sigv4_scope_free(struct sigv4_scope *s)
{
	if (s)
		buf_free(&s->canonical_request);
}

/* ---- crypto ---- */

static void hex_encode(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

static int sha256_hex(const void *data, size_t n, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;

	if (!EVP_Digest(data ? data : "", n, md, &len, EVP_sha256(), NULL) || len != 32)
		return -1;
	hex_encode(md, 32, out);
	return 0;
}

static int hmac256(const void *key, size_t key_len, const char *msg, size_t msg_len,
		   unsigned char out[32])
{
	size_t len = 0;

	if (!EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, key, key_len,
		       (const unsigned char *)msg, msg_len, out, 32, &len) || len != 32)
		return -1;
	return 0;
}

/* hex(HMAC(kSigning, sts)) with kSigning derived from the secret and scope. */
static int compute_signature(const char *secret, const char *date, const char *region,
			     const char *service, const char *sts, char out[65])
{
	unsigned char k[32], k2[32];
	struct buf key = BUF_INIT;
	int rc = -1;

	buf_puts(&key, "AWS4");
	buf_puts(&key, secret);
	if (key.oom)
		goto out;
	if (hmac256(key.data, key.len, date, strlen(date), k) ||
	    hmac256(k, 32, region, strlen(region), k2) ||
	    hmac256(k2, 32, service, strlen(service), k) ||
	    hmac256(k, 32, "aws4_request", 12, k2) ||
	    hmac256(k2, 32, sts, strlen(sts), k))
		goto out;
	hex_encode(k, 32, out);
	rc = 0;
out:
	OPENSSL_cleanse(k, sizeof(k));
	OPENSSL_cleanse(k2, sizeof(k2));
	if (key.data)
		OPENSSL_cleanse(key.data, key.len);
	buf_free(&key);
	return rc;
}

/* ---- time ---- */

int sigv4_format_time(int64_t t, char out[17])
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (t < 0 || t > 253402300799LL || !gmtime_r(&tt, &tm))
		return -1;
	if (strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm) != 16)
		return -1;
	return 0;
}

int sigv4_parse_time(const char *text, int64_t *out)
{
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int y, mo, d, h, mi, s;
	struct tm tm;
	time_t t;

	if (!text || strlen(text) != 16 || text[8] != 'T' || text[15] != 'Z' ||
	    textparse_digits(text, 4, &y) || textparse_digits(text + 4, 2, &mo) || textparse_digits(text + 6, 2, &d) ||
	    textparse_digits(text + 9, 2, &h) || textparse_digits(text + 11, 2, &mi) || textparse_digits(text + 13, 2, &s))
		return -1;
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 ||
	    mi > 59 || s > 59)
		return -1;
	if (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = s;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -1;
	*out = (int64_t)t;
	return 0;
}

/* ---- canonical URI and query ---- */

static bool unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == '.' || c == '~';
}

static void encode_into(struct buf *b, const char *s, size_t n, bool keep_slash)
{
	static const char hexu[] = "0123456789ABCDEF";
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (unreserved(c) || (keep_slash && c == '/')) {
			buf_append(b, &s[i], 1);
		} else {
			char e[3] = {'%', hexu[c >> 4], hexu[c & 15]};

			buf_append(b, e, 3);
		}
	}
}

/*
 * The canonical URI of a non-S3 service: dot segments and empty segments
 * removed (RFC 3986 5.2.4 plus AWS's "//" rule), a trailing '/' kept, then
 * the wire form encoded once more ('%' becomes "%25").
 */
static int canonical_uri(const char *path, struct buf *out, struct errbuf *err)
{
	size_t n, i, start, n_seg = 0;
	struct {
		const char *p;
		size_t len;
	} *segs = NULL;
	bool trailing;
	int rc = -1;

	if (!path || !*path) {
		buf_puts(out, "/");
		return out->oom ? errbuf_set(err, "out of memory") : 0;
	}
	n = strlen(path);
	if (path[0] != '/')
		return errbuf_set(err, "path \"%.64s\" does not start with '/'", path);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)path[i];

		if (c <= 0x20 || c == 0x7f || c == '?' || c == '#')
			return errbuf_set(err, "path holds a byte 0x%02x that cannot be on the wire "
					  "(encode it as %%%02X)", c, c);
	}
	segs = calloc(n + 1, sizeof(*segs));
	if (!segs)
		return errbuf_set(err, "out of memory");
	for (start = 1, i = 1; i <= n; i++) {
		if (i == n || path[i] == '/') {
			const char *p = path + start;
			size_t len = i - start;

			if (len == 0 || (len == 1 && p[0] == '.')) {
				/* dropped */
			} else if (len == 2 && p[0] == '.' && p[1] == '.') {
				if (n_seg)
					n_seg--;
			} else {
				segs[n_seg].p = p;
				segs[n_seg].len = len;
				n_seg++;
			}
			start = i + 1;
		}
	}
	trailing = path[n - 1] == '/' && n_seg > 0;
	buf_puts(out, "/");
	for (i = 0; i < n_seg; i++) {
		if (i)
			buf_puts(out, "/");
		encode_into(out, segs[i].p, segs[i].len, false);
	}
	if (trailing)
		buf_puts(out, "/");
	rc = out->oom ? errbuf_set(err, "out of memory") : 0;
	free(segs);
	return rc;
}

/* Decodes %XX escapes of s[0..n) and appends the value re-encoded. */
static int reencode(struct buf *b, const char *s, size_t n, struct errbuf *err)
{
	struct buf raw = BUF_INIT;
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c <= 0x20 || c == 0x7f || c == '#')
			goto bad_byte;
		if (c == '%') {
			int hi = -1, lo = -1;
			char v;

			if (i + 2 < n) {
				hi = textparse_hexval(s[i + 1]);
				lo = textparse_hexval(s[i + 2]);
			}
			if (hi < 0 || lo < 0) {
				buf_free(&raw);
				return errbuf_set(err, "query: malformed %%-escape in \"%.*s\"",
						  (int)(n > 64 ? 64 : n), s);
			}
			v = (char)(hi * 16 + lo);
			buf_append(&raw, &v, 1);
			i += 2;
		} else {
			buf_append(&raw, &s[i], 1);
		}
	}
	encode_into(b, raw.data ? raw.data : "", raw.len, false);
	buf_free(&raw);
	return 0;
bad_byte:
	buf_free(&raw);
	return errbuf_set(err, "query holds a byte 0x%02x that cannot be on the wire",
			  (unsigned char)s[i]);
}

struct qpair {
	char *key, *value;
};

static int qpair_cmp(const void *a, const void *b)
{
	const struct qpair *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : strcmp(x->value, y->value);
}

static int canonical_query(const char *query, struct buf *out, struct errbuf *err)
{
	struct qpair *pairs = NULL;
	size_t n_pairs = 0, cap = 0, i;
	const char *p = query;
	int rc = -1;

	if (!query || !*query)
		return 0;
	while (*p) {
		const char *amp = strchr(p, '&');
		size_t len = amp ? (size_t)(amp - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		size_t klen = eq ? (size_t)(eq - p) : len;
		struct buf k = BUF_INIT, v = BUF_INIT;

		if (len > 0) {
			if (n_pairs == cap) {
				size_t nc = cap ? cap * 2 : 8;
				struct qpair *np = realloc(pairs, nc * sizeof(*np));

				if (!np) {
					errbuf_set(err, "out of memory");
					goto out;
				}
				pairs = np;
				cap = nc;
			}
			if (reencode(&k, p, klen, err) ||
			    (eq && reencode(&v, eq + 1, len - klen - 1, err))) {
				buf_free(&k);
				buf_free(&v);
				goto out;
			}
			pairs[n_pairs].key = buf_take(&k);
			pairs[n_pairs].value = buf_take(&v);
			if (!pairs[n_pairs].key || !pairs[n_pairs].value) {
				free(pairs[n_pairs].key);
				free(pairs[n_pairs].value);
				errbuf_set(err, "out of memory");
				goto out;
			}
			n_pairs++;
		}
		p += len;
		if (*p == '&')
			p++;
	}
	qsort(pairs, n_pairs, sizeof(*pairs), qpair_cmp);
	for (i = 0; i < n_pairs; i++) {
		if (i)
			buf_puts(out, "&");
		buf_puts(out, pairs[i].key);
		buf_puts(out, "=");
		buf_puts(out, pairs[i].value);
	}
	rc = out->oom ? errbuf_set(err, "out of memory") : 0;
out:
	for (i = 0; i < n_pairs; i++) {
		free(pairs[i].key);
		free(pairs[i].value);
	}
	free(pairs);
	return rc;
}

/* ---- headers ---- */

static const char *const never_signed[] = {
	"authorization", "connection", "expect", "keep-alive", "proxy-authorization",
	"te", "trailer", "transfer-encoding", "upgrade", "user-agent", "x-amzn-trace-id",
};

static bool is_never_signed(const char *lname)
{
	size_t i;

	for (i = 0; i < sizeof(never_signed) / sizeof(never_signed[0]); i++)
		if (strcmp(lname, never_signed[i]) == 0)
			return true;
	return false;
}

static bool tchar(unsigned char c)
{
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* One header as it enters the canonical form. */
struct hent {
	char *lname;
	char *value; /* trimmed, inner runs collapsed */
	size_t order;
};

struct hlist {
	struct hent *v;
	size_t n, cap;
};

static void hlist_free(struct hlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].lname);
		if (l->v[i].value) {
			explicit_bzero(l->v[i].value, strlen(l->v[i].value));
			free(l->v[i].value);
		}
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int check_name(const char *name, struct errbuf *err)
{
	const unsigned char *p = (const unsigned char *)name;

	if (!name || !*name)
		return errbuf_set(err, "a header has an empty name");
	for (; *p; p++)
		if (!tchar(*p))
			return errbuf_set(err, "header name \"%.64s\" holds a character (0x%02x) "
					  "HTTP does not allow in a name", name, *p);
	return 0;
}

static int check_value(const char *name, const char *value, struct errbuf *err)
{
	const unsigned char *p = (const unsigned char *)value;

	if (!value)
		return errbuf_set(err, "header \"%.64s\" has no value", name);
	for (; *p; p++)
		if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
			return errbuf_set(err, "header \"%.64s\": its value holds a control character "
					  "(0x%02x)%s", name, *p,
					  *p == '\n' || *p == '\r' ? ", a line break" : "");
	return 0;
}

/* Appends one header: lowercased name, value trimmed with runs of spaces
 * and tabs collapsed to one space. */
static int hlist_add(struct hlist *l, const char *name, const char *value, struct errbuf *err)
{
	struct buf v = BUF_INIT;
	const char *p = value;
	char *lname;
	size_t i;

	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 16;
		struct hent *nv = realloc(l->v, nc * sizeof(*nv));

		if (!nv)
			return errbuf_set(err, "out of memory");
		l->v = nv;
		l->cap = nc;
	}
	lname = strdup(name);
	if (!lname)
		return errbuf_set(err, "out of memory");
	for (i = 0; lname[i]; i++)
		lname[i] = (char)tolower((unsigned char)lname[i]);
	while (*p) {
		size_t run;

		while (*p == ' ' || *p == '\t')
			p++;
		run = strcspn(p, " \t");
		if (!run)
			break;
		if (v.len)
			buf_puts(&v, " ");
		buf_append(&v, p, run);
		p += run;
	}
	l->v[l->n].value = buf_take(&v);
	if (!l->v[l->n].value) {
		free(lname);
		return errbuf_set(err, "out of memory");
	}
	l->v[l->n].lname = lname;
	l->v[l->n].order = l->n;
	l->n++;
	return 0;
}

static int hent_cmp(const void *a, const void *b)
{
	const struct hent *x = a, *y = b;
	int c = strcmp(x->lname, y->lname);

	if (c)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The value of the first header named 'lname' (case-insensitively) in
 * 'in', and how many there are. */
static const char *find_header(const struct sigv4_input *in, const char *lname, size_t *count)
{
	const char *found = NULL;
	size_t i, n = 0;

	for (i = 0; i < in->n_headers; i++) {
		if (in->headers[i].name && strcasecmp(in->headers[i].name, lname) == 0) {
			if (!found)
				found = in->headers[i].value;
			n++;
		}
	}
	if (count)
		*count = n;
	return found;
}

/*
 * Builds the canonical request into 'cr' from the sorted list 'l':
 * METHOD \n URI \n QUERY \n (name:value \n)* \n signed \n payload.
 * Writes the signed-headers list into 'signed_out'.
 */
static int build_canonical(const struct sigv4_input *in, struct hlist *l, const char *payload,
			   struct buf *cr, char *signed_out, size_t signed_size,
			   struct errbuf *err)
{
	struct buf sh = BUF_INIT;
	size_t i;
	const char *m;
	int rc = -1;

	if (!in->method || !*in->method)
		return errbuf_set(err, "the request has no method");
	for (m = in->method; *m; m++) {
		char c = (char)toupper((unsigned char)*m);

		if (!tchar((unsigned char)*m))
			return errbuf_set(err, "method \"%.32s\" is not an HTTP token", in->method);
		buf_append(cr, &c, 1);
	}
	buf_puts(cr, "\n");
	if (canonical_uri(in->path, cr, err))
		return -1;
	buf_puts(cr, "\n");
	if (canonical_query(in->query, cr, err))
		return -1;
	buf_puts(cr, "\n");
	qsort(l->v, l->n, sizeof(*l->v), hent_cmp);
	for (i = 0; i < l->n; i++) {
		bool first = i == 0 || strcmp(l->v[i - 1].lname, l->v[i].lname) != 0;

		if (first) {
			if (i) {
				buf_puts(cr, "\n");
				buf_puts(&sh, ";");
			}
			buf_puts(cr, l->v[i].lname);
			buf_puts(cr, ":");
			buf_puts(&sh, l->v[i].lname);
		} else {
			buf_puts(cr, ",");
		}
		buf_puts(cr, l->v[i].value);
	}
	buf_puts(cr, "\n\n");
	buf_puts(cr, sh.data ? sh.data : "");
	buf_puts(cr, "\n");
	buf_puts(cr, payload);
	if (cr->oom || sh.oom) {
		errbuf_set(err, "out of memory");
		goto out;
	}
	if (sh.len >= signed_size) {
		errbuf_set(err, "the signed headers' names take %zu bytes, more than %zu",
			   sh.len, signed_size - 1);
		goto out;
	}
	memcpy(signed_out, sh.data ? sh.data : "", sh.len + 1);
	rc = 0;
out:
	buf_free(&sh);
	return rc;
}

static int check_scope_part(const char *what, const char *s, size_t max, struct errbuf *err)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!s || !*s)
		return errbuf_set(err, "the %s is empty", what);
	if (strlen(s) >= max)
		return errbuf_set(err, "the %s is longer than %zu bytes", what, max - 1);
	for (; *p; p++)
		if (*p <= 0x20 || *p >= 0x7f || *p == '/' || *p == ',' || *p == '=')
			return errbuf_set(err, "the %s holds a character (0x%02x) a credential scope "
					  "cannot", what, *p);
	return 0;
}

static void build_sts(struct buf *sts, const char *amz_date, const char *date,
		      const char *region, const char *service, const char *cr_hash)
{
	buf_printf(sts, "%s\n%s\n%s/%s/%s/aws4_request\n%s", SIGV4_ALGORITHM, amz_date, date,
		   region, service, cr_hash);
}

static int payload_hash(const struct sigv4_input *in, char out[65], struct errbuf *err)
{
	if (in->body_len && !in->body)
		return errbuf_set(err, "the body is NULL but its length is %zu", in->body_len);
	if (sha256_hex(in->body, in->body_len, out))
		return errbuf_set(err, "SHA-256 failed (libcrypto)");
	return 0;
}

int sigv4_sign(const struct sigv4_input *in, const struct aws_credentials *cr,
	       struct sigv4_output *out, struct errbuf *err)
{
	struct hlist l = {0};
	bool token = cr && cr->session_token[0];
	size_t i, n_host = 0;
	const char *content_sha = NULL;
	char date[9], cr_hash[65];
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (!in || !cr)
		return errbuf_set(err, "nothing to sign");
	if (check_scope_part("region", in->region, 64, err) ||
	    check_scope_part("service", in->service, 64, err) ||
	    check_scope_part("access key id", cr->access_key_id, sizeof(cr->access_key_id), err))
		return -1;
	if (!cr->secret_access_key[0])
		return errbuf_set(err, "the secret access key is empty");
	if (sigv4_format_time(in->time_s, out->amz_date))
		return errbuf_set(err, "time %lld is out of range", (long long)in->time_s);
	memcpy(date, out->amz_date, 8);
	date[8] = '\0';
	for (i = 0; i < in->n_headers; i++) {
		const char *name = in->headers[i].name, *value = in->headers[i].value;

		if (check_name(name, err) || check_value(name, value, err))
			goto out;
		if (strcasecmp(name, "host") == 0) {
			n_host++;
			if (!value[strspn(value, " \t")]) {
				errbuf_set(err, "the Host header is empty");
				goto out;
			}
		}
		if (strcasecmp(name, "x-amz-date") == 0 ||
		    (token && strcasecmp(name, "x-amz-security-token") == 0))
			continue;
		if (!content_sha && strcasecmp(name, "x-amz-content-sha256") == 0)
			content_sha = value; /* the first, as botocore reads it */
		{
			char lname[64];
			size_t j, len = strlen(name);

			if (len < sizeof(lname)) {
				for (j = 0; j <= len; j++)
					lname[j] = (char)tolower((unsigned char)name[j]);
				if (is_never_signed(lname))
					continue;
			}
		}
		if (hlist_add(&l, name, value, err))
			goto out;
	}
	if (n_host == 0) {
		errbuf_set(err, "the request has no Host header (SigV4 signs it)");
		goto out;
	}
	if (n_host > 1) {
		errbuf_set(err, "the request has %zu Host headers", n_host);
		goto out;
	}
	if (hlist_add(&l, "x-amz-date", out->amz_date, err) ||
	    (token && hlist_add(&l, "x-amz-security-token", cr->session_token, err)))
		goto out;
	if (token && check_value("x-amz-security-token", cr->session_token, err))
		goto out;
	if (content_sha) {
		struct buf t = BUF_INIT;

		/* trimmed like any header value */
		while (*content_sha == ' ' || *content_sha == '\t')
			content_sha++;
		buf_puts(&t, content_sha);
		while (t.len && (t.data[t.len - 1] == ' ' || t.data[t.len - 1] == '\t'))
			t.data[--t.len] = '\0';
		if (t.len == 0 || t.len >= sizeof(out->payload_hash)) {
			buf_free(&t);
			errbuf_set(err, "X-Amz-Content-SHA256 must be a hash or UNSIGNED-PAYLOAD");
			goto out;
		}
		memcpy(out->payload_hash, t.data, t.len + 1);
		buf_free(&t);
	} else if (payload_hash(in, out->payload_hash, err)) {
		goto out;
	}
	if (build_canonical(in, &l, out->payload_hash, &out->canonical_request,
			    out->signed_headers, sizeof(out->signed_headers), err))
		goto out;
	if (sha256_hex(out->canonical_request.data, out->canonical_request.len, cr_hash)) {
		errbuf_set(err, "SHA-256 failed (libcrypto)");
		goto out;
	}
	build_sts(&out->string_to_sign, out->amz_date, date, in->region, in->service, cr_hash);
	if (out->string_to_sign.oom) {
		errbuf_set(err, "out of memory");
		goto out;
	}
	if (compute_signature(cr->secret_access_key, date, in->region, in->service,
			      out->string_to_sign.data, out->signature)) {
		errbuf_set(err, "HMAC-SHA256 failed (libcrypto)");
		goto out;
	}
	{
		int n = snprintf(out->authorization, sizeof(out->authorization),
				 "%s Credential=%s/%s/%s/%s/aws4_request, SignedHeaders=%s, Signature=%s",
				 SIGV4_ALGORITHM, cr->access_key_id, date, in->region, in->service,
				 out->signed_headers, out->signature);

		if (n < 0 || (size_t)n >= sizeof(out->authorization)) {
			errbuf_set(err, "the Authorization header would be longer than %zu bytes",
				   sizeof(out->authorization) - 1);
			goto out;
		}
	}
	rc = 0;
out:
	hlist_free(&l);
	if (rc) {
		sigv4_output_free(out);
		memset(out, 0, sizeof(*out));
	}
	return rc;
}

int sigv4_redact(const char *canonical, struct buf *out)
{
	static const char key[] = "\nx-amz-security-token:";
	const char *p = canonical ? canonical : "";

	for (;;) {
		const char *hit = strstr(p, key);
		const char *end;

		if (!hit) {
			buf_puts(out, p);
			break;
		}
		hit += sizeof(key) - 1;
		buf_append(out, p, (size_t)(hit - p));
		buf_puts(out, "<redacted>");
		end = strchr(hit, '\n');
		p = end ? end : hit + strlen(hit);
	}
	return out->oom ? -1 : 0;
}

/* ---- verification ---- */

const char *sigv4_verdict_code(enum sigv4_verdict v, const char *service)
{
	switch (v) {
	case SIGV4_OK:
		return "";
	case SIGV4_MISSING:
		return "MissingAuthenticationToken";
	case SIGV4_INCOMPLETE:
		return "IncompleteSignature";
	case SIGV4_UNKNOWN_KEY:
		return service && strcmp(service, "ec2") == 0 ? "AuthFailure" : "InvalidClientTokenId";
	case SIGV4_MISMATCH:
		return "SignatureDoesNotMatch";
	case SIGV4_EXPIRED:
		return "RequestExpired";
	}
	return "IncompleteSignature";
}

int sigv4_verdict_http_status(enum sigv4_verdict v)
{
	switch (v) {
	case SIGV4_OK:
		return 200;
	case SIGV4_INCOMPLETE:
	case SIGV4_EXPIRED:
		return 400;
	case SIGV4_MISSING:
	case SIGV4_UNKNOWN_KEY:
	case SIGV4_MISMATCH:
		return 403;
	}
	return 403;
}

/* Copies s[0..n) into dst[size] when it fits. */
static int copy_part(char *dst, size_t size, const char *s, size_t n)
{
	if (n >= size)
		return -1;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

struct auth_parts {
	char akid[128], date[9], region[64], service[64];
	char signed_headers[1024];
	char signature[65];
};

/* Parses the Authorization header. Returns 0, or -1 with msg set. */
static int parse_authorization(const char *auth, struct auth_parts *a, struct errbuf *msg)
{
	const char *p = auth;
	bool have_cred = false, have_sh = false, have_sig = false;
	size_t alg = sizeof(SIGV4_ALGORITHM) - 1;

	if (strncmp(p, SIGV4_ALGORITHM, alg) != 0 || (p[alg] != ' ' && p[alg] != '\t'))
		return errbuf_set(msg, "Unsupported authorization type: the Authorization header "
				  "must start with '" SIGV4_ALGORITHM " '");
	p += alg;
	while (*p) {
		const char *eq, *end;
		size_t klen, vlen;

		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (!*p)
			break;
		eq = strchr(p, '=');
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		if (!eq || eq > end)
			return errbuf_set(msg, "Authorization header has a malformed component "
					  "(expected key=value)");
		klen = (size_t)(eq - p);
		vlen = (size_t)(end - eq - 1);
		while (vlen && (eq[vlen] == ' ' || eq[vlen] == '\t'))
			vlen--;
		if (klen == 10 && strncmp(p, "Credential", 10) == 0) {
			const char *v = eq + 1, *parts[5];
			size_t lens[5], k = 0;
			const char *q = v, *vend = v + vlen;

			if (have_cred)
				return errbuf_set(msg, "Authorization header has two Credential parameters");
			while (k < 5) {
				const char *slash = memchr(q, '/', (size_t)(vend - q));

				parts[k] = q;
				lens[k] = slash ? (size_t)(slash - q) : (size_t)(vend - q);
				k++;
				if (!slash)
					break;
				q = slash + 1;
			}
			if (k != 5 || parts[4] + lens[4] != vend || lens[4] != 12 ||
			    strncmp(parts[4], "aws4_request", 12) != 0 || lens[0] == 0 ||
			    lens[1] != 8 || lens[2] == 0 || lens[3] == 0)
				return errbuf_set(msg, "Credential must have the form "
						  "KEYID/YYYYMMDD/REGION/SERVICE/aws4_request");
			if (copy_part(a->akid, sizeof(a->akid), parts[0], lens[0]) ||
			    copy_part(a->date, sizeof(a->date), parts[1], lens[1]) ||
			    copy_part(a->region, sizeof(a->region), parts[2], lens[2]) ||
			    copy_part(a->service, sizeof(a->service), parts[3], lens[3]))
				return errbuf_set(msg, "Credential has a part too long");
			have_cred = true;
		} else if (klen == 13 && strncmp(p, "SignedHeaders", 13) == 0) {
			if (have_sh)
				return errbuf_set(msg, "Authorization header has two SignedHeaders parameters");
			if (vlen == 0 || copy_part(a->signed_headers, sizeof(a->signed_headers),
						   eq + 1, vlen))
				return errbuf_set(msg, "SignedHeaders is empty or too long");
			have_sh = true;
		} else if (klen == 9 && strncmp(p, "Signature", 9) == 0) {
			if (have_sig)
				return errbuf_set(msg, "Authorization header has two Signature parameters");
			if (copy_part(a->signature, sizeof(a->signature), eq + 1, vlen))
				return errbuf_set(msg, "Signature is longer than 64 hex digits");
			have_sig = true;
		} else {
			return errbuf_set(msg, "Authorization header has an unknown parameter \"%.*s\"",
					  (int)(klen > 32 ? 32 : klen), p);
		}
		p = end;
	}
	if (!have_cred || !have_sh || !have_sig)
		return errbuf_set(msg, "Authorization header requires 'Credential', "
				  "'SignedHeaders' and 'Signature' parameters; missing: %s%s%s",
				  have_cred ? "" : "Credential ", have_sh ? "" : "SignedHeaders ",
				  have_sig ? "" : "Signature");
	return 0;
}

static bool name_in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	while (*p) {
		const char *semi = strchr(p, ';');
		size_t len = semi ? (size_t)(semi - p) : strlen(p);

		if (len == n && strncmp(p, name, n) == 0)
			return true;
		if (!semi)
			break;
		p = semi + 1;
	}
	return false;
}

/* Checks SignedHeaders: lowercase tokens, sorted, unique, host and
 * x-amz-date among them, authorization not. */
static int check_signed_list(const char *list, struct errbuf *msg)
{
	const char *p = list, *prev = NULL;
	size_t prev_len = 0;

	while (1) {
		const char *semi = strchr(p, ';');
		size_t len = semi ? (size_t)(semi - p) : strlen(p), i;

		if (len == 0)
			return errbuf_set(msg, "SignedHeaders has an empty name");
		for (i = 0; i < len; i++)
			if (!tchar((unsigned char)p[i]) || isupper((unsigned char)p[i]))
				return errbuf_set(msg, "SignedHeaders names must be lowercase HTTP tokens");
		if (prev) {
			size_t m = prev_len < len ? prev_len : len;
			int c = memcmp(prev, p, m);

			if (c > 0 || (c == 0 && prev_len >= len))
				return errbuf_set(msg, "SignedHeaders must be sorted and unique");
		}
		prev = p;
		prev_len = len;
		if (!semi)
			break;
		p = semi + 1;
	}
	if (!name_in_list(list, "host"))
		return errbuf_set(msg, "'Host' must be a 'SignedHeader' in the AWS Authorization.");
	if (!name_in_list(list, "x-amz-date"))
		return errbuf_set(msg, "'X-Amz-Date' must be a 'SignedHeader' in the AWS Authorization.");
	if (name_in_list(list, "authorization"))
		return errbuf_set(msg, "'Authorization' cannot be a 'SignedHeader'.");
	return 0;
}

/* Constant-time equality of two NUL-terminated strings of public length. */
static bool secret_equal(const char *a, const char *b)
{
	size_t n = strlen(a);

	return n == strlen(b) && CRYPTO_memcmp(a, b, n) == 0;
}

enum sigv4_verdict sigv4_verify(const struct sigv4_input *in, int64_t now_s,
				sigv4_secret_fn secret_for, void *ctx,
				struct sigv4_scope *scope_out, struct errbuf *msg)
{
	struct auth_parts a;
	struct hlist l = {0};
	struct buf cr = BUF_INIT, sts = BUF_INIT;
	const char *auth, *amz_date, *secret, *token = NULL, *sent_token, *content_sha;
	size_t n_auth, n_date, n_token, n_sha, i;
	char payload[65], cr_hash[65], signature[65], signed_list[1024];
	int64_t t;
	enum sigv4_verdict v = SIGV4_INCOMPLETE;
	struct errbuf err;

	memset(&a, 0, sizeof(a));
	if (scope_out)
		memset(scope_out, 0, sizeof(*scope_out));
	if (msg)
		msg->msg[0] = '\0';
	if (!in) {
		errbuf_set(msg, "no request");
		return SIGV4_MISSING;
	}
	auth = find_header(in, "authorization", &n_auth);
	if (!auth || !*auth) {
		errbuf_set(msg, "Request is missing Authentication Token");
		return SIGV4_MISSING;
	}
	if (n_auth > 1) {
		errbuf_set(msg, "The request has more than one Authorization header");
		return SIGV4_INCOMPLETE;
	}
	if (parse_authorization(auth, &a, msg))
		return SIGV4_INCOMPLETE;
	if (scope_out) {
		memcpy(scope_out->access_key_id, a.akid, sizeof(a.akid));
		memcpy(scope_out->date, a.date, sizeof(a.date));
		memcpy(scope_out->region, a.region, sizeof(a.region));
		memcpy(scope_out->service, a.service, sizeof(a.service));
	}
	if (check_signed_list(a.signed_headers, msg))
		return SIGV4_INCOMPLETE;
	if (strlen(a.signature) != 64) {
		errbuf_set(msg, "Signature must be 64 hex digits");
		return SIGV4_INCOMPLETE;
	}
	amz_date = find_header(in, "x-amz-date", &n_date);
	if (!amz_date) {
		errbuf_set(msg, "Authorization header requires existence of a 'X-Amz-Date' header.");
		return SIGV4_INCOMPLETE;
	}
	if (n_date > 1 || sigv4_parse_time(amz_date, &t)) {
		errbuf_set(msg, "X-Amz-Date must be one YYYYMMDDTHHMMSSZ timestamp, not \"%.32s\"",
			   amz_date);
		return SIGV4_INCOMPLETE;
	}
	if (t > now_s + SIGV4_MAX_SKEW_S || t < now_s - SIGV4_MAX_SKEW_S) {
		char now_text[17] = "";

		sigv4_format_time(now_s, now_text);
		errbuf_set(msg, "Request has expired: signed at %s, now %s (more than 15 minutes "
			   "apart; check the clock)", amz_date, now_text);
		return SIGV4_EXPIRED;
	}
	if (strncmp(amz_date, a.date, 8) != 0) {
		errbuf_set(msg, "Date in Credential scope does not match YYYYMMDD from ISO-8601 "
			   "version of date from HTTP: '%s' != '%.8s'", a.date, amz_date);
		return SIGV4_MISMATCH;
	}
	if (in->region && strcmp(in->region, a.region) != 0) {
		errbuf_set(msg, "Credential should be scoped to a valid region, not '%.63s'.",
			   a.region);
		return SIGV4_MISMATCH;
	}
	if (in->service && strcmp(in->service, a.service) != 0) {
		errbuf_set(msg, "Credential should be scoped to correct service: '%.63s'.",
			   in->service);
		return SIGV4_MISMATCH;
	}
	secret = secret_for ? secret_for(ctx, a.akid, &token) : NULL;
	if (!secret || !*secret) {
		errbuf_set(msg, "The security token included in the request is invalid.");
		return SIGV4_UNKNOWN_KEY;
	}
	sent_token = find_header(in, "x-amz-security-token", &n_token);
	if (token && *token) {
		if (!sent_token || n_token != 1 || !secret_equal(sent_token, token)) {
			errbuf_set(msg, "The security token included in the request is invalid.");
			return SIGV4_UNKNOWN_KEY;
		}
	} else if (sent_token) {
		errbuf_set(msg, "The security token included in the request is invalid.");
		return SIGV4_UNKNOWN_KEY;
	}

	/* The headers named, in their order of arrival. */
	for (i = 0; i < in->n_headers; i++) {
		const char *name = in->headers[i].name, *value = in->headers[i].value;
		char lname[256];
		size_t j, len;

		if (!name || !value)
			continue;
		len = strlen(name);
		if (len >= sizeof(lname))
			continue;
		for (j = 0; j <= len; j++)
			lname[j] = (char)tolower((unsigned char)name[j]);
		if (!name_in_list(a.signed_headers, lname))
			continue;
		if (check_value(name, value, &err)) {
			errbuf_set(msg, "%s", err.msg);
			goto out;
		}
		if (hlist_add(&l, name, value, &err)) {
			errbuf_set(msg, "%s", err.msg);
			goto out;
		}
	}
	{
		/* every name listed must have come */
		const char *p = a.signed_headers;

		while (*p) {
			const char *semi = strchr(p, ';');
			size_t len = semi ? (size_t)(semi - p) : strlen(p), k;
			bool found = false;

			for (k = 0; k < l.n && !found; k++)
				found = strlen(l.v[k].lname) == len && strncmp(l.v[k].lname, p, len) == 0;
			if (!found) {
				errbuf_set(msg, "The request signature names header '%.*s', which the "
					   "request does not carry.", (int)(len > 64 ? 64 : len), p);
				goto out;
			}
			if (!semi)
				break;
			p = semi + 1;
		}
	}
	if (payload_hash(in, payload, &err)) {
		errbuf_set(msg, "%s", err.msg);
		goto out;
	}
	content_sha = find_header(in, "x-amz-content-sha256", &n_sha);
	if (content_sha) {
		struct hlist one = {0};
		bool same;

		if (hlist_add(&one, "x", content_sha, &err)) {
			errbuf_set(msg, "%s", err.msg);
			goto out;
		}
		same = n_sha == 1 && strcmp(one.v[0].value, payload) == 0;
		hlist_free(&one);
		if (!same) {
			errbuf_set(msg, "The provided 'x-amz-content-sha256' header does not match "
				   "what was computed.");
			v = SIGV4_MISMATCH;
			goto out;
		}
	}
	if (build_canonical(in, &l, payload, &cr, signed_list, sizeof(signed_list), &err)) {
		errbuf_set(msg, "%s", err.msg);
		goto out;
	}
	if (scope_out)
		sigv4_redact(cr.data, &scope_out->canonical_request);
	if (sha256_hex(cr.data, cr.len, cr_hash)) {
		errbuf_set(msg, "SHA-256 failed");
		goto out;
	}
	build_sts(&sts, amz_date, a.date, a.region, a.service, cr_hash);
	if (sts.oom || compute_signature(secret, a.date, a.region, a.service, sts.data,
					 signature)) {
		errbuf_set(msg, "out of memory");
		goto out;
	}
	for (i = 0; a.signature[i]; i++)
		a.signature[i] = (char)tolower((unsigned char)a.signature[i]);
	if (CRYPTO_memcmp(signature, a.signature, 64) != 0) {
		errbuf_set(msg, "The request signature we calculated does not match the signature "
			   "you provided. Check your AWS Secret Access Key and signing method. "
			   "Consult the service documentation for details.");
		v = SIGV4_MISMATCH;
		goto out;
	}
	v = SIGV4_OK;
out:
	OPENSSL_cleanse(signature, sizeof(signature));
	hlist_free(&l);
	if (cr.data)
		OPENSSL_cleanse(cr.data, cr.len);
	buf_free(&cr);
	buf_free(&sts);
	return v;
}
