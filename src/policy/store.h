/*
 * store: copies a policy's store — plain data: strings, numbers, booleans
 * and tables of them — from one Lua state to another, so the store survives
 * a reload into a fresh sandbox. Values that are not data (functions,
 * coroutines, userdata) and tables nested too deep are left out and named;
 * a table reached twice (shared, or in a cycle) is copied once.
 */
#ifndef LUASCALE_STORE_H
#define LUASCALE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"

struct lua_State;

/*
 * Pushes onto 'to' a deep copy of the table at index 'idx' of 'from'.
 * Reads 'from' with raw access only (no metamethods run). A table reached
 * twice is copied once: shared references and cycles are kept as they
 * are. Tables nested deeper than 32 levels are left out. The copy costs
 * one unit of work per value and one per 16 string bytes; past 'max_work'
 * units (<= 0: no limit) it stops with an error, as it does when 'to' runs
 * out of memory (its allocator's cap). 'dropped' (may be NULL) receives a
 * comma-separated list of the paths left out, e.g. "store.cb (a
 * function)". Returns 0, or -1 with a message and nothing pushed.
 */
int store_copy(struct lua_State *from, int idx, struct lua_State *to, int64_t max_work,
	       char *dropped, size_t dropped_len, struct errbuf *err);

#endif
