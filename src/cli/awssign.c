/*
 * cli/awssign: `luascale aws-sign` — a debugging aid like `aws --debug`:
 * reads a raw HTTP request from a file, signs it with SigV4 using the
 * credentials of the environment and prints the canonical request, the
 * string to sign and the headers to send; `--verify` checks the request's
 * own Authorization header instead. Never prints the secret key or token.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "buf.h"
#include "cli/cli.h"
#include "wire/sigv4.h"

#define AWSSIGN_MAX_REQUEST (16u << 20)
#define AWSSIGN_MAX_HEADERS 256

static void awssign_usage(FILE *f)
{
	fputs("usage: luascale aws-sign --request FILE --region R --service S [--time T]\n"
	      "       luascale aws-sign --verify --request FILE [--region R] [--service S] [--time T]\n"
	      "\n"
	      "Signs the raw HTTP request in FILE (request line, headers, a blank line,\n"
	      "the body; CRLF or LF line ends; a Host header is required) with AWS\n"
	      "Signature Version 4 and prints the canonical request, the string to sign\n"
	      "and the headers to send (Authorization, X-Amz-Date, X-Amz-Security-Token),\n"
	      "labelled as `aws --debug` labels them. Compare them with what the service\n"
	      "says it expected in a SignatureDoesNotMatch answer.\n"
	      "\n"
	      "  --request FILE   the request; \"-\" reads standard input. Repeat it to\n"
	      "                   handle several (each block then starts \"Request: FILE\").\n"
	      "                   With a Content-Length header the body is exactly that long;\n"
	      "                   without one it is everything after the blank line.\n"
	      "  --region R       e.g. us-east-1\n"
	      "  --service S      the signing name: ec2, autoscaling, sts, ...\n"
	      "  --time T         the signing time, YYYYMMDDTHHMMSSZ (e.g. 20150830T123600Z),\n"
	      "                   RFC 3339 or unix seconds; default: the request's X-Amz-Date,\n"
	      "                   else now\n"
	      "  --verify         check the Authorization header FILE carries against the\n"
	      "                   environment's key instead of signing; --time is \"now\" for\n"
	      "                   the 15-minute window, --region/--service what the scope\n"
	      "                   must name. Exit 0 when it matches, 2 when not.\n"
	      "\n"
	      "Credentials come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and\n"
	      "AWS_SESSION_TOKEN (optional). The session token is printed as <redacted>.\n",
	      f);
}

/* A request read from a file: pointers into 'text' (owned). */
struct raw_request {
	char *text;
	char *method;
	const char *path, *query;
	struct sigv4_header headers[AWSSIGN_MAX_HEADERS];
	size_t n_headers;
	const char *body;
	size_t body_len;
};

static int bad(struct errbuf *err, const char *file, int line, const char *what)
{
	return errbuf_set(err, "%s:%d: %s", file, line, what);
}

/* Cuts the next line off *p (up to LF, a CR before it dropped). Returns
 * the line, or NULL at the end of the text. */
static char *next_line(char **p, char *end, bool *nul)
{
	char *line = *p, *lf;

	if (line >= end)
		return NULL;
	lf = memchr(line, '\n', (size_t)(end - line));
	*nul = memchr(line, '\0', (size_t)((lf ? lf : end) - line)) != NULL;
	if (!lf) {
		*p = end;
		/* the text is NUL-terminated, so the last line is too */
		return line;
	}
	*lf = '\0';
	if (lf > line && lf[-1] == '\r')
		lf[-1] = '\0';
	*p = lf + 1;
	return line;
}

static bool has_ctl(const char *s, bool allow_tab)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c < 0x20 && !(allow_tab && c == '\t')) || c == 0x7f)
			return true;
	}
	return false;
}

