/*
 * cli/kustomize: a file of a kustomize-generated ConfigMap found through
 * the kustomization files (configMapGenerator files, resources), as
 * `luascale check` needs it for a config of deploy/overlays/. Nothing is
 * rendered: only the generators' file lists are read.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "arena.h"
#include "buf.h"
#include "cli/kustomize.h"
#include "ytree.h"

#define MAX_DEPTH 8
#define MAX_FILE (1u << 20)

static const char *const kustomization_names[] = {
	"kustomization.yaml", "kustomization.yml", "Kustomization",
};

/* Lexically joins 'dir' and 'rel' into 'out' ("a/b" + "../c" = "a/c"):
 * "." and "x/.." segments go, leading ".." stay. -1 when too long. */
static int join(const char *dir, const char *rel, char *out, size_t outlen)
{
	char tmp[4096];
	const char *seg[256];
	size_t lens[256], n = 0, i, len = 0;
	const char *p;
	bool abs;

	if (rel[0] == '/')
		snprintf(tmp, sizeof(tmp), "%s", rel);
	else if (snprintf(tmp, sizeof(tmp), "%s/%s", dir, rel) >= (int)sizeof(tmp))
		return -1;
	abs = tmp[0] == '/';
	for (p = tmp; *p;) {
		size_t l = strcspn(p, "/");

		if (l == 0 || (l == 1 && p[0] == '.')) {
			/* nothing */
		} else if (l == 2 && p[0] == '.' && p[1] == '.' && n > 0 &&
			   !(lens[n - 1] == 2 && seg[n - 1][0] == '.' && seg[n - 1][1] == '.')) {
			n--;
		} else if (n < 256) {
			seg[n] = p;
			lens[n++] = l;
		} else {
			return -1;
		}
		p += l;
		if (*p == '/')
			p++;
	}
	if (outlen == 0)
		return -1;
	out[0] = '\0';
	if (abs)
		out[len++] = '/';
	if (n == 0 && !abs)
		out[len++] = '.';
	for (i = 0; i < n; i++) {
		if (len + lens[i] + 2 > outlen)
			return -1;
		if (i > 0)
			out[len++] = '/';
		memcpy(out + len, seg[i], lens[i]);
		len += lens[i];
	}
	if (len >= outlen)
		return -1;
	out[len] = '\0';
	return 0;
}

/* The kustomization of folder 'dir' parsed into 'a' (NULL root: there is
 * none), its file name in 'path'. 0, or -1 with why. */
static int read_kustomization(const char *dir, struct arena *a, const struct ytree_node **root,
			      char *path, size_t pathlen, struct errbuf *err)
{
	struct buf b = BUF_INIT;
	struct ytree_node *r = NULL;
	size_t i;
	int rc;

	*root = NULL;
	for (i = 0; i < sizeof(kustomization_names) / sizeof(*kustomization_names); i++) {
		struct errbuf e;
		struct stat st;

		if (join(dir, kustomization_names[i], path, pathlen) < 0)
			return errbuf_set(err, "%s: path too long", dir);
		if (stat(path, &st) != 0)
			continue;
		if (buf_read_file(&b, path, MAX_FILE, &e) < 0)
			return errbuf_set(err, "%s", e.msg);
		rc = ytree_parse(b.data ? b.data : "", b.len, path, a, &r, err);
		buf_free(&b);
		if (rc < 0)
			return -1;
		if (r && r->kind != YTREE_MAP)
			return errbuf_set(err, "%s: not a mapping", path);
		*root = r;
		return 0;
	}
	return 0;
}

/* The key and the file of one entry of a generator's files: "path" or
 * "key=path". */
static void file_entry(const char *text, char *key, size_t keylen, const char **file)
{
	const char *eq = strchr(text, '=');
	const char *slash;

	if (eq) {
		snprintf(key, keylen, "%.*s", (int)(eq - text), text);
		*file = eq + 1;
		return;
	}
	slash = strrchr(text, '/');
	snprintf(key, keylen, "%s", slash ? slash + 1 : text);
	*file = text;
}

/* The generator of 'root' named 'name' (NULL: the one whose files hold
 * key 'has'). */
