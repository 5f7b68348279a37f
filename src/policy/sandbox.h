/*
 * sandbox: one Lua 5.4 state with only the libraries a policy may use, an
 * instruction budget, a heap cap and a CPU-time deadline per call that the
 * policy cannot escape (not with coroutines, pcall or __close), a cancel
 * flag another thread may raise, and a require() limited to the luascale
 * library folder and the policy's own folder.
 * It knows nothing about clusters or plans; see host.c for that.
 */
#ifndef LUASCALE_SANDBOX_H
#define LUASCALE_SANDBOX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"

struct lua_State;

struct sandbox_limits {
	int64_t instructions; /* per call; <= 0 means the default (200M) */
	int64_t memory;       /* bytes of Lua heap; <= 0 means the default (512Mi) */
	int64_t cpu_ms;       /* CPU time of the calling thread per call; <= 0: 10 s
	                       * (at most 10^9, about 11 days) */
	/* May be NULL. When another thread sets it, the running call fails at
	 * its next instruction hook ("policy abandoned: shutting down"), and
	 * so does every later call while it stays set. Borrowed: it must
	 * outlive the sandbox. */
	const atomic_bool *cancel;
	/* Benchmarks only: calls run without the instruction hook, so with no
	 * instruction budget, no deadline and no cancel flag (the heap cap
	 * stays). What the hook costs is measured against it. */
	bool uncounted;
};

struct sandbox;

/*
 * Creates a sandboxed state. 'lib_dir' is the folder holding the luascale Lua modules;
 * 'policy_dir' the policy's folder (both searched by require). 'now' is
 * what os.time() returns with no argument (see sandbox_set_now).
 * Returns NULL with a message on failure.
 */
struct sandbox *sandbox_new(const char *lib_dir, const char *policy_dir,
			    const struct sandbox_limits *lim, struct errbuf *err);

void sandbox_free(struct sandbox *sb);

/* The state, borrowed. Push and pop as usual; do not close it. */
struct lua_State *sandbox_state(struct sandbox *sb);

/* Sets the clock the sandbox shows as os.time() (unix seconds). */
void sandbox_set_now(struct sandbox *sb, int64_t now);

/*
 * Loads a Lua source file (text only) and leaves the chunk on the stack.
 * Chunk name "@path" so errors read "path:LINE: ...". Returns 0 or -1.
 */
int sandbox_loadfile(struct sandbox *sb, const char *path, struct errbuf *err);

/*
 * Calls the function below 'nargs' arguments on the stack, like lua_pcall
 * with 'nresults', under the limits: the instruction counter and the CPU
 * clock start at 0, the heap cap is enforced, and once any limit is
 * exceeded (or the cancel flag is set) every further Lua instruction and
 * every library call, in every coroutine, raises, so neither a pcall nor a
 * __close handler in the policy can carry on.
 * On error returns -1 with "file:line: message" (non-string errors are
 * described) and leaves nothing of the call on the stack.
 */
int sandbox_call(struct sandbox *sb, int nargs, int nresults, struct errbuf *err);

/* Runs 'fn' (a C function) in protected mode under the heap cap but without
 * an instruction budget (used to build the cluster view). Same contract as
 * sandbox_call. */
int sandbox_cpcall(struct sandbox *sb, int (*fn)(struct lua_State *), void *ud,
		   struct errbuf *err);

/*
 * For C functions the policy calls (cluster:pack, ...): charges 'work'
 * instructions to the running call and raises the limit error (a Lua
 * error, located at the calling Lua line) when the budget, the deadline,
 * the memory cap or the cancel flag says the call is over. Call it before
 * doing the work. No effect outside a sandbox_call.
 */
void sandbox_charge(struct lua_State *L, double work);

/* The instruction budget of one call. */
int64_t sandbox_budget(const struct sandbox *sb);

/* Figures of the last sandbox_call. */
int64_t sandbox_instructions(const struct sandbox *sb);
size_t sandbox_memory(const struct sandbox *sb);
/* The largest Lua heap seen during the last sandbox_call, bytes. */
size_t sandbox_memory_peak(const struct sandbox *sb);

/* Registers a module table at the top of the stack under 'name' so that
 * require(name) returns it. Pops the table. */
void sandbox_preload(struct sandbox *sb, const char *name);

/* Replaces the table at the top of the stack by a read-only proxy of it
 * (reads, # via __index, pairs; writes and rawset raise). */
void sandbox_freeze(struct lua_State *L);

/* The folder of the luascale Lua library this sandbox requires from. */
const char *sandbox_lib_dir(const struct sandbox *sb);

/* The sandbox that owns 'L' (any thread of it). */
struct sandbox *sandbox_of(struct lua_State *L);

#endif
