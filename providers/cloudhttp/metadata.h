/*
 * metadata: the client of a cloud's link-local metadata server (GCE's
 * metadata server, Azure's and AWS's instance metadata services): its base
 * URL, the header every request carries, one attempt's timeout and the
 * retries, and bounded plain-text answers. Which paths, which proof that an
 * answer came from the metadata server, and the wording of what went wrong
 * are the provider's (gceauth, azureauth, aws/credentials).
 */
#ifndef LUASCALE_METADATA_H
#define LUASCALE_METADATA_H

#include <stddef.h>

#include "errbuf.h"
#include "providers/cloudhttp/cloudhttp.h"

struct metadata_client {
	struct cloudhttp *http;      /* borrowed */
	char base[1024];             /* "http://host[:port]", no trailing '/' */
	const char *header, *value;  /* sent with every request ("Metadata-Flavor",
				      * "Google"); NULL: none. Static. */
	long timeout_ms;             /* one attempt's */
	int attempts;                /* tries while there is no answer or a 5xx */
	/* non-NULL: cloudhttp_call()'s retries under this classifier instead
	 * of 'attempts' */
	enum cloudhttp_verdict (*classify)(void *ctx, const struct cloudhttp_response *r);
};

/*
 * Zeroes 'm' and sets its client and its base URL 'base' without trailing
 * slashes ('base' is checked by the caller). Returns 0, or -1 with "WHAT
 * is too long". The caller then sets the header, timeout and retries.
 */
int metadata_init(struct metadata_client *m, struct cloudhttp *http, const char *base,
		  const char *what, struct errbuf *err);

/*
 * Sends METHOD base+'path' with the client's header and, when 'name' is
 * not NULL, "name: value". Returns 0 with the last answer in 'resp',
 * whatever its status (wipe it with oauth_wipe_response); -1 with
 * cloudhttp's reason when the last attempt got none; -2 with "out of
 * memory" when the request could not be built. 'resp' is wiped between
 * attempts.
 */
int metadata_send(const struct metadata_client *m, const char *method, const char *path,
		  const char *name, const char *value, struct cloudhttp_response *resp,
		  struct errbuf *err);

/*
 * The first line of a plain-text answer 'r', without its trailing blanks,
 * into 'out' ('len' bytes). Returns 0; -1 when it is empty or does not
 * fit; -2 when it holds a character that is not a letter, a digit or one
 * of 'allowed' ('out' is then unchanged).
 */
int metadata_text(const struct cloudhttp_response *r, const char *allowed, char *out,
		  size_t len);

#endif
