/*
 * kubeconfig: kubeconfig files (one or several, as $KUBECONFIG lists them)
 * and the in-cluster environment resolved into a struct kube_config for one
 * explicitly named context. Parsing goes through ytree, so every complaint
 * names file:line:col. Secrets are copied, never quoted in messages.
 */
#include "kube/kubeconfig.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "buf.h"
#include "ytree.h"

#define KUBECONFIG_MAX_FILES 16
#define KUBECONFIG_MAX_SIZE (16u << 20)

/* One parsed kubeconfig file. */
struct kdoc {
	char *source;   /* path, for messages */
	char *base_dir; /* where relative paths start, or NULL */
	const struct ytree_node *root;
};

/* A named entry of clusters/users/contexts and the file it came from. */
struct kentry {
	const struct kdoc *doc;
	const struct ytree_node *item;  /* the list item (name + body) */
	const struct ytree_node *body;  /* its "cluster"/"user"/"context" mapping, or NULL */
};

struct kload {
	struct kdoc docs[KUBECONFIG_MAX_FILES];
	size_t n_docs;
	struct arena *arena;
	struct errbuf *err;
};

/* ---- small helpers ---- */

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

/* Overwrites 'n' bytes so a freed secret does not linger in the heap. */
static void wipe(void *p, size_t n)
{
	volatile unsigned char *v = p;

	while (p && n--)
		*v++ = 0;
}

static void free_secret_str(char *s)
{
	if (s) {
		wipe(s, strlen(s));
		free(s);
	}
}

static void free_exec(struct kube_exec *x)
{
	size_t i;

	if (!x)
		return;
	free(x->command);
	for (i = 0; i < x->n_args; i++)
		free(x->args[i]);
	free(x->args);
	for (i = 0; i < x->n_env; i++) {
		free(x->env_names[i]);
		free_secret_str(x->env_values[i]);
	}
	free(x->env_names);
	free(x->env_values);
	free(x->api_version);
	free(x->install_hint);
	free(x);
}

void kube_config_free(struct kube_config *c)
{
	if (!c)
		return;
	free(c->context);
	free(c->source);
	free(c->cluster_name);
	free(c->user_name);
	free(c->namespace);
	free(c->server);
	free(c->tls_server_name);
	free(c->ca_file);
	free(c->ca_data);
	free(c->cert_file);
	free(c->cert_data);
	free(c->key_file);
	if (c->key_data) {
		wipe(c->key_data, c->key_len);
		free(c->key_data);
	}
	free_secret_str(c->token);
	free(c->token_file);
	free_exec(c->exec);
	free(c);
}

