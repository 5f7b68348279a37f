/*
 * profile: the AWS shared credentials and config files (~/.aws/credentials,
 * ~/.aws/config) read the way the AWS SDKs read them, reduced to the one
 * selected profile's settings that luascale uses. Reads files; calls nothing.
 */
#ifndef LUASCALE_AWS_PROFILE_H
#define LUASCALE_AWS_PROFILE_H

#include <stdbool.h>

#include "errbuf.h"
#include "providers/aws/endpoints.h"

struct aws_profile {
	char name[128];               /* the selected profile */
	bool found;                   /* a section of that name exists in a file */
	char credentials_file[4096];  /* the paths read ("" when none applied) */
	char config_file[4096];
	/* static keys; 'keys_from' names the file they came from */
	char access_key_id[128];
	char secret_access_key[128];
	char session_token[8192];
	char keys_from[4096];
	char region[64];
	/* web identity (role_arn + web_identity_token_file) */
	char role_arn[2048];
	char web_identity_token_file[4096];
	char role_session_name[128];
	struct aws_endpoint_profile endpoints;
};

/* What selects and locates the files. Every field may be NULL. */
struct aws_profile_opts {
	const struct aws_env *env;  /* AWS_PROFILE, AWS_DEFAULT_PROFILE,
				     * AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE, HOME */
	const char *home;           /* overrides HOME */
	const char *profile;        /* overrides AWS_PROFILE (the provider's config) */
};

/*
 * Fills 'p' with the selected profile (opts->profile, else AWS_PROFILE,
 * else AWS_DEFAULT_PROFILE, else "default") from the config file
 * (AWS_CONFIG_FILE, default ~/.aws/config: sections "[profile NAME]", and
 * "[default]" for the default profile) and the credentials file
 * (AWS_SHARED_CREDENTIALS_FILE, default ~/.aws/credentials: sections
 * "[NAME]"). A key set in both comes from the credentials file. Lines
 * starting with '#' or ';' are comments, as is the rest of a line after
 * whitespace and '#' or ';'; blanks around names and values are dropped.
 * Returns 0, or -1 with "FILE:LINE: why" in 'err' for an unreadable or
 * malformed file, a profile that names a missing services section, or a
 * profile chosen by name that neither file holds. Missing files are no error.
 */
int aws_profile_load(struct aws_profile *p, const struct aws_profile_opts *o, struct errbuf *err);

/* Overwrites the secrets in 'p' with zeros. */
void aws_profile_wipe(struct aws_profile *p);

#endif
