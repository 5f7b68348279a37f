/*
 * cli/gcejwt: `luascale gce-jwt` — a hidden debugging aid: prints the
 * RS256 JWT bearer assertion the GCE provider would send for a
 * service-account key at a given time. Prints no key and no token.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "cli/cli.h"
#include "providers/gce/gceauth.h"

static void gcejwt_usage(FILE *f)
{
	fputs("usage: luascale gce-jwt --key FILE [--time T] [--scope S] [--aud URL]\n"
	      "\n"
	      "Prints the signed assertion (header.claims.signature, base64url) that the\n"
	      "GCE provider exchanges for an access token with the service-account JSON\n"
	      "key FILE: iss is the key's client_email, aud its token_uri (or URL), iat\n"
	      "the time T (RFC 3339 or unix seconds; default now), exp T + 3600, scope S\n"
	      "(default " GCE_AUTH_DEFAULT_SCOPE ").\n"
	      "The assertion is a credential for an hour: treat it as a secret.\n",
	      f);
}

int cli_gce_jwt(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "key", required_argument, NULL, 'k' },   { "time", required_argument, NULL, 't' },
		{ "scope", required_argument, NULL, 's' }, { "aud", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },	   { NULL, 0, NULL, 0 },
	};
	const char *key_path = NULL, *scope = NULL, *aud = NULL;
	struct errbuf err = { "" };
	struct buf out = BUF_INIT;
	struct gce_jwt_key *key;
	int64_t now = (int64_t)time(NULL);
	int c, rc = EXIT_INPUT;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'k':
			key_path = optarg;
			break;
		case 't':
			if (cli_parse_now(optarg, &now) != 0) {
				fprintf(stderr, "luascale gce-jwt: --time \"%s\" is neither RFC 3339 "
					"nor unix seconds (1970 to 9999)\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 's':
			scope = optarg;
			break;
		case 'a':
			aud = optarg;
			break;
		case 'h':
			gcejwt_usage(stdout);
			return EXIT_OK;
		default:
			gcejwt_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (!key_path || optind != argc) {
		gcejwt_usage(stderr);
		return EXIT_USAGE;
	}
	if (aud && gce_auth_check_token_url(aud, &err) < 0) {
		fprintf(stderr, "luascale gce-jwt: --aud: %s\n", err.msg);
		return EXIT_USAGE;
	}
	key = gce_jwt_key_load(key_path, &err);
	if (!key) {
		fprintf(stderr, "luascale gce-jwt: %s\n", err.msg);
		return EXIT_INPUT;
	}
	if (gce_jwt_assertion(key, aud, now, scope, &out, &err) < 0) {
		fprintf(stderr, "luascale gce-jwt: %s\n", err.msg);
	} else {
		printf("%s\n", out.data);
		rc = EXIT_OK;
	}
	buf_free(&out);
	gce_jwt_key_free(key);
	return rc;
}