/* "file:line:col: " then the message; returns -1. */
static int at(struct errbuf *err, const struct kdoc *d, const struct ytree_node *n,
	      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int at(struct errbuf *err, const struct kdoc *d, const struct ytree_node *n,
	      const char *fmt, ...)
{
	char msg[ERRBUF_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n)
		return errbuf_set(err, "%s:%d:%d: %s", d->source, n->line, n->col, msg);
	return errbuf_set(err, "%s: %s", d->source, msg);
}

static const char *kind_name(const struct ytree_node *n)
{
	switch (n->kind) {
	case YTREE_MAP:
		return "a mapping";
	case YTREE_SEQ:
		return "a list";
	default:
		return "a scalar";
	}
}

/*
 * The string value of key 'key' in mapping 'm': *out NULL when absent or
 * null. 'what' names the place in messages ("users[\"u\"].user").
 */
static int get_str(const struct kdoc *d, const struct ytree_node *m, const char *key,
		   const char *what, const char **out, const struct ytree_node **where,
		   struct errbuf *err)
{
	const struct ytree_node *v = ytree_map_find(m, key);

	*out = NULL;
	if (where)
		*where = v;
	if (!v || ytree_is_null(v))
		return 0;
	if (v->kind != YTREE_SCALAR)
		return at(err, d, v, "%s.%s: expected a string, found %s", what, key,
			  kind_name(v));
	*out = v->text;
	return 0;
}

static int get_bool(const struct kdoc *d, const struct ytree_node *m, const char *key,
		    const char *what, bool *out, struct errbuf *err)
{
	const struct ytree_node *v = ytree_map_find(m, key);

	*out = false;
	if (!v || ytree_is_null(v))
		return 0;
	if (v->kind != YTREE_SCALAR || !v->plain || ytree_bool_text(v->text, out) < 0)
		return at(err, d, v, "%s.%s: expected true or false", what, key);
	return 0;
}

/* 'path' made relative to the document's folder unless absolute. */
static char *resolve_path(const struct kdoc *d, const char *path)
{
	struct buf b = BUF_INIT;

	if (!path)
		return NULL;
	if (path[0] == '/' || !d->base_dir || !d->base_dir[0])
		return xstrdup(path);
	buf_printf(&b, "%s/%s", d->base_dir, path);
	return b.oom ? (buf_free(&b), NULL) : buf_take(&b);
}

/* ---- base64 ---- */

static int b64val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

unsigned char *kube_base64_decode(const char *s, size_t len, size_t *out_len,
				  struct errbuf *err)
{
	unsigned char *out = malloc(len / 4 * 3 + 4);
	uint32_t acc = 0;
	size_t i, o = 0, nq = 0, pad = 0;

	if (!out) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		int v;

		if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
			continue;
		if (c == '=') {
			pad++;
			if (nq < 2 || nq + pad > 4)
				goto bad;
			continue;
		}
		if (pad)
			goto bad; /* data after padding */
		v = b64val(c);
		if (v < 0)
			goto bad;
		acc = acc << 6 | (uint32_t)v;
		if (++nq == 4) {
			out[o++] = (unsigned char)(acc >> 16);
			out[o++] = (unsigned char)(acc >> 8);
			out[o++] = (unsigned char)acc;
			acc = 0;
			nq = 0;
		}
	}
	if (pad && nq + pad != 4) {
		i = len;
		goto bad;
	}
	if (nq == 1) {
		errbuf_set(err, "invalid base64: truncated (length is not a multiple of 4)");
		free(out);
		return NULL;
	}
	if (nq == 2) {
		out[o++] = (unsigned char)(acc >> 4);
	} else if (nq == 3) {
		out[o++] = (unsigned char)(acc >> 10);
		out[o++] = (unsigned char)(acc >> 2);
	}
	out[o] = '\0';
	*out_len = o;
	return out;
bad:
	errbuf_set(err, "invalid base64 at offset %zu", i);
	free(out);
	return NULL;
}

/* Decodes the base64 value of 'key' (a "...-data" field) into *out. */
static int get_b64(const struct kdoc *d, const struct ytree_node *m, const char *key,
		   const char *what, unsigned char **out, size_t *out_len, struct errbuf *err)
{
	const struct ytree_node *where;
	const char *s;
	struct errbuf e2;

	*out = NULL;
	*out_len = 0;
	if (get_str(d, m, key, what, &s, &where, err))
		return -1;
	if (!s)
		return 0;
	*out = kube_base64_decode(s, strlen(s), out_len, &e2);
	if (!*out)
		return at(err, d, where, "%s.%s: %s", what, key, e2.msg);
	if (*out_len == 0) {
		free(*out);
		*out = NULL;
		return at(err, d, where, "%s.%s: empty", what, key);
	}
	return 0;
}

/* ---- loading the documents ---- */

/* A regular file only: a FIFO as kubeconfig or token file must not block
 * for a writer. Wipes what it read on failure (tokens, keys). */
static char *read_all(const char *path, size_t max, size_t *len, struct errbuf *err)
{
	struct buf b = BUF_INIT;
	char chunk[8192];
	FILE *f = buf_fopen_regular(path, err);
	size_t n;

	if (!f)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (b.len + n > max) {
			errbuf_set(err, "%s: larger than %zu bytes", path, max);
			goto fail;
		}
		buf_append(&b, chunk, n);
	}
	if (ferror(f)) {
		errbuf_set(err, "cannot read %s: %s", path, strerror(errno));
		goto fail;
	}
	if (b.oom) {
		errbuf_set(err, "cannot read %s: out of memory", path);
		goto fail;
	}
	fclose(f);
	*len = b.len;
	return buf_take(&b);
fail:
	fclose(f);
	wipe(b.data, b.len);
	buf_free(&b);
	return NULL;
}

