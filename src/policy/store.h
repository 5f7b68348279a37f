/*
 * store: copies a policy's store — plain data: strings, numbers, booleans
 * and tables of them — from one Lua state to another, so the store survives
 * a reload into a fresh sandbox. Values that are not data (functions,
 * coroutines, userdata) and tables nested too deep are left out and named.
 */
#ifndef LUASCALE_STORE_H
#define LUASCALE_STORE_H

#include <stddef.h>

#include "errbuf.h"

struct lua_State;

/*
 * Pushes onto 'to' a deep copy of the table at index 'idx' of 'from'.
 * Reads 'from' with raw access only (no metamethods run). A table reached
 * twice is copied twice (no sharing is kept; a cycle stops at the depth
 * limit). 'dropped' (may be NULL) receives a comma-separated list of the
 * paths left out, e.g. "store.cb (a function)". Returns 0, or -1 with
 * nothing pushed when 'to' ran out of memory.
 */
int store_copy(struct lua_State *from, int idx, struct lua_State *to,
	       char *dropped, size_t dropped_len, struct errbuf *err);

#endif
