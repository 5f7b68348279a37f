/*
 * view: the cluster as Lua tables for one reconcile — cluster.now, .nodes,
 * .pending, .groups — and the helpers backed by sched.c (fits, pack,
 * drainable), each charged to the policy's instruction budget by an upper
 * bound of its work before it runs. A node's pods are built only when the
 * policy asks for them.
 * The view is valid for one call; afterwards its helpers refuse to run.
 */
#ifndef LUASCALE_VIEW_H
#define LUASCALE_VIEW_H

#include "errbuf.h"
#include "model.h"
#include "sched.h"

struct lua_State;
struct sandbox;

/*
 * Builds the view of 's' in the sandbox and pushes the cluster table.
 * 's' and 'dopts' are borrowed until view_end(). 'notes': are the plan's
 * per-node notes read this round (luascale.native.explaining() says so).
 * Returns 0 or -1 (e.g. the heap cap was hit) with nothing pushed.
 */
int view_begin(struct sandbox *sb, const struct snapshot *s,
	       const struct drain_opts *dopts, bool notes, struct errbuf *err);

/* Invalidates the current view (its helpers now raise an error). */
void view_end(struct sandbox *sb);

/* Registers the helper module "luascale.native" in the sandbox:
 * where(), cpu(text), bytes(text), duration(text), format_cpu(cores),
 * format_bytes(n), explaining(), utilization(node). Called once per sandbox. */
void view_register_native(struct sandbox *sb);

#endif
