/*
 * executor: the real-time pool (worker threads over a bounded FIFO queue,
 * one timer thread moving delayed tasks to the queue when due; the pool
 * grows past its base size while tasks wait and no worker is free, and its
 * extra workers exit once idle) and the virtual-time discrete-event
 * executor (a min-heap of events run in (time, submission order) on the
 * caller's thread). Owns the tasks it has accepted until they run; never
 * owns their arguments.
 */
#include "runtime/executor.h"

#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- shared: a min-heap of timed events ------------------------------ */

struct event {
	int64_t due;  /* clock ns */
	uint64_t seq; /* submission order: breaks ties so runs are deterministic */
	task_fn fn;
	void *arg;
};

struct heap {
	struct event *v;
	size_t n, cap;
};

static int ev_before(const struct event *a, const struct event *b)
{
	return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static int heap_push(struct heap *h, struct event e)
{
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 16;
		struct event *v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return -1;
		h->v = v;
		h->cap = cap;
	}
	i = h->n++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!ev_before(&e, &h->v[parent]))
			break;
		h->v[i] = h->v[parent];
		i = parent;
	}
	h->v[i] = e;
	return 0;
}

static struct event heap_pop(struct heap *h)
{
	struct event top = h->v[0], last;
	size_t i = 0;

	assert(h->n > 0);
	last = h->v[--h->n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		const struct event *best = &last;

		if (l < h->n && ev_before(&h->v[l], best)) {
			m = l;
			best = &h->v[l];
		}
		if (r < h->n && ev_before(&h->v[r], best))
			m = r;
		if (m == i)
			break;
		h->v[i] = h->v[m];
		i = m;
	}
	if (h->n > 0)
		h->v[i] = last;
	return top;
}

/* ---- the executor ---------------------------------------------------- */

enum executor_kind { EXECUTOR_POOL, EXECUTOR_VIRTUAL };

/* A task waiting in the pool's ready queue. */
struct task {
	task_fn fn;
	void *arg;
	int timer; /* came from a timer (not counted against queue_cap) */
};

/* A worker thread's place. A slot is FREE (no thread), LIVE (a thread that
 * has not exited) or DONE (a retired thread not joined yet: whoever next
 * takes the slot, or the pool's end, joins it). */
enum slot_state { SLOT_FREE, SLOT_LIVE, SLOT_DONE };

struct slot {
	struct executor *ex;
	pthread_t thread;
	enum slot_state state;
};

struct executor {
	enum executor_kind kind;
	struct clock *clock;
	pthread_mutex_t mu;
	struct heap timers; /* pool: delayed tasks; virtual: every event */
	uint64_t seq;
	size_t running;     /* tasks inside fn(arg, false) */
	int closing;        /* shutdown began: submissions refused */

	/* pool only */
	pthread_cond_t work_cv;  /* workers: the queue is not empty, or stop */
	pthread_cond_t timer_cv; /* timer thread: an earlier timer, or stop */
	pthread_cond_t idle_cv;  /* shutdown: a task finished */
	struct task *ring;       /* ready queue, FIFO */
	size_t head, n, ring_cap;
	size_t queue_cap;
	size_t n_submitted; /* tasks in the ring from submit (<= queue_cap) */
	size_t timers_out;  /* timers accepted and not yet taken by a worker */
	int stop;           /* workers and timer thread exit */
	struct slot *slots; /* max_workers of them */
	int n_workers;      /* LIVE slots */
	int base_workers;   /* never fewer (they never retire) */
	int max_workers;    /* never more */
	int idle;           /* workers waiting for a task */
	int fresh;          /* workers started that have not looked for a task yet */
	int64_t idle_ns;    /* an extra worker idle this long exits */
	int peak;
	uint64_t grown, retired, grow_failed;
	sigset_t sigmask;   /* the signal mask of the thread that made the pool */
	pthread_t timer_thread;
	int timer_started;

	/* virtual only */
	int in_run; /* inside executor_run_until: no re-entry */
};

/* ---- pool ------------------------------------------------------------ */

static struct timespec ns_to_ts(int64_t t)
{
	struct timespec ts;

	if (t < 0)
		t = 0;
	ts.tv_sec = (time_t)(t / CLOCK_NS_PER_S);
	ts.tv_nsec = (long)(t % CLOCK_NS_PER_S);
	return ts;
}

/* Waits on 'cv' until signalled or until 't' on CLOCK_MONOTONIC (the real
 * clock's time base; the condition variables are created on it). */
