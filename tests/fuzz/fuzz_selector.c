/*
 * fuzz_selector: label_selector_parse() on arbitrary text; what parses is
 * matched against a fixed label set and against labels taken from the
 * selector's own keys and values, so every operator's matcher runs.
 */
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "fuzz.h"
#include "model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct kv fixed[] = {
		{"app", "web"}, {"tier", "frontend"}, {"env", ""}, {"n", "42"},
	};
	struct kvlist fixed_labels = {fixed, sizeof(fixed) / sizeof(fixed[0])};
	struct arena *a = arena_new();
	char *text = malloc(size + 1);
	struct label_selector sel;
	struct errbuf err = {{0}};
	struct kv *own = NULL;
	size_t i;

	if (!a || !text)
		goto out;
	memcpy(text, data, size);
	text[size] = '\0';
	if (label_selector_parse(a, text, &sel, &err) != 0) {
		if (strlen(err.msg) == 0)
			abort(); /* a failure must say why */
		goto out;
	}
	if (sel.n && !sel.reqs)
		abort();
	(void)label_selector_matches(&sel, &fixed_labels);
	/* labels made of the selector's own words: first value of each key */
	own = calloc(sel.n ? sel.n : 1, sizeof(*own));
	if (!own)
		goto out;
	for (i = 0; i < sel.n; i++) {
		const struct selector_req *r = &sel.reqs[i];

		if (!r->key || (r->n_values && !r->values))
			abort();
		own[i].key = r->key;
		own[i].value = r->n_values ? r->values[0] : "";
		(void)selector_req_holds(r, NULL);
		(void)selector_req_holds(r, own[i].value);
	}
	{
		struct kvlist own_labels = {own, sel.n};

		(void)label_selector_matches(&sel, &own_labels);
	}
out:
	free(own);
	free(text);
	arena_free(a);
	return 0;
}
