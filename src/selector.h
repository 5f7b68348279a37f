/*
 * selector: label selectors in the kubectl string form, parsed into
 * objects.h's struct label_selector (label_selector_matches() in
 * objects.h matches one).
 */
#ifndef LUASCALE_SELECTOR_H
#define LUASCALE_SELECTOR_H

#include "errbuf.h"
#include "objects.h"

struct arena;

/*
 * Parses a label selector in the kubectl string form:
 * "a=b,c!=d,e,!f,g in (x,y),h notin (z)". Strings go to the arena.
 * Returns 0 or -1 with a message naming the bad part.
 */
int label_selector_parse(struct arena *a, const char *text,
			 struct label_selector *out, struct errbuf *err);

#endif
