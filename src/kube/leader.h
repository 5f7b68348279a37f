/*
 * leader: leader election on a coordination.k8s.io/v1 Lease with client-go's
 * semantics (takeover by the observer's own clock, optimistic updates,
 * release on stop). It owns the Lease traffic and the leading state; what
 * a leader does is the caller's (leader_is_leading() is the gate). */
#ifndef LUASCALE_KUBE_LEADER_H
#define LUASCALE_KUBE_LEADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"

struct clock;
struct fence;
struct kube_client;
struct logger;
struct leader;

#define LEADER_IDENTITY_MAX 320

struct leader_opts {
	struct kube_client *client;  /* borrowed; its own client is best (no write
				      * rate limit, a short request timeout) */
	struct clock *clock;         /* NULL: clock_real() */
	const struct logger *log;    /* NULL: silent */
	const char *ns, *name;       /* the Lease (copied) */
	const char *identity;        /* holderIdentity (copied) */
	int64_t lease_duration_ns;   /* 15 s in client-go */
	int64_t renew_deadline_ns;   /* 10 s: < lease_duration */
	int64_t retry_period_ns;     /* 2 s: < renew_deadline */
	/* Called (on the thread that made the change: leader_step's) when this
	 * process starts or stops leading. May be NULL. */
	void (*on_change)(void *ctx, bool leading);
	void *ctx;
	/* The write fence (runtime/fence.h; borrowed, NULL none): opened
	 * until start of renewal + renew_deadline by every successful
	 * acquire or renew, closed when this process stops leading. */
	struct fence *fence;
	/* Asked before every acquire or renew (on the step's thread): false
	 * when the process is not healthy (its loop has not come round
	 * within the health limit). Then nothing is sent, and a leader
	 * steps down rather than keep the Lease it cannot use. NULL: always
	 * healthy. Uses 'ctx'. */
	bool (*may_renew)(void *ctx);
};

/*
 * Returns an elector (nothing sent yet), or NULL with a message when the
 * durations are not lease_duration > renew_deadline > retry_period > 0, or
 * the namespace, name or identity are empty or too long.
 */
struct leader *leader_new(const struct leader_opts *opts, struct errbuf *err);

/* Stops the thread (leader_start) if any and frees. NULL is a no-op. */
void leader_free(struct leader *l);

/*
 * One round of the elector at the clock's now: acquire or renew the Lease
 * (one GET and, when it may, one create or update; a leader whose record
 * is current updates without the GET), then the state: a standby that got
 * the Lease leads; a leader that has not renewed for renew_deadline stops
 * leading (on_change false) even though the Lease may still name it.
 * Returns 1 when this process holds the Lease after the call, 0 when not.
 */
int leader_step(struct leader *l);

/*
 * Whether this process may act now: it leads, and its last successful
 * renew is less than renew_deadline old by the clock (so a leader whose
 * renewals hang stops acting at the deadline, before its step notices).
 * Any thread.
 */
bool leader_is_leading(struct leader *l);

/* Whether a step has reached the API server at least once (the process
 * knows who leads). Any thread. */
bool leader_observed(struct leader *l);

/* The holder last seen ("" none or unknown), into 'out'. Any thread. */
void leader_holder(struct leader *l, char *out, size_t outlen);

/* Leadership changes so far (became leader, stopped leading). Any thread. */
uint64_t leader_transitions(struct leader *l);

/*
 * Runs leader_step every retry_period on a thread of its own (real clock).
 * Returns 0, or -1 with a message.
 */
int leader_start(struct leader *l, struct errbuf *err);

/* Ends the thread (a request in flight ends with its timeout). Idempotent. */
void leader_stop(struct leader *l);

/*
 * Gives the Lease up when this process holds it: holderIdentity cleared,
 * leaseDurationSeconds 1, so another candidate takes it at its next try.
 * Stops leading first. Call after leader_stop. Returns 0 (released, or
 * nothing to release), or -1 with a message.
 */
int leader_release(struct leader *l, struct errbuf *err);

/*
 * The default identity: $POD_NAME (checked: a DNS subdomain) or the host
 * name, then "_" and 16 random hex digits. Returns 0, or -1 with a message.
 * 'getenv_fn' NULL: getenv.
 */
int leader_default_identity(char *out, size_t outlen, const char *(*getenv_fn)(const char *),
			    struct errbuf *err);

#endif
