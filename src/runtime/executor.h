/*
 * executor: where work runs. In real time a fixed pool of worker threads
 * takes tasks from a bounded queue and a timer thread fires delayed ones;
 * in virtual time (tests, simulate, demo) one thread runs every task as a
 * discrete event in time order, moving a virtual clock. Code that submits
 * work does not know which one it has.
 *
 * Tasks must not block on each other. In real time a task may block on I/O
 * (a cloud call); in virtual time tasks never block: waiting is done by
 * scheduling a continuation with executor_after().
 */
#ifndef LUASCALE_EXECUTOR_H
#define LUASCALE_EXECUTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/clock.h"

struct executor;

/* A task. 'cancelled' is true when it runs only to release its argument
 * because the executor shut down before it could start. */
typedef void (*task_fn)(void *arg, bool cancelled);

/*
 * A real-time pool: 'workers' threads, at most 'queue_cap' tasks waiting
 * (timers not counted). Returns NULL on failure.
 */
struct executor *executor_new_pool(int workers, size_t queue_cap);

/* A virtual-time executor on 'clock' (a vclock it moves; borrowed). */
struct executor *executor_new_virtual(struct clock *vclock);

/* The executor's clock (borrowed). */
struct clock *executor_clock(struct executor *ex);

/*
 * Runs fn(arg, false) as soon as a worker is free (virtual: at the current
 * time, after the events already due). Returns 0, or -1 when the queue is
 * full or the executor is shutting down (fn is then NOT called: the caller
 * still owns arg).
 */
int executor_submit(struct executor *ex, task_fn fn, void *arg);

/* Runs fn(arg, false) 'delay_ns' from now (<= 0: like submit). Same returns. */
int executor_after(struct executor *ex, int64_t delay_ns, task_fn fn, void *arg);

/*
 * Virtual executor only: runs events in time order, moving the clock, until
 * none is left or the next is later than 'until_ns' (the clock then stands
 * at until_ns). Returns the number of tasks run. Real pool: returns 0.
 */
size_t executor_run_until(struct executor *ex, int64_t until_ns);

/* Virtual: runs until no event is left (beware of periodic tasks). */
size_t executor_run_all(struct executor *ex);

/* Number of tasks queued or running, timers included. */
size_t executor_pending(struct executor *ex);

/*
 * Stops taking work and waits until 'deadline_ns' (on the executor's
 * clock) for running and queued tasks to finish; tasks and timers not
 * started by then run with cancelled = true so their arguments are
 * released. Returns the number of tasks cancelled. Then frees the executor.
 * A virtual executor runs due events up to the deadline first.
 */
size_t executor_shutdown(struct executor *ex, int64_t deadline_ns);

#endif