static int add_doc(struct kload *L, const char *text, size_t len, const char *source,
		   const char *base_dir)
{
	struct kdoc *d;
	struct ytree_node *root = NULL;

	if (L->n_docs == KUBECONFIG_MAX_FILES)
		return errbuf_set(L->err, "more than %d kubeconfig files", KUBECONFIG_MAX_FILES);
	d = &L->docs[L->n_docs];
	d->source = arena_strdup(L->arena, source);
	d->base_dir = arena_strdup(L->arena, base_dir);
	if (!d->source)
		return errbuf_set(L->err, "out of memory");
	if (ytree_parse(text, len, source, L->arena, &root, L->err))
		return -1;
	if (root && root->kind != YTREE_MAP)
		return at(L->err, d, root, "expected a mapping (a kubeconfig), found %s",
			  kind_name(root));
	d->root = root;
	L->n_docs++;
	return 0;
}

/*
 * Finds the entry named 'name' in list 'list' ("clusters", "users",
 * "contexts"), 'body' the key holding its settings. Checks the shape of
 * every list met. Returns 1 found, 0 not found, -1 error.
 */
static int find_entry(struct kload *L, const char *list, const char *body, const char *name,
		      struct kentry *out)
{
	size_t i;
	int found = 0;

	for (i = 0; i < L->n_docs; i++) {
		const struct kdoc *d = &L->docs[i];
		const struct ytree_node *seq = ytree_map_find(d->root, list), *it;
		size_t k = 0;
		bool found_here = false;

		if (!seq || ytree_is_null(seq))
			continue;
		if (seq->kind != YTREE_SEQ)
			return at(L->err, d, seq, "%s: expected a list, found %s", list,
				  kind_name(seq));
		for (it = seq->first; it; it = it->next, k++) {
			const struct ytree_node *nm, *b;

			if (it->kind != YTREE_MAP)
				return at(L->err, d, it, "%s[%zu]: expected a mapping with name and %s",
					  list, k, body);
			nm = ytree_map_find(it, "name");
			if (!nm || nm->kind != YTREE_SCALAR || !nm->text[0])
				return at(L->err, d, nm ? nm : it, "%s[%zu]: needs a name", list, k);
			if (strcmp(nm->text, name) != 0)
				continue;
			if (found_here)
				return at(L->err, d, nm, "%s[%zu]: a second entry named \"%s\"",
					  list, k, name);
			found_here = true;
			if (found)
				continue; /* an earlier file defined it: first one wins */
			b = ytree_map_find(it, body);
			if (b && ytree_is_null(b))
				b = NULL;
			if (b && b->kind != YTREE_MAP)
				return at(L->err, d, b, "%s[\"%s\"].%s: expected a mapping, found %s",
					  list, name, body, kind_name(b));
			out->doc = d;
			out->item = it;
			out->body = b;
			found = 1;
		}
	}
	return found;
}

/* Did a file before 'doc' already name a context 'name'? */
static bool context_seen(const struct kload *L, size_t doc, const char *name)
{
	size_t i;

	for (i = 0; i < doc; i++) {
		const struct ytree_node *seq = ytree_map_find(L->docs[i].root, "contexts"), *it;

		if (!seq || seq->kind != YTREE_SEQ)
			continue;
		for (it = seq->first; it; it = it->next) {
			const struct ytree_node *nm = ytree_map_find(it, "name");

			if (nm && nm->kind == YTREE_SCALAR && strcmp(nm->text, name) == 0)
				return true;
		}
	}
	return false;
}

/* "a, b, c" (the context names of every file), or "(none)". */
static void list_contexts(const struct kload *L, char *out, size_t outlen)
{
	size_t i, used = 0;

	out[0] = '\0';
	for (i = 0; i < L->n_docs; i++) {
		const struct ytree_node *seq = ytree_map_find(L->docs[i].root, "contexts"), *it;

		if (!seq || seq->kind != YTREE_SEQ)
			continue;
		for (it = seq->first; it; it = it->next) {
			const struct ytree_node *nm = ytree_map_find(it, "name");
			int w;

			if (!nm || nm->kind != YTREE_SCALAR || context_seen(L, i, nm->text))
				continue;
			w = snprintf(out + used, outlen - used, "%s%s", used ? ", " : "", nm->text);
			if (w < 0 || (size_t)w >= outlen - used) {
				out[outlen - 1] = '\0';
				return;
			}
			used += (size_t)w;
		}
	}
	if (!used)
		snprintf(out, outlen, "(none)");
}

