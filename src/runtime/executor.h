/*
 * executor: where work runs. In real time a pool of worker threads takes
 * tasks from a bounded queue and a timer thread fires delayed ones; the
 * pool may grow while tasks wait and every worker is busy (blocked in a
 * slow call), and shrinks back when its extra workers are idle;
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

/* The most threads a pool may have. */
#define EXECUTOR_MAX_WORKERS 256

/* How long a blocking call (a cloud's launch) may be expected to hold a
 * worker, for sizing a pool from rates (executor_workers_for_rate). */
#define EXECUTOR_CALL_LATENCY_NS (30 * CLOCK_NS_PER_S)

struct executor_pool_opts {
	int workers;      /* the base: started at once, never retire (>= 1) */
	int max_workers;  /* the pool grows up to this many while tasks wait and
			   * no worker is free (<= workers: a fixed pool) */
	size_t queue_cap; /* tasks waiting at most (timers not counted) */
	int64_t idle_ns;  /* a worker above the base that found no task for
			   * this long exits (0: as soon as the queue is empty) */
};

/* A fixed pool of 'workers' (max_workers = workers, idle_ns 30 s). */
void executor_pool_opts_default(struct executor_pool_opts *o, int workers, size_t queue_cap);

/*
 * A real-time pool. Whenever a task is queued and more tasks wait than
 * there are workers free to take them, a worker is added (up to
 * max_workers), so tasks that block in slow calls do not hold the rest
 * back; added workers exit after idle_ns without work. Returns NULL on bad
 * options (workers < 1, either count above EXECUTOR_MAX_WORKERS,
 * queue_cap < 1, idle_ns < 0) or failure. Worker threads run with the
 * signal mask of the thread that made the pool.
 */
struct executor *executor_new_pool_opts(const struct executor_pool_opts *o);

/*
 * A fixed real-time pool: 'workers' threads, at most 'queue_cap' tasks
 * waiting (timers not counted). Returns NULL on failure.
 */
struct executor *executor_new_pool(int workers, size_t queue_cap);

/*
 * How many workers let calls limited to 'qps' a second with 'burst' saved,
 * each holding its worker up to 'latency_ns', run at the bucket's rate
 * with 'base' workers to spare for other work: base + burst +
 * ceil(qps × latency), at least 1, at most EXECUTOR_MAX_WORKERS.
 */
int executor_workers_for_rate(int base, double qps, int burst, int64_t latency_ns);

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

struct executor_stats {
	int workers;          /* threads now (pool) */
	int busy;             /* tasks running */
	size_t queued;        /* tasks ready, waiting for a worker (virtual: events) */
	size_t timers;        /* delayed tasks not due yet (pool) */
	int base, max, peak;  /* the pool's base and cap; most threads at once */
	uint64_t grown;       /* workers added above the base so far */
	uint64_t retired;     /* workers that exited idle so far */
	uint64_t grow_failed; /* a worker was wanted but its thread could not be made */
};

/* The executor's counts now (thread-safe). */
void executor_stats(struct executor *ex, struct executor_stats *st);

/*
 * Pool: waits until at most 'workers' threads are left (extra workers
 * retire once idle) or 'deadline_ns' on the executor's clock passes.
 * Returns the number of threads then. Virtual: returns 0 at once.
 */
int executor_wait_workers(struct executor *ex, int workers, int64_t deadline_ns);

/*
 * Pool: waits until no task is queued or running (timers not counted) or
 * 'deadline_ns' passes; true when it is so. Must not be called from one of
 * its tasks. Virtual: true when no event is left (does not run them).
 */
bool executor_wait_idle(struct executor *ex, int64_t deadline_ns);

/*
 * Stops taking work and waits until 'deadline_ns' (on the executor's
 * clock) for running and queued tasks to finish; tasks and timers not
 * started by then run with cancelled = true so their arguments are
 * released. Returns the number of tasks cancelled. Then frees the executor.
 * A virtual executor runs due events up to the deadline first.
 */
size_t executor_shutdown(struct executor *ex, int64_t deadline_ns);

#endif
