/*
 * profile: reads the AWS shared config and credentials files (INI with
 * "[profile x]" sections, nested "service =\n  key = value" blocks and
 * comments) and keeps the selected profile's settings. Does not decide
 * which credential source wins: credentials.c does.
 */
#include "providers/aws/profile.h"

#include <ctype.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "buf.h"
#include "providers/cloudhttp/credcache.h"

#define FILE_MAX (1024 * 1024)

enum section_kind { SEC_NONE, SEC_PROFILE, SEC_SERVICES, SEC_OTHER };

struct entry {
	enum section_kind kind;
	char *section; /* profile or services name */
	char *key;     /* lowercased */
	char *subkey;  /* nested key (lowercased) or NULL */
	char *value;
	int line;
};

struct ini {
	struct entry *v;
	size_t n, cap;
	char path[4096];
};

static char *dup_range(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static void lower(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

static void ini_free(struct ini *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		struct entry *e = &f->v[i];

		if (e->value)
			credcache_wipe(e->value, strlen(e->value));
		free(e->section);
		free(e->key);
		free(e->subkey);
		free(e->value);
	}
	free(f->v);
	memset(f, 0, sizeof(*f));
}

static const char *skip_blank(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

static const char *trim_end(const char *s, const char *end)
{
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	return end;
}

/* End of a value: a '#' or ';' after a blank starts a comment. */
static const char *value_end(const char *s, const char *end)
{
	const char *p;

	for (p = s; p < end; p++)
		if ((*p == '#' || *p == ';') && p > s && (p[-1] == ' ' || p[-1] == '\t'))
			return trim_end(s, p);
	return trim_end(s, end);
}

static int add_entry(struct ini *f, enum section_kind kind, const char *section, const char *key,
		     size_t keylen, const char *subkey, size_t sublen, const char *val,
		     size_t vallen, int line, struct errbuf *err)
{
	struct entry *e;

	if (f->n == f->cap) {
		size_t ncap = f->cap ? f->cap * 2 : 16;
		struct entry *nv = realloc(f->v, ncap * sizeof(*nv));

		if (!nv)
			return errbuf_set(err, "%s: out of memory", f->path);
		f->v = nv;
		f->cap = ncap;
	}
	e = &f->v[f->n];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->line = line;
	e->section = dup_range(section, strlen(section));
	e->key = dup_range(key, keylen);
	e->subkey = subkey ? dup_range(subkey, sublen) : NULL;
	e->value = dup_range(val, vallen);
	if (!e->section || !e->key || !e->value || (subkey && !e->subkey)) {
		free(e->section);
		free(e->key);
		free(e->subkey);
		free(e->value);
		return errbuf_set(err, "%s: out of memory", f->path);
	}
	lower(e->key);
	if (e->subkey)
		lower(e->subkey);
	f->n++;
	return 0;
}

/*
 * Parses 'text' ('is_config': section names "profile x", "default",
 * "services x"; else every section is a profile).
 */
static int ini_parse(struct ini *f, const char *text, size_t len, int is_config, struct errbuf *err)
{
	const char *p = text, *end = text + len;
	enum section_kind kind = SEC_NONE;
	char section[256] = "";
	const char *parent = NULL; /* the last key with an empty value */
	size_t parent_len = 0;
	int line = 0, has_opt = 0; /* a setting seen in this section */

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *ls, *le, *s;
		int indented;

		if (!eol)
			eol = end;
		line++;
		le = eol;
		if (le > p && le[-1] == '\r')
			le--;
		ls = p;
		p = eol < end ? eol + 1 : end;
		indented = ls < le && (*ls == ' ' || *ls == '\t');
		s = skip_blank(ls, le);
		if (s == le || *s == '#' || *s == ';')
			continue;
		if (!indented && *s == '[') {
			const char *close = memchr(s, ']', (size_t)(le - s));
			const char *n, *ne, *rest;
			size_t nl;

			if (!close)
				return errbuf_set(err, "%s:%d: section header without ']'", f->path, line);
			rest = skip_blank(close + 1, le);
			if (rest < le && *rest != '#' && *rest != ';')
				return errbuf_set(err, "%s:%d: text after the section header", f->path,
						  line);
			n = skip_blank(s + 1, close);
			ne = trim_end(n, close);
			nl = (size_t)(ne - n);
			parent = NULL;
			has_opt = 0;
			kind = SEC_OTHER;
			if (!is_config) {
				kind = SEC_PROFILE;
			} else if (nl == 7 && strncmp(n, "default", 7) == 0) {
				kind = SEC_PROFILE;
			} else if (nl > 8 && strncmp(n, "profile", 7) == 0 && (n[7] == ' ' || n[7] == '\t')) {
				kind = SEC_PROFILE;
				n = skip_blank(n + 8, ne);
			} else if (nl > 9 && strncmp(n, "services", 8) == 0 &&
				   (n[8] == ' ' || n[8] == '\t')) {
				kind = SEC_SERVICES;
				n = skip_blank(n + 9, ne);
			}
			nl = (size_t)(ne - n);
			if (kind != SEC_OTHER && (nl == 0 || nl >= sizeof(section)))
				return errbuf_set(err, "%s:%d: %s section name", f->path, line,
						  nl ? "overlong" : "empty");
			if (kind != SEC_OTHER) {
				memcpy(section, n, nl);
				section[nl] = '\0';
			}
			continue;
		}
		{
			const char *eq = memchr(s, '=', (size_t)(le - s));
			const char *ke, *v, *ve;

			if (kind == SEC_NONE)
				return errbuf_set(err, "%s:%d: a setting before any [section]", f->path,
						  line);
			if (!eq) {
				/* a continuation line of a multi-line value */
				if (indented && has_opt)
					continue;
				return errbuf_set(err, "%s:%d: expected \"name = value\"", f->path, line);
			}
			ke = trim_end(s, eq);
			if (ke == s)
				return errbuf_set(err, "%s:%d: a setting without a name", f->path, line);
			v = skip_blank(eq + 1, le);
			ve = value_end(v, le);
			if (kind == SEC_OTHER)
				continue;
			if (!has_opt)
				indented = 0; /* the first setting may be indented */
			has_opt = 1;
			if (indented && parent) {
				if (add_entry(f, kind, section, parent, parent_len, s, (size_t)(ke - s), v,
					      (size_t)(ve - v), line, err) < 0)
					return -1;
				continue;
			}
			if (indented)
				continue; /* continuation text that happens to hold '=' */
			if (ve == v) {
				parent = s;
				parent_len = (size_t)(ke - s);
			} else {
				parent = NULL;
			}
			if (add_entry(f, kind, section, s, (size_t)(ke - s), NULL, 0, v,
				      (size_t)(ve - v), line, err) < 0)
				return -1;
		}
	}
	return 0;
}

/* Reads and parses 'path'; a missing file, or /dev/null (how the SDKs'
 * users switch a file off), leaves 'f' empty. Returns 1 when the file was
 * read, 0 when it does not exist, -1 on error. */
static int ini_load(struct ini *f, const char *path, int is_config, struct errbuf *err)
{
	struct buf b = BUF_INIT;
	struct stat st;
	int rc;

	snprintf(f->path, sizeof(f->path), "%s", path);
	if (stat(path, &st) < 0 && (errno == ENOENT || errno == ENOTDIR))
		return 0;
	if (!strcmp(path, "/dev/null"))
		return 0;
	if (buf_read_file(&b, path, FILE_MAX, err) < 0)
		return -1;
	rc = ini_parse(f, b.data ? b.data : "", b.len, is_config, err);
	if (b.data)
		credcache_wipe(b.data, b.len);
	buf_free(&b);
	return rc < 0 ? -1 : 1;
}

/* The last value of 'key' (and 'subkey', or a top-level key when NULL) in
 * section 'name' of 'kind', or NULL. */
static const struct entry *ini_get(const struct ini *f, enum section_kind kind, const char *name,
				   const char *key, const char *subkey)
{
	const struct entry *found = NULL;
	size_t i;

	for (i = 0; i < f->n; i++) {
		const struct entry *e = &f->v[i];

		if (e->kind != kind || strcmp(e->section, name) != 0 || strcmp(e->key, key) != 0)
			continue;
		if ((subkey == NULL) != (e->subkey == NULL))
			continue;
		if (subkey && strcmp(e->subkey, subkey) != 0)
			continue;
		found = e;
	}
	return found;
}

static int has_section(const struct ini *f, enum section_kind kind, const char *name)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->v[i].kind == kind && strcmp(f->v[i].section, name) == 0)
			return 1;
	return 0;
}