static void cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t t)
{
	struct timespec ts = ns_to_ts(t);

	pthread_cond_timedwait(cv, mu, &ts);
}

static int ring_reserve(struct executor *ex, size_t need)
{
	struct task *v;
	size_t cap, i;

	if (need <= ex->ring_cap)
		return 0;
	cap = ex->ring_cap ? ex->ring_cap : 16;
	while (cap < need)
		cap *= 2;
	v = malloc(cap * sizeof(*v));
	if (!v)
		return -1;
	for (i = 0; i < ex->n; i++)
		v[i] = ex->ring[(ex->head + i) % ex->ring_cap];
	free(ex->ring);
	ex->ring = v;
	ex->ring_cap = cap;
	ex->head = 0;
	return 0;
}

/* Appends to the ready queue; the capacity was reserved beforehand. */
static void ring_push(struct executor *ex, struct task t)
{
	assert(ex->n < ex->ring_cap);
	ex->ring[(ex->head + ex->n) % ex->ring_cap] = t;
	ex->n++;
}

static struct task ring_pop(struct executor *ex)
{
	struct task t = ex->ring[ex->head];

	assert(ex->n > 0);
	ex->head = (ex->head + 1) % ex->ring_cap;
	ex->n--;
	return t;
}

/* The worker in 'slot' exits: it becomes DONE, for someone to join. Lock held. */
static void worker_retire(struct executor *ex, struct slot *slot)
{
	slot->state = SLOT_DONE;
	ex->n_workers--;
	ex->retired++;
	pthread_cond_broadcast(&ex->idle_cv); /* executor_wait_workers */
}

/*
 * Takes tasks until the pool stops. A worker above the base size that
 * finds no task for idle_ns retires; the base workers wait for ever. A
 * task is taken before retiring is considered, so none is left waiting
 * while a worker exits.
 */
static void *worker_main(void *p)
{
	struct slot *slot = p;
	struct executor *ex = slot->ex;
	int64_t idle_since = -1;

	pthread_sigmask(SIG_SETMASK, &ex->sigmask, NULL);
	pthread_mutex_lock(&ex->mu);
	ex->fresh--;
	for (;;) {
		struct task t;

		if (ex->stop)
			break; /* shutdown releases what is left */
		if (ex->n == 0) {
			if (ex->n_workers <= ex->base_workers) {
				ex->idle++;
				pthread_cond_wait(&ex->work_cv, &ex->mu);
				ex->idle--;
				continue;
			}
			{
				int64_t now = clock_now(ex->clock);

				if (idle_since < 0)
					idle_since = now;
				if (now - idle_since >= ex->idle_ns) {
					worker_retire(ex, slot);
					break;
				}
			}
			ex->idle++;
			cond_wait_until(&ex->work_cv, &ex->mu,
					ex->idle_ns > INT64_MAX - idle_since ? INT64_MAX
									     : idle_since + ex->idle_ns);
			ex->idle--;
			continue;
		}
		idle_since = -1;
		t = ring_pop(ex);
		if (t.timer)
			ex->timers_out--;
		else
			ex->n_submitted--;
		ex->running++;
		pthread_mutex_unlock(&ex->mu);
		t.fn(t.arg, false);
		pthread_mutex_lock(&ex->mu);
		ex->running--;
		if (ex->closing || (ex->running == 0 && ex->n == 0))
			pthread_cond_broadcast(&ex->idle_cv); /* shutdown, executor_wait_idle */
	}
	pthread_mutex_unlock(&ex->mu);
	return NULL;
}

/*
 * Starts one worker in a slot that is not LIVE (joining the thread that
 * retired from it first). The new thread starts with every signal blocked
 * and takes the pool maker's mask itself, so that no signal reaches it, nor
 * the caller, in between. Returns 0, or -1 (no slot, or the thread could
 * not be made). Lock held.
 */
static int spawn_worker(struct executor *ex)
{
	struct slot *slot = NULL;
	sigset_t all, old;
	int i, rc;

	for (i = 0; i < ex->max_workers; i++) {
		if (ex->slots[i].state != SLOT_LIVE) {
			slot = &ex->slots[i];
			break;
		}
	}
	if (!slot)
		return -1;
	if (slot->state == SLOT_DONE) {
		/* it marked itself DONE under the lock and only returns now */
		pthread_join(slot->thread, NULL);
		slot->state = SLOT_FREE;
	}
	slot->ex = ex;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&slot->thread, NULL, worker_main, slot);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return -1;
	slot->state = SLOT_LIVE;
	ex->n_workers++;
	ex->fresh++;
	if (ex->n_workers > ex->peak)
		ex->peak = ex->n_workers;
	return 0;
}