static const char *sources(const struct kload *L, char *out, size_t outlen)
{
	size_t i, used = 0;

	out[0] = '\0';
	for (i = 0; i < L->n_docs && used < outlen; i++) {
		int w = snprintf(out + used, outlen - used, "%s%s", i ? ":" : "",
				 L->docs[i].source);

		if (w < 0)
			break;
		used += (size_t)w;
	}
	return out;
}

/* ---- the three parts of a context ---- */

static int read_cluster(struct kload *L, const struct kentry *e, const char *name,
			struct kube_config *c)
{
	const struct kdoc *d = e->doc;
	const struct ytree_node *m = e->body, *where;
	char what[320];
	const char *s;

	snprintf(what, sizeof(what), "clusters[\"%s\"].cluster", name);
	if (!m)
		return at(L->err, d, e->item, "cluster \"%s\" has no cluster settings", name);
	if (get_str(d, m, "server", what, &s, &where, L->err))
		return -1;
	if (!s || !s[0])
		return at(L->err, d, m, "%s: needs a server (https://host:port)", what);
	if (strncmp(s, "https://", 8) != 0 && strncmp(s, "http://", 7) != 0)
		return at(L->err, d, where, "%s.server: expected an http:// or https:// URL", what);
	c->server = xstrdup(s);
	if (!c->server)
		return errbuf_set(L->err, "out of memory");
	{
		size_t n = strlen(c->server);

		while (n > 0 && c->server[n - 1] == '/')
			c->server[--n] = '\0';
	}
	if (get_str(d, m, "tls-server-name", what, &s, NULL, L->err))
		return -1;
	if (s && !(c->tls_server_name = xstrdup(s)))
		return errbuf_set(L->err, "out of memory");
	if (get_bool(d, m, "insecure-skip-tls-verify", what, &c->insecure_skip_tls_verify, L->err))
		return -1;
	if (get_str(d, m, "certificate-authority", what, &s, &where, L->err))
		return -1;
	if (s && !(c->ca_file = resolve_path(d, s)))
		return errbuf_set(L->err, "out of memory");
	if (get_b64(d, m, "certificate-authority-data", what, &c->ca_data, &c->ca_len, L->err))
		return -1;
	if (c->ca_file && c->ca_data)
		return at(L->err, d, where,
			  "%s: certificate-authority and certificate-authority-data are both set",
			  what);
	if (c->insecure_skip_tls_verify && (c->ca_file || c->ca_data))
		return at(L->err, d, ytree_map_find(m, "insecure-skip-tls-verify"),
			  "%s: insecure-skip-tls-verify with a certificate authority is contradictory",
			  what);
	if (ytree_map_find(m, "proxy-url") && !ytree_is_null(ytree_map_find(m, "proxy-url")))
		return at(L->err, d, ytree_map_find(m, "proxy-url"),
			  "%s.proxy-url: not supported (use the https_proxy environment variable)",
			  what);
	return 0;
}

static int dup_strv(char ***out, size_t n)
{
	*out = n ? calloc(n, sizeof(**out)) : NULL;
	return (n && !*out) ? -1 : 0;
}