/* Parses the request line and headers of r->text (len bytes). */
static int parse_request(struct raw_request *r, size_t len, const char *file, struct errbuf *err)
{
	char *p = r->text, *end = r->text + len, *line, *sp1, *sp2, *target;
	const char *cl = NULL;
	int lineno = 1;
	bool blank = false, nul = false;

	line = next_line(&p, end, &nul);
	if (!line || !*line)
		return bad(err, file, 1, "empty request: expected \"METHOD /path HTTP/1.1\"");
	if (nul)
		return bad(err, file, 1, "the request line holds a NUL byte");
	if (has_ctl(line, false))
		return bad(err, file, 1, "the request line holds a control character");
	sp1 = strchr(line, ' ');
	sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2 || strchr(sp2 + 1, ' ') || strncmp(sp2 + 1, "HTTP/", 5) != 0 ||
	    sp1 == line || sp2 == sp1 + 1)
		return bad(err, file, 1, "the request line must be \"METHOD TARGET HTTP/1.1\", "
			   "one space apart");
	*sp1 = '\0';
	*sp2 = '\0';
	r->method = line;
	target = sp1 + 1;
	if (has_ctl(target, false))
		return bad(err, file, 1, "the request target holds a control character");
	if (strncasecmp(target, "http://", 7) == 0 || strncasecmp(target, "https://", 8) == 0) {
		/* absolute form, as AWS's examples write it: drop scheme and host */
		char *auth = strstr(target, "://") + 3;
		size_t n = strcspn(auth, "/?");

		if (n == 0)
			return bad(err, file, 1, "the absolute request target has no host");
		target = auth + n;
		if (*target == '?') {
			/* "https://host?q": the path is "/" */
			r->path = "/";
			r->query = target + 1;
			goto headers;
		}
		if (!*target) {
			r->path = "/";
			goto headers;
		}
	} else if (*target != '/') {
		return bad(err, file, 1, "the request target must start with '/' or be an "
			   "absolute http(s) URL");
	}
	r->path = target;
	{
		char *q = strchr(target, '?');

		if (q) {
			*q = '\0';
			r->query = q + 1;
		}
	}
headers:
	if (strchr(r->path, '#') || (r->query && strchr(r->query, '#')))
		return bad(err, file, 1, "the request target holds a fragment ('#')");
	while ((line = next_line(&p, end, &nul)) != NULL) {
		char *colon, *v, *e;

		lineno++;
		if (nul)
			return bad(err, file, lineno, "the header line holds a NUL byte");
		if (!*line) {
			blank = true;
			break;
		}
		if (*line == ' ' || *line == '\t')
			return bad(err, file, lineno, "folded header lines (starting with a space or "
				   "tab) are not allowed");
		colon = strchr(line, ':');
		if (!colon || colon == line)
			return bad(err, file, lineno, "expected \"Name: value\"");
		*colon = '\0';
		for (e = line; *e; e++)
			if (*e == ' ' || *e == '\t')
				return bad(err, file, lineno, "a header name cannot hold spaces "
					   "(no space before ':')");
		if (has_ctl(line, false))
			return bad(err, file, lineno, "the header name holds a control character");
		v = colon + 1;
		if (has_ctl(v, true))
			return bad(err, file, lineno, "the header value holds a control character "
				   "(a bare CR?)");
		while (*v == ' ' || *v == '\t')
			v++;
		e = v + strlen(v);
		while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
			*--e = '\0';
		if (r->n_headers == AWSSIGN_MAX_HEADERS)
			return bad(err, file, lineno, "more than 256 headers");
		r->headers[r->n_headers].name = line;
		r->headers[r->n_headers].value = v;
		r->n_headers++;
		if (strcasecmp(line, "content-length") == 0) {
			if (cl)
				return bad(err, file, lineno, "two Content-Length headers");
			cl = v;
		}
	}
	r->body = blank ? p : end;
	r->body_len = (size_t)(end - r->body);
	if (cl) {
		char *stop;
		unsigned long long n;

		if (!*cl || strspn(cl, "0123456789") != strlen(cl))
			return errbuf_set(err, "%s: Content-Length \"%.32s\" is not a number", file, cl);
		n = strtoull(cl, &stop, 10);
		if (n > r->body_len)
			return errbuf_set(err, "%s: Content-Length says %llu bytes, the body after the "
					  "blank line (line %d) has %zu", file, n, lineno, r->body_len);
		if (n < r->body_len)
			return errbuf_set(err, "%s: %zu bytes follow the body's %llu (Content-Length); "
					  "remove them or fix Content-Length", file,
					  r->body_len - (size_t)n, n);
	}
	return 0;
}

/* The environment's key, for --verify. */
struct env_key {
	const struct aws_credentials *c;
};