/*
 * Adds workers while more tasks wait than there are workers free to take
 * them (idle, or started and about to look), up to max_workers. The
 * workers there are may all be blocked in a slow call: a waiting task
 * does not wait for them. Lock held.
 */
static void pool_grow(struct executor *ex)
{
	while (!ex->stop && ex->n_workers < ex->max_workers &&
	       ex->n > (size_t)ex->idle + (size_t)ex->fresh) {
		if (spawn_worker(ex) < 0) {
			ex->grow_failed++;
			break; /* the task waits for a worker there is */
		}
		ex->grown++;
	}
}

/* Moves due timers to the ready queue, then sleeps until the next one is
 * due or an earlier one arrives. */
static void *timer_main(void *p)
{
	struct executor *ex = p;

	pthread_mutex_lock(&ex->mu);
	while (!ex->stop) {
		int64_t now = clock_now(ex->clock);
		int moved = 0;

		while (ex->timers.n > 0 && ex->timers.v[0].due <= now) {
			struct event e = heap_pop(&ex->timers);
			struct task t = { e.fn, e.arg, 1 };

			ring_push(ex, t);
			moved = 1;
		}
		if (moved) {
			pthread_cond_broadcast(&ex->work_cv);
			pool_grow(ex);
		}
		if (ex->timers.n == 0)
			pthread_cond_wait(&ex->timer_cv, &ex->mu);
		else
			cond_wait_until(&ex->timer_cv, &ex->mu, ex->timers.v[0].due);
	}
	pthread_mutex_unlock(&ex->mu);
	return NULL;
}

static int init_cond_monotonic(pthread_cond_t *cv)
{
	pthread_condattr_t attr;
	int rc;

	if (pthread_condattr_init(&attr) != 0)
		return -1;
	rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (rc == 0)
		rc = pthread_cond_init(cv, &attr);
	pthread_condattr_destroy(&attr);
	return rc == 0 ? 0 : -1;
}

/* Stops and joins the threads started so far, frees everything. */
static void pool_destroy(struct executor *ex)
{
	int i;

	pthread_mutex_lock(&ex->mu);
	ex->stop = 1; /* no worker starts from now on */
	pthread_cond_broadcast(&ex->work_cv);
	pthread_cond_broadcast(&ex->timer_cv);
	pthread_mutex_unlock(&ex->mu);
	for (i = 0; i < ex->max_workers; i++) {
		enum slot_state st;

		pthread_mutex_lock(&ex->mu);
		st = ex->slots[i].state; /* LIVE may still turn DONE: joined alike */
		pthread_mutex_unlock(&ex->mu);
		if (st != SLOT_FREE)
			pthread_join(ex->slots[i].thread, NULL);
	}
	if (ex->timer_started)
		pthread_join(ex->timer_thread, NULL);
	pthread_cond_destroy(&ex->work_cv);
	pthread_cond_destroy(&ex->timer_cv);
	pthread_cond_destroy(&ex->idle_cv);
	pthread_mutex_destroy(&ex->mu);
	free(ex->slots);
	free(ex->ring);
	free(ex->timers.v);
	free(ex);
}

/* Fills 'o' with a fixed pool's settings: 'workers' threads, no growth,
 * idle extra workers (none) retire after 30 s. */
void executor_pool_opts_default(struct executor_pool_opts *o, int workers, size_t queue_cap)
{
	o->workers = workers;
	o->max_workers = workers;
	o->queue_cap = queue_cap;
	o->idle_ns = 30 * CLOCK_NS_PER_S;
}

/*
 * Starts o->workers threads and a timer thread on the real clock. Returns
 * NULL when workers < 1, max_workers above EXECUTOR_MAX_WORKERS,
 * queue_cap < 1, idle_ns < 0, or a thread or allocation fails (nothing is
 * left running then). max_workers below workers means workers. Free with
 * executor_shutdown().
 */
struct executor *executor_new_pool_opts(const struct executor_pool_opts *o)
{
	struct executor *ex;
	int conds = 0, rc = 0;