static int read_exec(struct kload *L, const struct kdoc *d, const struct ytree_node *m,
		     const char *what_user, struct kube_config *c)
{
	struct kube_exec *x;
	const struct ytree_node *v, *it, *where;
	char what[400];
	const char *s;
	size_t i;

	snprintf(what, sizeof(what), "%s.exec", what_user);
	if (m->kind != YTREE_MAP)
		return at(L->err, d, m, "%s: expected a mapping, found %s", what, kind_name(m));
	x = calloc(1, sizeof(*x));
	if (!x)
		return errbuf_set(L->err, "out of memory");
	c->exec = x;
	if (get_str(d, m, "command", what, &s, NULL, L->err))
		return -1;
	if (!s || !s[0])
		return at(L->err, d, m, "%s: needs a command", what);
	x->command = (strchr(s, '/') && s[0] != '/') ? resolve_path(d, s) : xstrdup(s);
	if (get_str(d, m, "apiVersion", what, &s, &where, L->err))
		return -1;
	if (!s)
		return at(L->err, d, m, "%s: needs an apiVersion (client.authentication.k8s.io/v1)",
			  what);
	if (strcmp(s, "client.authentication.k8s.io/v1") != 0 &&
	    strcmp(s, "client.authentication.k8s.io/v1beta1") != 0)
		return at(L->err, d, where,
			  "%s.apiVersion: \"%s\" is not supported (client.authentication.k8s.io/v1 or v1beta1)",
			  what, s);
	x->api_version = xstrdup(s);
	if (get_str(d, m, "interactiveMode", what, &s, &where, L->err))
		return -1;
	if (!s) {
		if (strcmp(x->api_version, "client.authentication.k8s.io/v1") == 0)
			return at(L->err, d, m,
				  "%s: interactiveMode is required for client.authentication.k8s.io/v1 (Never, IfAvailable or Always)",
				  what);
		x->interactive = KUBE_EXEC_IF_AVAILABLE;
	} else if (strcmp(s, "Never") == 0) {
		x->interactive = KUBE_EXEC_NEVER;
	} else if (strcmp(s, "IfAvailable") == 0) {
		x->interactive = KUBE_EXEC_IF_AVAILABLE;
	} else if (strcmp(s, "Always") == 0) {
		x->interactive = KUBE_EXEC_ALWAYS;
	} else {
		return at(L->err, d, where,
			  "%s.interactiveMode: \"%s\" is not Never, IfAvailable or Always", what, s);
	}
	if (get_bool(d, m, "provideClusterInfo", what, &x->provide_cluster_info, L->err))
		return -1;
	if (get_str(d, m, "installHint", what, &s, NULL, L->err))
		return -1;
	if (s)
		x->install_hint = xstrdup(s);

	v = ytree_map_find(m, "args");
	if (v && !ytree_is_null(v)) {
		if (v->kind != YTREE_SEQ)
			return at(L->err, d, v, "%s.args: expected a list of strings", what);
		if (dup_strv(&x->args, v->n))
			return errbuf_set(L->err, "out of memory");
		for (it = v->first, i = 0; it; it = it->next, i++) {
			if (it->kind != YTREE_SCALAR)
				return at(L->err, d, it, "%s.args[%zu]: expected a string", what, i);
			x->args[i] = xstrdup(it->text);
			x->n_args = i + 1;
			if (!x->args[i])
				return errbuf_set(L->err, "out of memory");
		}
	}
	v = ytree_map_find(m, "env");
	if (v && !ytree_is_null(v)) {
		if (v->kind != YTREE_SEQ)
			return at(L->err, d, v, "%s.env: expected a list of {name, value}", what);
		if (dup_strv(&x->env_names, v->n) || dup_strv(&x->env_values, v->n))
			return errbuf_set(L->err, "out of memory");
		for (it = v->first, i = 0; it; it = it->next, i++) {
			char w2[440];
			const char *name, *value;

			snprintf(w2, sizeof(w2), "%s.env[%zu]", what, i);
			if (it->kind != YTREE_MAP)
				return at(L->err, d, it, "%s: expected a mapping with name and value", w2);
			if (get_str(d, it, "name", w2, &name, NULL, L->err) ||
			    get_str(d, it, "value", w2, &value, NULL, L->err))
				return -1;
			if (!name || !name[0] || strchr(name, '='))
				return at(L->err, d, it, "%s: needs a name (without '=')", w2);
			if (!ytree_map_find(it, "value"))
				return at(L->err, d, it, "%s: needs a value", w2);
			x->env_names[i] = xstrdup(name);
			x->env_values[i] = xstrdup(value ? value : "");
			x->n_env = i + 1;
			if (!x->env_names[i] || !x->env_values[i])
				return errbuf_set(L->err, "out of memory");
		}
	}
	return x->command && x->api_version ? 0 : errbuf_set(L->err, "out of memory");
}

static int read_user(struct kload *L, const struct kentry *e, const char *name,
		     struct kube_config *c)
{
	const struct kdoc *d = e->doc;
	const struct ytree_node *m = e->body, *v, *where_cert, *where_key, *where_tf, *where_tok;
	static const char *const unsupported[] = {"auth-provider", "username", "password",
						  "as", "as-groups", "as-uid", NULL};
	char what[320];
	const char *s;
	size_t i;

