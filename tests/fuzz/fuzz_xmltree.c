/*
 * fuzz_xmltree: xmltree_parse() on arbitrary bytes (an AWS answer as a
 * hostile or broken endpoint might send it); what parses is walked whole
 * and every accessor is run on every element, with the tree's invariants
 * checked. A refusal must say where (line and column).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "providers/aws/awserr.h"
#include "providers/cloudhttp/xmltree.h"

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "xmltree invariant broken: %s\n", what);
		abort();
	}
}

static size_t walk(const struct xmltree_node *n, int depth)
{
	const struct xmltree_node *c, *it;
	size_t count = 1, kids = 0;
	const char *s;
	size_t len;
	int64_t v;
	bool b;
	char out[32];

	check(depth <= XMLTREE_MAX_DEPTH, "depth within the limit");
	check(n->name && n->name[0] &&
	      (!strchr(n->name, ':') || n->name[strlen(n->name) - 1] == ':'), "a local name");
	check(n->text && strlen(n->text) == n->text_len, "text is NUL-terminated at text_len");
	check(n->text_len <= XMLTREE_MAX_TEXT, "text within the limit");
	check(xmltree_trimmed(n, NULL, &s, &len) == 0 && s >= n->text &&
	      s + len <= n->text + n->text_len, "trimmed text inside the text");
	(void)xmltree_int64(n, NULL, &v);
	(void)xmltree_bool(n, NULL, &b);
	if (xmltree_copy(n, NULL, out, sizeof(out)) == 0)
		check(strlen(out) == len, "copy is the trimmed text");
	for (c = n->first_child; c; c = c->next_sibling) {
		check(c->parent == n, "a child's parent is its parent");
		check(xmltree_child(n, c->name) != NULL, "a child is found by its name");
		check(xmltree_find(n, c->name) == xmltree_child(n, c->name), "find agrees with child");
		for (it = xmltree_first(n, c->name); it && it != c; it = xmltree_next(it))
			;
		check(it == c, "iteration by name reaches every child of that name");
		kids++;
		count += walk(c, depth + 1);
	}
	check(xmltree_count(n, NULL) == kids, "count of all children");
	return count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct errbuf err = {{0}};
	struct xmltree_doc *d = xmltree_parse((const char *)data, size, &err);
	char code[16], msg[16], rid[16];

	if (!d) {
		check(strstr(err.msg, "line ") != NULL || strstr(err.msg, "out of memory") != NULL ||
		      strstr(err.msg, "no element") != NULL, "a refusal says where");
		return 0;
	}
	check(xmltree_root(d) != NULL && xmltree_root(d)->parent == NULL, "one root");
	check(walk(xmltree_root(d), 1) <= XMLTREE_MAX_NODES, "element count within the limit");
	(void)aws_xml_error(d, code, sizeof(code), msg, sizeof(msg));
	check(strlen(code) < sizeof(code) && strlen(msg) < sizeof(msg), "error fields fit");
	aws_xml_request_id(d, rid, sizeof(rid));
	xmltree_free(d);
	return 0;
}