/* The profile's value of 'key': the credentials file first, then config. */
static const struct entry *prof_get(const struct ini *cred, const struct ini *conf, const char *name,
				    const char *key, const char **file)
{
	const struct entry *e = ini_get(cred, SEC_PROFILE, name, key, NULL);

	if (e) {
		*file = cred->path;
		return e;
	}
	e = ini_get(conf, SEC_PROFILE, name, key, NULL);
	*file = conf->path;
	return e;
}

static int set_field(char *out, size_t len, const struct entry *e, const char *file, struct errbuf *err)
{
	size_t n;

	if (!e)
		return 0;
	n = strlen(e->value);
	if (n >= len)
		return errbuf_set(err, "%s:%d: %s is longer than %zu bytes", file, e->line, e->key,
				  len - 1);
	memcpy(out, e->value, n + 1);
	return 0;
}

/* Expands a leading "~/" with 'home'. */
static int expand_home(char *out, size_t len, const char *path, const char *home, struct errbuf *err)
{
	int n;

	if (path[0] == '~' && (path[1] == '/' || path[1] == '\0')) {
		if (!home)
			return errbuf_set(err, "%s: HOME is not set to expand '~'", path);
		n = snprintf(out, len, "%s%s", home, path + 1);
	} else {
		n = snprintf(out, len, "%s", path);
	}
	if (n < 0 || (size_t)n >= len)
		return errbuf_set(err, "%.100s...: path too long", path);
	return 0;
}