	if (!o || o->workers < 1 || o->workers > EXECUTOR_MAX_WORKERS ||
	    o->max_workers > EXECUTOR_MAX_WORKERS || o->idle_ns < 0 || o->queue_cap < 1 ||
	    o->queue_cap > SIZE_MAX / 4 / sizeof(struct task))
		return NULL;
	ex = calloc(1, sizeof(*ex));
	if (!ex)
		return NULL;
	ex->kind = EXECUTOR_POOL;
	ex->clock = clock_real();
	ex->queue_cap = o->queue_cap;
	ex->base_workers = o->workers;
	ex->max_workers = o->max_workers > o->workers ? o->max_workers : o->workers;
	ex->idle_ns = o->idle_ns;
	pthread_sigmask(SIG_SETMASK, NULL, &ex->sigmask);
	if (pthread_mutex_init(&ex->mu, NULL) != 0) {
		free(ex);
		return NULL;
	}
	if (init_cond_monotonic(&ex->work_cv) == 0) {
		conds++;
		if (init_cond_monotonic(&ex->timer_cv) == 0) {
			conds++;
			if (init_cond_monotonic(&ex->idle_cv) == 0)
				conds++;
		}
	}
	if (conds < 3) {
		if (conds > 1)
			pthread_cond_destroy(&ex->timer_cv);
		if (conds > 0)
			pthread_cond_destroy(&ex->work_cv);
		pthread_mutex_destroy(&ex->mu);
		free(ex);
		return NULL;
	}
	ex->slots = calloc((size_t)ex->max_workers, sizeof(*ex->slots));
	if (!ex->slots || ring_reserve(ex, o->queue_cap) != 0)
		goto fail;
	if (pthread_create(&ex->timer_thread, NULL, timer_main, ex) != 0)
		goto fail;
	ex->timer_started = 1;
	pthread_mutex_lock(&ex->mu);
	while (rc == 0 && ex->n_workers < ex->base_workers)
		rc = spawn_worker(ex);
	pthread_mutex_unlock(&ex->mu);
	if (rc == 0)
		return ex;
fail:
	pool_destroy(ex);
	return NULL;
}

/* A fixed pool: executor_new_pool_opts() with executor_pool_opts_default(). */
struct executor *executor_new_pool(int workers, size_t queue_cap)
{
	struct executor_pool_opts o;

	executor_pool_opts_default(&o, workers, queue_cap);
	return executor_new_pool_opts(&o);
}

/* See executor.h. */
int executor_workers_for_rate(int base, double qps, int burst, int64_t latency_ns)
{
	double n = (double)base;

	if (qps > 0 && latency_ns > 0)
		n += ceil(qps * ((double)latency_ns / CLOCK_NS_PER_S));
	if (burst > 0)
		n += burst;
	if (!(n >= 1))
		return 1;
	return n > EXECUTOR_MAX_WORKERS ? EXECUTOR_MAX_WORKERS : (int)n;
}

static int pool_submit(struct executor *ex, int64_t delay_ns, task_fn fn, void *arg)
{
	int rc = -1;

	pthread_mutex_lock(&ex->mu);
	if (ex->closing)
		goto out;
	if (delay_ns <= 0) {
		struct task t = { fn, arg, 0 };

		if (ex->n_submitted >= ex->queue_cap)
			goto out;
		ring_push(ex, t); /* n <= n_submitted + timers_out < ring_cap */
		ex->n_submitted++;
		pthread_cond_signal(&ex->work_cv);
		pool_grow(ex);
	} else {
		struct event e;

		/* room in the ring for this timer once it is due, so the
		 * timer thread never allocates */
		if (ring_reserve(ex, ex->queue_cap + ex->timers_out + 1) != 0)
			goto out;
		e.due = clock_now(ex->clock);
		e.due = delay_ns > INT64_MAX - e.due ? INT64_MAX : e.due + delay_ns;
		e.seq = ex->seq++;
		e.fn = fn;
		e.arg = arg;
		if (heap_push(&ex->timers, e) != 0)
			goto out;
		ex->timers_out++;
		if (ex->timers.v[0].seq == e.seq)
			pthread_cond_signal(&ex->timer_cv); /* a new earliest timer */
	}
	rc = 0;
out:
	pthread_mutex_unlock(&ex->mu);
	return rc;
}

/* True when shutdown has nothing left to wait for before 'deadline'. */
static int pool_quiet(const struct executor *ex, int64_t deadline)
{
	return ex->n == 0 && ex->running == 0 &&
	       (ex->timers.n == 0 || ex->timers.v[0].due > deadline);
}

