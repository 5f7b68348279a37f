/*
 * selector: the kubectl string form of a label selector
 * ("a=b,c!=d,e,!f,g in (x,y),h notin (z)") parsed into objects.h's
 * struct label_selector. Matching one is objects.c's.
 */
#include "selector.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "k8sname.h"

/* ---- the kubectl string form ---- */

/* Parser state: the text, a cursor, and growable temporaries that are
 * copied into the arena once the whole selector parsed. */
struct sel_parser {
	struct arena *a;
	const char *text;
	const char *p;
	struct errbuf *err;
	struct selector_req *reqs;
	size_t n, cap;
	const char **vals;
	size_t n_vals, cap_vals;
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_word(char c)
{
	return c && !is_space(c) && !strchr(",=!()", c);
}

static void skip_space(struct sel_parser *sp)
{
	while (is_space(*sp->p))
		sp->p++;
}

static int sel_error(struct sel_parser *sp, const char *what)
{
	if (*sp->p)
		return errbuf_set(sp->err, "invalid label selector \"%.200s\": %s at \"%.60s\"",
				  sp->text, what, sp->p);
	return errbuf_set(sp->err, "invalid label selector \"%.200s\": %s at the end",
			  sp->text, what);
}

/* Reads a word into the arena; may be empty. NULL on out of memory. */
static char *read_word(struct sel_parser *sp)
{
	const char *start;
	char *w;

	skip_space(sp);
	start = sp->p;
	while (is_word(*sp->p))
		sp->p++;
	w = arena_strndup(sp->a, start, (size_t)(sp->p - start));
	if (!w)
		errbuf_set(sp->err, "out of memory");
	return w;
}

static int push_value(struct sel_parser *sp, const char *v)
{
	if (!k8sname_valid_label_value(v))
		return errbuf_set(sp->err, "invalid label selector \"%.200s\": invalid label value \"%.80s\"",
				  sp->text, v);
	if (sp->n_vals == sp->cap_vals) {
		size_t cap = sp->cap_vals ? sp->cap_vals * 2 : 8;
		const char **nv = realloc(sp->vals, cap * sizeof(*nv));

		if (!nv)
			return errbuf_set(sp->err, "out of memory");
		sp->vals = nv;
		sp->cap_vals = cap;
	}
	sp->vals[sp->n_vals++] = v;
	return 0;
}

/* Appends a requirement whose values are vals[first..n_vals). */
static int push_req(struct sel_parser *sp, const char *key, enum selector_op op,
		    size_t first)
{
	struct selector_req *r;
	size_t nv = sp->n_vals - first;

	if (sp->n == sp->cap) {
		size_t cap = sp->cap ? sp->cap * 2 : 8;
		struct selector_req *nr = realloc(sp->reqs, cap * sizeof(*nr));

		if (!nr)
			return errbuf_set(sp->err, "out of memory");
		sp->reqs = nr;
		sp->cap = cap;
	}
	r = &sp->reqs[sp->n++];
	r->key = key;
	r->op = op;
	r->n_values = nv;
	r->values = NULL;
	if (nv) {
		r->values = arena_calloc(sp->a, nv, sizeof(*r->values));
		if (!r->values)
			return errbuf_set(sp->err, "out of memory");
		memcpy(r->values, sp->vals + first, nv * sizeof(*r->values));
	}
	return 0;
}

/* One requirement: "!k", "k", "k=v", "k==v", "k!=v", "k in (..)", "k notin (..)". */
static int parse_requirement(struct sel_parser *sp)
{
	bool negated = false;
	size_t first = sp->n_vals;
	enum selector_op op;
	char *key, *word;

	skip_space(sp);
	if (*sp->p == '!') {
		negated = true;
		sp->p++;
	}
	skip_space(sp);
	if (!is_word(*sp->p))
		return sel_error(sp, "expected a label key");
	if (!(key = read_word(sp)))
		return -1;
	if (!k8sname_valid_qualified_name(key, NULL, 0))
		return errbuf_set(sp->err, "invalid label selector \"%.200s\": invalid label key \"%.80s\"",
				  sp->text, key);
	skip_space(sp);
	if (negated) {
		if (*sp->p && *sp->p != ',')
			return sel_error(sp, "expected \",\" after \"!key\"");
		return push_req(sp, key, SELECTOR_DOES_NOT_EXIST, first);
	}
	if (*sp->p == '\0' || *sp->p == ',')
		return push_req(sp, key, SELECTOR_EXISTS, first);
	if (*sp->p == '=' || *sp->p == '!') {
		if (*sp->p == '!') {
			if (sp->p[1] != '=')
				return sel_error(sp, "expected \"!=\"");
			op = SELECTOR_NOT_IN;
			sp->p += 2;
		} else {
			op = SELECTOR_IN;
			sp->p += sp->p[1] == '=' ? 2 : 1;
		}
		if (!(word = read_word(sp)))
			return -1;
		if (push_value(sp, word) < 0)
			return -1;
		return push_req(sp, key, op, first);
	}
	if (!(word = read_word(sp)))
		return -1;
	if (strcmp(word, "in") == 0) {
		op = SELECTOR_IN;
	} else if (strcmp(word, "notin") == 0) {
		op = SELECTOR_NOT_IN;
	} else {
		sp->p -= strlen(word);
		return sel_error(sp, "expected an operator (=, ==, !=, in, notin)");
	}
	skip_space(sp);
	if (*sp->p != '(')
		return sel_error(sp, "expected \"(\"");
	sp->p++;
	for (;;) {
		skip_space(sp);
		if (!is_word(*sp->p) && *sp->p != ',' && *sp->p != ')')
			return sel_error(sp, "expected a value or \")\"");
		if (!(word = read_word(sp)))
			return -1;
		if (push_value(sp, word) < 0)
			return -1;
		skip_space(sp);
		if (*sp->p == ',') {
			sp->p++;
			continue;
		}
		if (*sp->p == ')')
			break;
		return sel_error(sp, "expected \",\" or \")\"");
	}
	sp->p++;
	/* "in ()" reads as one empty value; Kubernetes wants at least one */
	if (sp->n_vals - first == 1 && sp->vals[first][0] == '\0')
		return errbuf_set(sp->err, "invalid label selector \"%.200s\": empty value set for \"%.80s\"",
				  sp->text, key);
	return push_req(sp, key, op, first);
}

int label_selector_parse(struct arena *a, const char *text,
			 struct label_selector *out, struct errbuf *err)
{
	struct sel_parser sp = {.a = a, .text = text ? text : "", .err = err};
	int rc = -1;

	sp.p = sp.text;
	out->reqs = NULL;
	out->n = 0;
	skip_space(&sp);
	if (*sp.p == '\0')
		return 0; /* the empty selector matches everything */
	for (;;) {
		if (parse_requirement(&sp) < 0)
			goto out;
		skip_space(&sp);
		if (*sp.p == '\0')
			break;
		if (*sp.p != ',') {
			sel_error(&sp, "expected \",\"");
			goto out;
		}
		sp.p++;
	}
	out->reqs = arena_calloc(a, sp.n, sizeof(*out->reqs));
	if (!out->reqs) {
		errbuf_set(err, "out of memory");
		goto out;
	}
	memcpy(out->reqs, sp.reqs, sp.n * sizeof(*out->reqs));
	out->n = sp.n;
	rc = 0;
out:
	free(sp.reqs);
	free(sp.vals);
	return rc;
}
