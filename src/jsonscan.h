/*
 * jsonscan: a streaming scanner for one JSON object document, fed in chunks
 * of any size. It hands each element of the top-level "items" array to a
 * callback as raw JSON text and remembers the top-level "kind", so a List of
 * any size is decoded one item at a time. In parse mode it also parses each
 * item, in the same pass that finds where it ends, into a read-only cJSON
 * tree whose memory is reused from item to item; otherwise the callback
 * parses the text itself. It knows nothing about Kubernetes.
 */
#ifndef LUASCALE_JSONSCAN_H
#define LUASCALE_JSONSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"

struct jsonscan;
struct cJSON;

/* The default caps: one item, like one object from the API server (the
 * informer's cap), and the whole input. */
#define JSONSCAN_MAX_ITEM ((size_t)64 << 20)
#define JSONSCAN_MAX_TOTAL ((uint64_t)4 << 30)

/*
 * Called once per element of the top-level "items" array, in order. 'data'
 * (borrowed, valid during the call only, not NUL-terminated) holds the
 * element's text, 'offset' its byte offset in the document. Returns 0, or
 * -1 with a message in 'err' to stop the scan.
 */
typedef int (*jsonscan_item_fn)(void *ctx, const char *data, size_t len,
				size_t index, uint64_t offset, struct errbuf *err);

/*
 * Returns a scanner or NULL when out of memory. With 'keep_whole', the
 * document text is kept (copied) until an "items" array shows it is a list,
 * so a single-object document can be parsed whole at the end.
 */
struct jsonscan *jsonscan_new(jsonscan_item_fn fn, void *ctx, bool keep_whole);

void jsonscan_free(struct jsonscan *sc);

/*
 * Parse mode (off by default; set it before the first feed): each item is
 * parsed while it is delimited, and jsonscan_item_tree() gives the tree
 * during the callback. Errors inside an item name it and the byte:
 * "items[N]: invalid JSON at byte B: what", "invalid JSON at byte B:
 * expected '}', found ']'" for a closing bracket of the wrong kind,
 * "nesting too deep" past 1000 levels (cJSON's limit).
 */
void jsonscan_set_parse(struct jsonscan *sc, bool parse);

/*
 * In parse mode, during the item callback: the item as a cJSON tree,
 * borrowed and valid during the call only. It must only be read (never
 * passed to cJSON_Delete or modified). NULL outside a callback or when
 * not in parse mode.
 */
const struct cJSON *jsonscan_item_tree(const struct jsonscan *sc);

/* Sets the caps (0: the default): an item longer than 'max_item' bytes (or,
 * with 'keep_whole', a document that is not a List) is an error naming
 * items[N]; so is input beyond 'max_total' bytes in all. */
void jsonscan_set_limits(struct jsonscan *sc, size_t max_item, uint64_t max_total);

/* Feeds the next chunk. Returns 0, or -1 with "invalid JSON at byte N: ...",
 * "items[N] (at byte B): ..." for an item over the cap or a string holding
 * \u0000 (anywhere in the document), or the callback's message. After an
 * error the scanner is spent. */
int jsonscan_feed(struct jsonscan *sc, const char *data, size_t len,
		  struct errbuf *err);

/* Declares the end of input. Returns 0 when the document was complete, or
 * -1 with "unexpected end of input at byte N ...". */
int jsonscan_end(struct jsonscan *sc, struct errbuf *err);

/* The top-level "kind" string seen so far, or NULL. */
const char *jsonscan_kind(const struct jsonscan *sc);

/* True once a top-level "items" array started. */
bool jsonscan_is_list(const struct jsonscan *sc);

/* With 'keep_whole' and no "items" array: the whole document text
 * (borrowed, NUL-terminated). NULL otherwise. */
const char *jsonscan_whole(const struct jsonscan *sc, size_t *len);

#endif