	snprintf(what, sizeof(what), "users[\"%s\"].user", name);
	if (!m)
		return 0; /* a user without settings: anonymous */
	for (i = 0; unsupported[i]; i++) {
		v = ytree_map_find(m, unsupported[i]);
		if (v && !ytree_is_null(v))
			return at(L->err, d, v, "%s.%s: not supported by luascale%s", what,
				  unsupported[i],
				  i == 0 ? " (use an exec credential plugin)" : "");
	}
	if (get_str(d, m, "token", what, &s, &where_tok, L->err))
		return -1;
	if (s && kube_token_check(s) >= 0)
		return at(L->err, d, where_tok,
			  "%s.token: contains a control character (byte %td of the token; "
			  "a token is one line of printable text)", what, kube_token_check(s) + 1);
	if (s && s[0] && !(c->token = xstrdup(s)))
		return errbuf_set(L->err, "out of memory");
	if (get_str(d, m, "tokenFile", what, &s, &where_tf, L->err))
		return -1;
	if (s && s[0] && !(c->token_file = resolve_path(d, s)))
		return errbuf_set(L->err, "out of memory");
	if (get_str(d, m, "client-certificate", what, &s, &where_cert, L->err))
		return -1;
	if (s && !(c->cert_file = resolve_path(d, s)))
		return errbuf_set(L->err, "out of memory");
	if (get_str(d, m, "client-key", what, &s, &where_key, L->err))
		return -1;
	if (s && !(c->key_file = resolve_path(d, s)))
		return errbuf_set(L->err, "out of memory");
	if (get_b64(d, m, "client-certificate-data", what, &c->cert_data, &c->cert_len, L->err) ||
	    get_b64(d, m, "client-key-data", what, &c->key_data, &c->key_len, L->err))
		return -1;
	if (c->cert_file && c->cert_data)
		return at(L->err, d, where_cert,
			  "%s: client-certificate and client-certificate-data are both set", what);
	if (c->key_file && c->key_data)
		return at(L->err, d, where_key, "%s: client-key and client-key-data are both set",
			  what);
	if ((c->cert_file || c->cert_data) != (c->key_file || c->key_data))
		return at(L->err, d, m, "%s: a client certificate needs its key and the key its certificate",
			  what);
	v = ytree_map_find(m, "exec");
	if (v && !ytree_is_null(v)) {
		if (c->token || c->token_file)
			return at(L->err, d, v, "%s: exec and token/tokenFile are both set; use one",
				  what);
		if (read_exec(L, d, v, what, c))
			return -1;
	}
	(void)where_tf;
	return 0;
}