static const struct ytree_node *find_generator(const struct ytree_node *root, const char *name,
					       const char *has)
{
	const struct ytree_node *gens = ytree_map_find(root, "configMapGenerator"), *g;

	if (!gens || gens->kind != YTREE_SEQ)
		return NULL;
	for (g = gens->first; g; g = g->next) {
		const struct ytree_node *n = ytree_map_find(g, "name"), *files, *f;

		if (!n || n->kind != YTREE_SCALAR)
			continue;
		if (name) {
			if (strcmp(n->text, name) == 0)
				return g;
			continue;
		}
		files = ytree_map_find(g, "files");
		if (!files || files->kind != YTREE_SEQ)
			continue;
		for (f = files->first; f; f = f->next) {
			char key[256];
			const char *file;

			if (f->kind != YTREE_SCALAR)
				continue;
			file_entry(f->text, key, sizeof(key), &file);
			if (strcmp(key, has) == 0)
				return g;
		}
	}
	return NULL;
}

struct lookup {
	const char *cm;  /* the generator's name */
	const char *key;
	char *out, *where;
	size_t outlen, wherelen;
};

/* Looks the key up in the generator named lk->cm of the kustomization in
 * 'dir' ('root', its file 'kpath'), then in its resources. 1 found, 0 not,
 * -1 error. */
static int lookup_in(struct lookup *lk, const char *dir, const struct ytree_node *root,
		     const char *kpath, struct arena *a, int depth, struct errbuf *err)
{
	static const char *const lists[] = {"resources", "bases"};
	const struct ytree_node *g = find_generator(root, lk->cm, NULL), *files, *f;
	size_t i;

	files = g ? ytree_map_find(g, "files") : NULL;
	for (f = files && files->kind == YTREE_SEQ ? files->first : NULL; f; f = f->next) {
		char key[256];
		const char *file;

		if (f->kind != YTREE_SCALAR)
			continue;
		file_entry(f->text, key, sizeof(key), &file);
		if (strcmp(key, lk->key) != 0)
			continue;
		if (join(dir, file, lk->out, lk->outlen) < 0)
			return errbuf_set(err, "%s: path too long", kpath);
		snprintf(lk->where, lk->wherelen, "%s", kpath);
		return 1;
	}
	if (depth >= MAX_DEPTH)
		return errbuf_set(err, "%s: resources nest deeper than %d kustomizations", kpath,
				  MAX_DEPTH);
	for (i = 0; i < sizeof(lists) / sizeof(*lists); i++) {
		const struct ytree_node *res = ytree_map_find(root, lists[i]), *r;

		for (r = res && res->kind == YTREE_SEQ ? res->first : NULL; r; r = r->next) {
			char sub[4096], subk[4096];
			const struct ytree_node *sroot;
			int rc;

			if (r->kind != YTREE_SCALAR || strchr(r->text, ':'))
				continue; /* a remote resource is not read */
			if (join(dir, r->text, sub, sizeof(sub)) < 0)
				return errbuf_set(err, "%s: path too long", kpath);
			if (read_kustomization(sub, a, &sroot, subk, sizeof(subk), err) < 0)
				return -1;
			if (!sroot)
				continue; /* a manifest, not a folder with a kustomization */
			rc = lookup_in(lk, sub, sroot, subk, a, depth + 1, err);
			if (rc != 0)
				return rc;
		}
	}
	return 0;
}

int kustomize_configmap_file(const char *config_path, const char *key, char *out, size_t outlen,
			     char *cm, size_t cmlen, char *where, size_t wherelen,
			     struct errbuf *err)
{
	char dir[4096], kpath[4096], self[256];
	const char *slash = strrchr(config_path, '/');
	const struct ytree_node *root, *g, *name;
	struct arena *a = arena_new();
	struct lookup lk;
	int rc = 0;

	if (!a)
		return errbuf_set(err, "out of memory");
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - config_path), config_path);
	else
		snprintf(dir, sizeof(dir), ".");
	if (slash && slash == config_path)
		snprintf(dir, sizeof(dir), "/");
	snprintf(self, sizeof(self), "%s", slash ? slash + 1 : config_path);
	if (read_kustomization(dir, a, &root, kpath, sizeof(kpath), err) < 0) {
		rc = -1;
		goto out;
	}
	g = root ? find_generator(root, NULL, self) : NULL;
	name = g ? ytree_map_find(g, "name") : NULL;
	if (!name)
		goto out;
	snprintf(cm, cmlen, "%s", name->text);
	lk.cm = name->text;
	lk.key = key;
	lk.out = out;
	lk.outlen = outlen;
	lk.where = where;
	lk.wherelen = wherelen;
	rc = lookup_in(&lk, dir, root, kpath, a, 0, err);
out:
	arena_free(a);
	return rc;
}
