/*
 * fuzz_cloudhttp_text: the text a cloud or a caller hands the HTTP layer —
 * cloudhttp_redact_url(), cloudhttp_url_parse(), cloudhttp_parse_retry_after()
 * and cloudhttp_header_is_secret() — on arbitrary bytes. Redaction is
 * idempotent, fits any buffer and never keeps a secret key's value; a
 * parsed URL's parts lie inside it; a delay is never negative.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz.h"
#include "providers/cloudhttp/cloudhttp.h"

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "cloudhttp invariant broken: %s\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *red, *again, small[7];
	struct cloudhttp_url u;
	struct errbuf err = {{0}};
	size_t n, m, cut;
	int64_t ms = -1;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	/* redaction */
	n = cloudhttp_redact_url(text, NULL, 0);
	red = malloc(n + 1);
	again = malloc(n + 1);
	if (red && again) {
		check(cloudhttp_redact_url(text, red, n + 1) == n && strlen(red) == n,
		      "the length returned is the length written");
		m = cloudhttp_redact_url(red, again, n + 1);
		check(m == n && strcmp(red, again) == 0, "redaction is idempotent");
		cut = cloudhttp_redact_url(text, small, sizeof(small));
		check(cut == n && strlen(small) < sizeof(small) &&
		      strncmp(small, red, strlen(small)) == 0, "a truncated copy is a prefix");
		/* a secret first query key keeps no value ("https://h/?sig=v") */
		{
			size_t q = strcspn(red, "?# \t");
			const char *p = red + q;

			if (*p == '?' && strncasecmp(p + 1, "sig=", 4) == 0 && p[5] &&
			    !strchr("&;# \t", p[5]))
				check(strncmp(p + 5, "REDACTED", 8) == 0, "sig= is redacted");
		}
	}
	free(red);
	free(again);
	/* URLs */
	if (cloudhttp_url_parse(text, &u, &err) == 0) {
		check(u.port >= 1 && u.port <= 65535, "a port in range");
		check(u.host[0] && strlen(u.authority) >= strlen(u.host), "a host");
		check(!strchr(u.authority, '@'), "no user information");
		if (u.path)
			check(u.path >= text && u.path + u.path_len <= text + size && u.path[0] == '/',
			      "the path inside the URL");
		if (u.query)
			check(u.query >= text && u.query + u.query_len <= text + size &&
			      u.query[-1] == '?', "the query inside the URL");
	} else {
		check(err.msg[0] != '\0', "a refusal says why");
	}
	/* Retry-After */
	if (cloudhttp_parse_retry_after(text, 1700000000, &ms) == 0)
		check(ms >= 0, "a delay is not negative");
	(void)cloudhttp_header_is_secret(text);
	free(text);
	return 0;
}