static int resolve(struct kload *L, const char *context, struct kube_config **out)
{
	struct kube_config *c = NULL;
	struct kentry ce, cl, us;
	const struct ytree_node *where;
	const char *cluster, *user, *ns;
	char ctxs[300], src[300];
	char what[320];
	int r;

	*out = NULL;
	sources(L, src, sizeof(src));
	/* Shape-check the lists once, so a broken file is reported even when
	 * the context asked for sits in a good one. */
	if (find_entry(L, "contexts", "context", "", &ce) < 0 ||
	    find_entry(L, "clusters", "cluster", "", &ce) < 0 ||
	    find_entry(L, "users", "user", "", &ce) < 0)
		return -1;
	list_contexts(L, ctxs, sizeof(ctxs));
	if (!context || !context[0]) {
		const char *cur = NULL;
		size_t i;

		for (i = 0; i < L->n_docs && !cur; i++) {
			const struct ytree_node *v = ytree_map_find(L->docs[i].root, "current-context");

			if (v && v->kind == YTREE_SCALAR && v->text[0])
				cur = v->text;
		}
		if (cur)
			return errbuf_set(L->err,
					  "%s: no context named; luascale never uses current-context (\"%s\") on its own: name one (--context or kube.context); contexts: %s",
					  src, cur, ctxs);
		return errbuf_set(L->err,
				  "%s: no context named; luascale never uses current-context on its own: name one (--context or kube.context); contexts: %s",
				  src, ctxs);
	}
	r = find_entry(L, "contexts", "context", context, &ce);
	if (r < 0)
		return -1;
	if (r == 0)
		return errbuf_set(L->err, "%s: no context \"%s\"; contexts: %s", src, context, ctxs);
	snprintf(what, sizeof(what), "contexts[\"%s\"].context", context);
	if (!ce.body)
		return at(L->err, ce.doc, ce.item, "context \"%s\" has no context settings", context);
	if (get_str(ce.doc, ce.body, "cluster", what, &cluster, &where, L->err) ||
	    get_str(ce.doc, ce.body, "user", what, &user, NULL, L->err) ||
	    get_str(ce.doc, ce.body, "namespace", what, &ns, NULL, L->err))
		return -1;
	if (!cluster || !cluster[0])
		return at(L->err, ce.doc, ce.body, "%s: needs a cluster", what);
	r = find_entry(L, "clusters", "cluster", cluster, &cl);
	if (r < 0)
		return -1;
	if (r == 0)
		return at(L->err, ce.doc, where, "%s.cluster: no cluster \"%s\" in %s", what,
			  cluster, src);
	c = calloc(1, sizeof(*c));
	if (!c)
		return errbuf_set(L->err, "out of memory");
	c->context = xstrdup(context);
	c->cluster_name = xstrdup(cluster);
	c->user_name = user && user[0] ? xstrdup(user) : NULL;
	c->namespace = ns && ns[0] ? xstrdup(ns) : NULL;
	if (!c->context || !c->cluster_name || (user && user[0] && !c->user_name) ||
	    (ns && ns[0] && !c->namespace)) {
		errbuf_set(L->err, "out of memory");
		goto fail;
	}
	if (read_cluster(L, &cl, cluster, c))
		goto fail;
	if (!(c->source = xstrdup(cl.doc->source))) {
		errbuf_set(L->err, "out of memory");
		goto fail;
	}
	if (user && user[0]) {
		r = find_entry(L, "users", "user", user, &us);
		if (r < 0)
			goto fail;
		if (r == 0) {
			at(L->err, ce.doc, ytree_map_find(ce.body, "user"),
			   "%s.user: no user \"%s\" in %s", what, user, src);
			goto fail;
		}
		if (read_user(L, &us, user, c))
			goto fail;
	}
	*out = c;
	return 0;
fail:
	kube_config_free(c);
	return -1;
}

/* The folder part of 'path' ("" when none), in the arena. */
static char *dir_of(struct arena *a, const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return arena_strdup(a, ".");
	if (slash == path)
		return arena_strdup(a, "/");
	return arena_strndup(a, path, (size_t)(slash - path));
}

int kubeconfig_parse(const char *text, size_t len, const char *source, const char *base_dir,
		     const char *context, struct kube_config **out, struct errbuf *err)
{
	struct kload L;
	int rc = -1;

	memset(&L, 0, sizeof(L));
	*out = NULL;
	L.err = err;
	L.arena = arena_new();
	if (!L.arena)
		return errbuf_set(err, "out of memory");
	if (add_doc(&L, text ? text : "", text ? len : 0, source ? source : "kubeconfig",
		    base_dir) == 0)
		rc = resolve(&L, context, out);
	arena_free(L.arena);
	return rc;
}

int kubeconfig_load(const char *path, const char *context, struct kube_config **out,
		    struct errbuf *err)
{
	struct kload L;
	struct buf def = BUF_INIT;
	char *paths = NULL, *p, *next;
	int rc = -1;

	memset(&L, 0, sizeof(L));
	*out = NULL;
	L.err = err;
	if (!path || !path[0]) {
		const char *env = getenv("KUBECONFIG");

		if (env && env[0]) {
			path = env;
		} else {
			const char *home = getenv("HOME");

			if (!home || !home[0])
				return errbuf_set(err, "no kubeconfig named, $KUBECONFIG and $HOME unset");
			buf_printf(&def, "%s/.kube/config", home);
			if (def.oom)
				return errbuf_set(err, "out of memory");
			path = def.data;
		}
	}
	paths = xstrdup(path);
	L.arena = arena_new();
	if (!paths || !L.arena) {
		errbuf_set(err, "out of memory");
		goto out;
	}
	for (p = paths; p; p = next) {
		size_t len = 0;
		char *text;
		int r;

		next = strchr(p, ':');
		if (next)
			*next++ = '\0';
		if (!p[0])
			continue;
		text = read_all(p, KUBECONFIG_MAX_SIZE, &len, err);
		if (!text)
			goto out;
		r = add_doc(&L, text, len, p, dir_of(L.arena, p));
		wipe(text, len);
		free(text);
		if (r)
			goto out;
	}
	if (L.n_docs == 0) {
		errbuf_set(err, "no kubeconfig file in \"%s\"", path);
		goto out;
	}
	rc = resolve(&L, context, out);
out:
	arena_free(L.arena);
	free(paths);
	buf_free(&def);
	return rc;
}