static const char *env_secret(void *ctx, const char *akid, const char **token)
{
	const struct env_key *k = ctx;

	*token = k->c->session_token;
	return strcmp(akid, k->c->access_key_id) == 0 ? k->c->secret_access_key : NULL;
}

static int env_copy(char *dst, size_t size, const char *name, bool required)
{
	const char *v = getenv(name);

	dst[0] = '\0';
	if (!v || !*v) {
		if (required) {
			fprintf(stderr, "luascale aws-sign: %s is not set\n", name);
			return -1;
		}
		return 0;
	}
	if (strlen(v) >= size) {
		fprintf(stderr, "luascale aws-sign: %s is longer than %zu bytes\n", name, size - 1);
		return -1;
	}
	if (has_ctl(v, false)) {
		fprintf(stderr, "luascale aws-sign: %s holds a control character\n", name);
		return -1;
	}
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

static int parse_time_arg(const char *text, int64_t *out)
{
	if (sigv4_parse_time(text, out) == 0)
		return 0;
	return cli_parse_now(text, out) == 0 ? 0 : -1;
}

static void print_redacted(const char *label, const char *text)
{
	struct buf b = BUF_INIT;

	sigv4_redact(text, &b);
	printf("%s:\n%s\n", label, b.data ? b.data : "");
	buf_free(&b);
}

struct awssign_opts {
	const char *region, *service, *time_text;
	bool verify;
	int64_t t;
};

/* Signs or verifies one request file; prints its block. Returns an exit status. */
static int process(const char *file, const struct awssign_opts *o,
		   const struct aws_credentials *c, bool banner)
{
	struct raw_request *r = calloc(1, sizeof(*r));
	struct buf text = BUF_INIT;
	struct sigv4_input in;
	struct errbuf err;
	int64_t t = o->t;
	size_t len;
	int rc = EXIT_INPUT;

	if (!r) {
		fprintf(stderr, "luascale aws-sign: out of memory\n");
		return EXIT_INPUT;
	}
	if (strcmp(file, "-") == 0) {
		char chunk[65536];
		size_t n;

		while ((n = fread(chunk, 1, sizeof(chunk), stdin)) > 0) {
			if (text.len + n > AWSSIGN_MAX_REQUEST) {
				fprintf(stderr, "luascale aws-sign: standard input: larger than %u bytes\n",
					AWSSIGN_MAX_REQUEST);
				goto out;
			}
			buf_append(&text, chunk, n);
		}
		buf_append(&text, "", 0);
	} else if (buf_read_file(&text, file, AWSSIGN_MAX_REQUEST, &err) ||
		   buf_append(&text, "", 0)) {
		fprintf(stderr, "luascale aws-sign: %s\n", text.oom ? "out of memory" : err.msg);
		goto out;
	}
	if (text.oom) {
		fprintf(stderr, "luascale aws-sign: out of memory\n");
		goto out;
	}
	len = text.len;
	r->text = buf_take(&text);
	if (!r->text || parse_request(r, len, file, &err)) {
		fprintf(stderr, "luascale aws-sign: %s\n", r->text ? err.msg : "out of memory");
		goto out;
	}
	memset(&in, 0, sizeof(in));
	in.method = r->method;
	in.path = r->path;
	in.query = r->query;
	in.headers = r->headers;
	in.n_headers = r->n_headers;
	in.body = r->body;
	in.body_len = r->body_len;
	in.region = o->region;
	in.service = o->service;
	if (banner)
		printf("Request: %s\n", file);

	if (o->verify) {
		struct env_key k = {c};
		struct sigv4_scope scope;
		struct errbuf msg;
		enum sigv4_verdict v;

		if (!o->time_text)
			t = (int64_t)time(NULL);
		v = sigv4_verify(&in, t, env_secret, &k, &scope, &msg);
		if (scope.canonical_request.len)
			print_redacted("CanonicalRequest", scope.canonical_request.data);
		if (v == SIGV4_OK) {
			printf("Verified: the signature matches (key %s, scope %s/%s/%s)\n",
			       scope.access_key_id, scope.date, scope.region, scope.service);
			rc = EXIT_OK;
		} else {
			printf("%s: %s\n", sigv4_verdict_code(v, o->service ? o->service : scope.service),
			       msg.msg);
		}
		sigv4_scope_free(&scope);
		goto out;
	}

	if (!o->time_text) {
		size_t i;
		const char *amz = NULL;

		for (i = 0; i < r->n_headers; i++)
			if (strcasecmp(r->headers[i].name, "x-amz-date") == 0)
				amz = r->headers[i].value;
		if (amz && sigv4_parse_time(amz, &t)) {
			fprintf(stderr, "luascale aws-sign: %s: X-Amz-Date \"%.32s\" is not "
				"YYYYMMDDTHHMMSSZ (or give --time)\n", file, amz);
			goto out;
		}
		if (!amz)
			t = (int64_t)time(NULL);
	}
	in.time_s = t;
	{
		struct sigv4_output so;

		if (sigv4_sign(&in, c, &so, &err)) {
			fprintf(stderr, "luascale aws-sign: %s: %s\n", file, err.msg);
			goto out;
		}
		print_redacted("CanonicalRequest", so.canonical_request.data);
		printf("StringToSign:\n%s\n", so.string_to_sign.data);
		printf("Signature:\n%s\n", so.signature);
		printf("Headers to send:\n");
		printf("X-Amz-Date: %s\n", so.amz_date);
		if (c->session_token[0])
			printf("X-Amz-Security-Token: <redacted>\n");
		printf("Authorization: %s\n", so.authorization);
		sigv4_output_free(&so);
	}
	rc = EXIT_OK;
out:
	buf_free(&text);
	free(r->text);
	free(r);
	return rc;
}

int cli_aws_sign(int argc, char **argv)
{
	static const struct option opts[] = {
		{"request", required_argument, NULL, 'r'},
		{"region", required_argument, NULL, 'R'},
		{"service", required_argument, NULL, 's'},
		{"time", required_argument, NULL, 't'},
		{"verify", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char **files = calloc((size_t)(argc > 0 ? argc : 1), sizeof(*files));
	struct awssign_opts o;
	struct aws_credentials c;
	size_t n_files = 0, i;
	int opt, rc = EXIT_INPUT;

	if (!files) {
		fprintf(stderr, "luascale aws-sign: out of memory\n");
		return EXIT_INPUT;
	}
	memset(&o, 0, sizeof(o));
	memset(&c, 0, sizeof(c));
	optind = 1;
	while ((opt = getopt_long(argc, argv, "r:R:s:t:vh", opts, NULL)) != -1) {
		switch (opt) {
		case 'r': files[n_files++] = optarg; break;
		case 'R': o.region = optarg; break;
		case 's': o.service = optarg; break;
		case 't': o.time_text = optarg; break;
		case 'v': o.verify = true; break;
		case 'h': awssign_usage(stdout); rc = EXIT_OK; goto out;
		default: awssign_usage(stderr); rc = EXIT_USAGE; goto out;
		}
	}
	rc = EXIT_USAGE;
	if (optind < argc) {
		fprintf(stderr, "luascale aws-sign: unexpected argument \"%s\"\n", argv[optind]);
		goto out;
	}
	if (!n_files || (!o.verify && (!o.region || !o.service))) {
		fprintf(stderr, "luascale aws-sign: --request FILE%s required\n",
			o.verify ? " is" : ", --region R and --service S are");
		awssign_usage(stderr);
		goto out;
	}
	if (o.time_text && parse_time_arg(o.time_text, &o.t)) {
		fprintf(stderr, "luascale aws-sign: --time \"%s\": expected YYYYMMDDTHHMMSSZ, "
			"RFC 3339 or unix seconds\n", o.time_text);
		goto out;
	}
	rc = EXIT_INPUT;
	if (env_copy(c.access_key_id, sizeof(c.access_key_id), "AWS_ACCESS_KEY_ID", true) ||
	    env_copy(c.secret_access_key, sizeof(c.secret_access_key), "AWS_SECRET_ACCESS_KEY",
		     true) ||
	    env_copy(c.session_token, sizeof(c.session_token), "AWS_SESSION_TOKEN", false))
		goto out;
	snprintf(c.source, sizeof(c.source), "environment");
	rc = EXIT_OK;
	for (i = 0; i < n_files; i++)
		if (process(files[i], &o, &c, n_files > 1) != EXIT_OK)
			rc = EXIT_INPUT;
out:
	aws_credentials_wipe(&c);
	free(files);
	return rc;
}