static size_t pool_shutdown(struct executor *ex, int64_t deadline)
{
	size_t cancelled = 0, i;

	assert(ex->kind == EXECUTOR_POOL);
	pthread_mutex_lock(&ex->mu);
	for (i = 0; i < (size_t)ex->max_workers; i++)
		assert(ex->slots[i].state != SLOT_LIVE ||
		       !pthread_equal(pthread_self(), ex->slots[i].thread)); /* not from a task */
	ex->closing = 1;
	while (!pool_quiet(ex, deadline) && clock_now(ex->clock) < deadline)
		cond_wait_until(&ex->idle_cv, &ex->mu, deadline);

	/* Workers take nothing more and the timer thread stops: what is left
	 * in the queue (in order), then the timers (in time order), is ours
	 * to release. The lock is dropped around each release so that it may
	 * call into the executor (a refused submit, executor_pending). */
	ex->stop = 1;
	pthread_cond_broadcast(&ex->work_cv);
	pthread_cond_broadcast(&ex->timer_cv);
	for (;;) {
		struct task t;

		if (ex->n > 0) {
			t = ring_pop(ex);
		} else if (ex->timers.n > 0) {
			struct event e = heap_pop(&ex->timers);

			t.fn = e.fn;
			t.arg = e.arg;
		} else {
			break;
		}
		pthread_mutex_unlock(&ex->mu);
		t.fn(t.arg, true);
		cancelled++;
		pthread_mutex_lock(&ex->mu);
	}
	ex->n_submitted = 0;
	ex->timers_out = 0;
	pthread_mutex_unlock(&ex->mu);

	/* A task still running past the deadline cannot be interrupted, only
	 * waited for. */
	pool_destroy(ex);
	return cancelled;
}

/* ---- virtual --------------------------------------------------------- */

/*
 * A virtual-time executor on 'vclock' (borrowed; it must outlive the
 * executor). Returns NULL when out of memory. Free with executor_shutdown().
 */
struct executor *executor_new_virtual(struct clock *vclock)
{
	struct executor *ex;

	if (!vclock)
		return NULL;
	ex = calloc(1, sizeof(*ex));
	if (!ex)
		return NULL;
	ex->kind = EXECUTOR_VIRTUAL;
	ex->clock = vclock;
	if (pthread_mutex_init(&ex->mu, NULL) != 0) {
		free(ex);
		return NULL;
	}
	return ex;
}

static int virtual_submit(struct executor *ex, int64_t delay_ns, task_fn fn, void *arg)
{
	struct event e;
	int rc = -1;

	pthread_mutex_lock(&ex->mu);
	if (ex->closing)
		goto out;
	e.due = clock_now(ex->clock);
	if (delay_ns > 0)
		e.due = delay_ns > INT64_MAX - e.due ? INT64_MAX : e.due + delay_ns;
	e.seq = ex->seq++;
	e.fn = fn;
	e.arg = arg;
	rc = heap_push(&ex->timers, e);
out:
	pthread_mutex_unlock(&ex->mu);
	return rc;
}

/* Runs events due at or before 'until' in (time, seq) order. */
static size_t virtual_run(struct executor *ex, int64_t until)
{
	size_t count = 0;

	pthread_mutex_lock(&ex->mu);
	assert(!ex->in_run); /* not from inside a task */
	ex->in_run = 1;
	while (ex->timers.n > 0 && ex->timers.v[0].due <= until) {
		struct event e = heap_pop(&ex->timers);

		ex->running++;
		pthread_mutex_unlock(&ex->mu);
		vclock_set(ex->clock, e.due);
		e.fn(e.arg, false);
		pthread_mutex_lock(&ex->mu);
		ex->running--;
		count++;
	}
	ex->in_run = 0;
	pthread_mutex_unlock(&ex->mu);
	return count;
}

static size_t virtual_shutdown(struct executor *ex, int64_t deadline)
{
	size_t cancelled = 0;

	pthread_mutex_lock(&ex->mu);
	ex->closing = 1;
	pthread_mutex_unlock(&ex->mu);
	virtual_run(ex, deadline);
	/* nobody else may use the executor now: no lock needed */
	while (ex->timers.n > 0) {
		struct event e = heap_pop(&ex->timers);

		e.fn(e.arg, true);
		cancelled++;
	}
	pthread_mutex_destroy(&ex->mu);
	free(ex->timers.v);
	free(ex);
	return cancelled;
}

/* ---- the interface --------------------------------------------------- */

/* Returns the executor's clock: the real clock for a pool, the vclock given
 * to executor_new_virtual() otherwise. Borrowed. */
struct clock *executor_clock(struct executor *ex)
{
	return ex->clock;
}