/* ---- in-cluster ---- */

int kube_config_incluster(const struct kube_incluster_env *env, struct kube_config **out,
			  struct errbuf *err)
{
	struct kube_incluster_env e = {0};
	struct kube_config *c;
	struct buf b = BUF_INIT;
	char *tok, *ns;
	size_t len = 0, i;
	bool blank = true;

	*out = NULL;
	if (env)
		e = *env;
	if (!e.host)
		e.host = getenv("KUBERNETES_SERVICE_HOST");
	if (!e.port)
		e.port = getenv("KUBERNETES_SERVICE_PORT");
	if (!e.token_file)
		e.token_file = KUBE_SA_TOKEN_FILE;
	if (!e.ca_file)
		e.ca_file = KUBE_SA_CA_FILE;
	if (!e.ns_file)
		e.ns_file = KUBE_SA_NAMESPACE_FILE;
	if (!e.host || !e.host[0] || !e.port || !e.port[0])
		return errbuf_set(err, "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
	for (i = 0; e.port[i]; i++)
		if (e.port[i] < '0' || e.port[i] > '9' || i > 5)
			return errbuf_set(err, "KUBERNETES_SERVICE_PORT: \"%.16s\" is not a port", e.port);
	tok = read_all(e.token_file, 1u << 20, &len, err);
	if (!tok)
		return errbuf_prefix(err, "in-cluster service-account token");
	for (i = 0; i < len; i++)
		if (tok[i] != ' ' && tok[i] != '\n' && tok[i] != '\r' && tok[i] != '\t')
			blank = false;
	wipe(tok, len);
	free(tok);
	if (blank)
		return errbuf_set(err, "in-cluster service-account token %s is empty", e.token_file);
	{
		/* read by libcurl on every connection: a FIFO would block them */
		struct errbuf why;
		FILE *f = buf_fopen_regular(e.ca_file, &why);

		if (!f)
			return errbuf_set(err, "in-cluster CA: %s", why.msg);
		fclose(f);
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return errbuf_set(err, "out of memory");
	if (strchr(e.host, ':'))
		buf_printf(&b, "https://[%s]:%s", e.host, e.port);
	else
		buf_printf(&b, "https://%s:%s", e.host, e.port);
	c->server = b.oom ? NULL : buf_take(&b);
	c->context = xstrdup("in-cluster");
	c->cluster_name = xstrdup("in-cluster");
	c->token_file = xstrdup(e.token_file);
	c->ca_file = xstrdup(e.ca_file);
	ns = read_all(e.ns_file, 4096, &len, NULL);
	if (ns) {
		while (len > 0 && (ns[len - 1] == '\n' || ns[len - 1] == ' ' || ns[len - 1] == '\r'))
			ns[--len] = '\0';
		if (len)
			c->namespace = ns;
		else
			free(ns);
	}
	if (!c->server || !c->context || !c->cluster_name || !c->token_file || !c->ca_file) {
		buf_free(&b);
		kube_config_free(c);
		return errbuf_set(err, "out of memory");
	}
	*out = c;
	return 0;
}

ptrdiff_t kube_token_check(const char *token)
{
	const unsigned char *p;

	for (p = (const unsigned char *)token; p && *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return (ptrdiff_t)(p - (const unsigned char *)token);
	return -1;
}

char *kube_url_redact(const char *url, char *out, size_t outlen)
{
	const char *auth, *end, *userinfo_end = NULL, *p;

	if (!outlen)
		return out;
	if (!url) {
		out[0] = '\0';
		return out;
	}
	auth = strstr(url, "://");
	auth = auth ? auth + 3 : url;
	/* the authority ends at the first '/', '?' or '#'; userinfo is what
	 * comes before its last '@' */
	end = auth + strcspn(auth, "/?#");
	for (p = auth; p < end; p++)
		if (*p == '@')
			userinfo_end = p;
	if (!userinfo_end)
		snprintf(out, outlen, "%s", url);
	else
		snprintf(out, outlen, "%.*s<redacted>%s", (int)(auth - url), url, userinfo_end);
	return out;
}
