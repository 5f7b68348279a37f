/*
 * plan_decode: reads the value a policy's reconcile() returned into a
 * struct plan, with raw access only (no metamethod, so no policy code, runs)
 * and within the size limits of plan.h. The Kubernetes syntax of every name
 * is checked here; what the names refer to is engine/safety.c's business.
 */
#ifndef LUASCALE_PLAN_DECODE_H
#define LUASCALE_PLAN_DECODE_H

#include <lua.h>

#include "errbuf.h"
#include "policy/plan.h"

/*
 * Decodes the value on the top of L's stack (a plan table or nil) into
 * 'out' (initialised here; free with plan_free) and pops it. 'fn' is the
 * stack index of the reconcile function that returned it (0: none) and
 * 'path' the policy's file; they name where a malformed plan came from.
 * Every string is length-checked before it is copied. Anything the decoder
 * does not understand — a list instead of a plan, an unknown field, a wrong
 * type, a name Kubernetes would refuse, a field or plan over its size
 * limit — is an error. Returns 0, or -1 with 'err' set to
 * "FILE:LINE: reconcile returned a malformed plan: ..." and 'out' empty.
 */
int plan_decode(lua_State *L, int fn, const char *path, struct plan *out,
		struct errbuf *err);

#endif