int aws_profile_load(struct aws_profile *p, const struct aws_profile_opts *o, struct errbuf *err)
{
	static const struct aws_profile_opts none;
	const struct aws_env *env;
	struct ini cred = { 0 }, conf = { 0 };
	const char *name, *home, *path, *file = "";
	const struct entry *e;
	bool named;
	int rc = -1, have_conf = 0, have_cred = 0;
	size_t i;

	if (!o)
		o = &none;
	env = o->env;
	memset(p, 0, sizeof(*p));
	name = o->profile && *o->profile ? o->profile : NULL;
	if (!name)
		name = aws_env_get(env, "AWS_PROFILE");
	if (!name)
		name = aws_env_get(env, "AWS_DEFAULT_PROFILE");
	named = name != NULL;
	if (!name)
		name = "default";
	if (strlen(name) >= sizeof(p->name))
		return errbuf_set(err, "AWS profile name longer than %zu bytes", sizeof(p->name) - 1);
	snprintf(p->name, sizeof(p->name), "%s", name);
	home = o->home && *o->home ? o->home : aws_env_get(env, "HOME");

	path = aws_env_get(env, "AWS_CONFIG_FILE");
	if (path || home) {
		if (expand_home(p->config_file, sizeof(p->config_file), path ? path : "~/.aws/config",
				home, err) < 0)
			goto out;
		have_conf = ini_load(&conf, p->config_file, 1, err);
		if (have_conf < 0)
			goto out;
	}
	path = aws_env_get(env, "AWS_SHARED_CREDENTIALS_FILE");
	if (path || home) {
		if (expand_home(p->credentials_file, sizeof(p->credentials_file),
				path ? path : "~/.aws/credentials", home, err) < 0)
			goto out;
		have_cred = ini_load(&cred, p->credentials_file, 0, err);
		if (have_cred < 0)
			goto out;
	}
	if (!have_conf)
		p->config_file[0] = '\0';
	if (!have_cred)
		p->credentials_file[0] = '\0';
	p->found = has_section(&cred, SEC_PROFILE, name) || has_section(&conf, SEC_PROFILE, name);
	if (!p->found) {
		if (named) {
			errbuf_set(err, "AWS profile \"%s\" is in neither %s nor %s", name,
				   have_cred ? p->credentials_file : "the credentials file (none)",
				   have_conf ? p->config_file : "the config file (none)");
			goto out;
		}
		rc = 0;
		goto out;
	}
	/* keys come as a pair from one file, as the SDKs take them */
	e = ini_get(&cred, SEC_PROFILE, name, "aws_access_key_id", NULL);
	{
		const struct ini *kf = e ? &cred : &conf;
		const struct entry *ak = ini_get(kf, SEC_PROFILE, name, "aws_access_key_id", NULL);
		const struct entry *sk = ini_get(kf, SEC_PROFILE, name, "aws_secret_access_key", NULL);
		const struct entry *st = ini_get(kf, SEC_PROFILE, name, "aws_session_token", NULL);

		if (!st)
			st = ini_get(kf, SEC_PROFILE, name, "aws_security_token", NULL);
		if (ak && !sk) {
			errbuf_set(err, "%s:%d: profile \"%s\" has aws_access_key_id but no "
				   "aws_secret_access_key", kf->path, ak->line, name);
			goto out;
		}
		if (ak && (set_field(p->access_key_id, sizeof(p->access_key_id), ak, kf->path, err) < 0 ||
			   set_field(p->secret_access_key, sizeof(p->secret_access_key), sk, kf->path,
				     err) < 0 ||
			   set_field(p->session_token, sizeof(p->session_token), st, kf->path, err) < 0))
			goto out;
		if (ak)
			snprintf(p->keys_from, sizeof(p->keys_from), "%s", kf->path);
	}
	e = prof_get(&cred, &conf, name, "region", &file);
	if (set_field(p->region, sizeof(p->region), e, file, err) < 0)
		goto out;
	if (e && aws_region_validate(p->region, err) < 0) {
		errbuf_prefix(err, "%s:%d", file, e->line);
		goto out;
	}
	e = prof_get(&cred, &conf, name, "role_arn", &file);
	if (set_field(p->role_arn, sizeof(p->role_arn), e, file, err) < 0)
		goto out;
	e = prof_get(&cred, &conf, name, "web_identity_token_file", &file);
	if (set_field(p->web_identity_token_file, sizeof(p->web_identity_token_file), e, file, err) < 0)
		goto out;
	e = prof_get(&cred, &conf, name, "role_session_name", &file);
	if (set_field(p->role_session_name, sizeof(p->role_session_name), e, file, err) < 0)
		goto out;
	e = prof_get(&cred, &conf, name, "endpoint_url", &file);
	if (set_field(p->endpoints.endpoint_url, sizeof(p->endpoints.endpoint_url), e, file, err) < 0)
		goto out;
	e = prof_get(&cred, &conf, name, "ignore_configured_endpoint_urls", &file);
	p->endpoints.ignore_configured = e && strcasecmp(e->value, "true") == 0;
	e = prof_get(&cred, &conf, name, "services", &file);
	if (e) {
		if (!has_section(&conf, SEC_SERVICES, e->value)) {
			errbuf_set(err, "%s:%d: profile \"%s\" uses services section \"%s\", which %s "
				   "does not hold", file, e->line, name, e->value,
				   have_conf ? p->config_file : "the config file");
			goto out;
		}
		for (i = 0; i < AWS_SERVICE_COUNT; i++) {
			const struct entry *s = ini_get(&conf, SEC_SERVICES, e->value,
							aws_service_config_id((enum aws_service)i),
							"endpoint_url");

			if (set_field(p->endpoints.service_url[i], sizeof(p->endpoints.service_url[i]), s,
				      conf.path, err) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	if (rc < 0)
		aws_profile_wipe(p);
	ini_free(&cred);
	ini_free(&conf);
	return rc;
}

void aws_profile_wipe(struct aws_profile *p)
{
	credcache_wipe(p->access_key_id, sizeof(p->access_key_id));
	credcache_wipe(p->secret_access_key, sizeof(p->secret_access_key));
	credcache_wipe(p->session_token, sizeof(p->session_token));
}