/* Queues fn(arg, false) to run now. Thread-safe (both kinds). Returns 0, or
 * -1 when the queue is full, on shutdown or out of memory (arg still the
 * caller's). */
int executor_submit(struct executor *ex, task_fn fn, void *arg)
{
	return executor_after(ex, 0, fn, arg);
}

/* Queues fn(arg, false) to run 'delay_ns' from now. Pool: a timer thread
 * moves it to the ready queue when due (timers do not count against the
 * queue capacity). Thread-safe. Returns as executor_submit(). */
int executor_after(struct executor *ex, int64_t delay_ns, task_fn fn, void *arg)
{
	assert(fn);
	if (ex->kind == EXECUTOR_POOL)
		return pool_submit(ex, delay_ns, fn, arg);
	return virtual_submit(ex, delay_ns, fn, arg);
}

/* Virtual: runs due events up to 'until_ns' and leaves the clock there.
 * Must not be called from inside a task. Pool: returns 0. */
size_t executor_run_until(struct executor *ex, int64_t until_ns)
{
	size_t count;

	if (ex->kind != EXECUTOR_VIRTUAL)
		return 0;
	count = virtual_run(ex, until_ns);
	vclock_set(ex->clock, until_ns);
	return count;
}

/* Virtual: runs events until none is left; the clock stands at the last
 * one's time. Pool: returns 0. */
size_t executor_run_all(struct executor *ex)
{
	if (ex->kind != EXECUTOR_VIRTUAL)
		return 0;
	return virtual_run(ex, INT64_MAX);
}

/* Tasks queued, delayed or running. Thread-safe. */
size_t executor_pending(struct executor *ex)
{
	size_t n;

	pthread_mutex_lock(&ex->mu);
	n = ex->timers.n + ex->running + (ex->kind == EXECUTOR_POOL ? ex->n : 0);
	pthread_mutex_unlock(&ex->mu);
	return n;
}

/* Pool: a consistent copy of the counts, taken under the lock. Virtual:
 * no workers; busy is 1 inside a task, queued the events not run yet. */
void executor_stats(struct executor *ex, struct executor_stats *st)
{
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&ex->mu);
	st->busy = (int)ex->running;
	if (ex->kind == EXECUTOR_POOL) {
		st->workers = ex->n_workers;
		st->base = ex->base_workers;
		st->max = ex->max_workers;
		st->peak = ex->peak;
		st->queued = ex->n;
		st->timers = ex->timers.n;
		st->grown = ex->grown;
		st->retired = ex->retired;
		st->grow_failed = ex->grow_failed;
	} else {
		st->queued = ex->timers.n;
	}
	pthread_mutex_unlock(&ex->mu);
}

/* Pool: waits on idle_cv (broadcast when a worker retires) until at most
 * 'workers' are left or the deadline passes. Virtual: returns 0. */
int executor_wait_workers(struct executor *ex, int workers, int64_t deadline_ns)
{
	int n;

	if (ex->kind != EXECUTOR_POOL)
		return 0;
	pthread_mutex_lock(&ex->mu);
	while (ex->n_workers > workers && clock_now(ex->clock) < deadline_ns)
		cond_wait_until(&ex->idle_cv, &ex->mu, deadline_ns);
	n = ex->n_workers;
	pthread_mutex_unlock(&ex->mu);
	return n;
}

/* Pool: waits on idle_cv (broadcast when the last running task returns
 * with nothing queued) for no task queued or running. Virtual: true when no
 * event is left. */
bool executor_wait_idle(struct executor *ex, int64_t deadline_ns)
{
	bool quiet;

	pthread_mutex_lock(&ex->mu);
	if (ex->kind == EXECUTOR_POOL)
		while ((ex->n > 0 || ex->running > 0) && clock_now(ex->clock) < deadline_ns)
			cond_wait_until(&ex->idle_cv, &ex->mu, deadline_ns);
	quiet = ex->kind == EXECUTOR_POOL ? ex->n == 0 && ex->running == 0 : ex->timers.n == 0;
	pthread_mutex_unlock(&ex->mu);
	return quiet;
}

/* See executor.h. Pool: must not be called from one of its tasks; returns
 * once every running task has returned (they cannot be interrupted), the
 * arguments of the rest released by then. NULL is ignored (returns 0). */
size_t executor_shutdown(struct executor *ex, int64_t deadline_ns)
{
	if (!ex)
		return 0;
	if (ex->kind == EXECUTOR_POOL)
		return pool_shutdown(ex, deadline_ns);
	return virtual_shutdown(ex, deadline_ns);
}
