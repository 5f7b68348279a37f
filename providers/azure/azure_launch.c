/*
 * azure_launch: a launch on a scale set — the capacity read and written
 * in one turn of the group's writes (If-Match on the etag, one re-read on
 * 412, nothing written from a size not read then), the long-running
 * operation followed through Azure-AsyncOperation or Location at the
 * times Retry-After names, each new VM reported as the list shows it, and
 * VMs that failed to provision given back as a failed launch.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "providers/azure/azure_internal.h"
#include "providers/cloudhttp/groupcache.h"

#define MAX_POLL_NS (120 * CLOCK_NS_PER_S)

/* ---- long-running operations ---- */

struct lro {
	char url[1024];
	bool async;             /* Azure-AsyncOperation (a status body), else Location (202 until done) */
	bool done;
	int64_t next_ns;        /* when to look next */
};

static int64_t poll_delay(const struct az_prov *ap, int64_t retry_after_ms)
{
	/* Retry-After: 0 would be a busy loop: the poll interval then */
	int64_t d = retry_after_ms > 0 ? retry_after_ms * CLOCK_NS_PER_MS : ap->poll_ns;

	return d > MAX_POLL_NS ? MAX_POLL_NS : d;
}

/* What the answer that started an operation says of how to follow it. */
static void lro_start(const struct az_prov *ap, const struct arm_resp *r, struct lro *l)
{
	memset(l, 0, sizeof(*l));
	if (r->async[0]) {
		snprintf(l->url, sizeof(l->url), "%s", r->async);
		l->async = true;
	} else if (r->location[0]) {
		snprintf(l->url, sizeof(l->url), "%s", r->location);
	} else {
		l->done = true; /* answered at once */
	}
	l->next_ns = clock_now(ap->clock) + poll_delay(ap, r->retry_after_ms);
}

/* One look at an operation (when it is time). 0: still going or done
 * (l->done), -1: it failed, with 'st'. */
static int lro_poll(struct provider *p, struct lro *l, struct provider_status *st)
{
	struct az_prov *ap = AP(p);
	struct arm_resp r;
	int rc = 0;

	if (l->done)
		return 0;
	if (cloudcall_wait_until(ap->clock, ap->cancel, l->next_ns) < 0) {
		azure_status(st, PROVIDER_CANCELLED, "stopped following the operation: luascale is stopping");
		return -1;
	}
	if (azure_call(p, false, "lro", "GET", l->url, NULL, NULL, &r, st) < 0) {
		if (st->code == PROVIDER_THROTTLED || (st->code == PROVIDER_TRANSIENT && r.status == 0)) {
			/* no word on the operation (throttled, no answer): look again later */
			l->next_ns = clock_now(ap->clock) + poll_delay(ap, r.retry_after_ms);
			memset(st, 0, sizeof(*st));
			azure_resp_free(&r);
			return 0;
		}
		azure_resp_free(&r);
		return -1;
	}
	if (l->async) {
		const char *s = azure_jstr(r.json, "status");

		if (!strcasecmp(s, "Succeeded")) {
			l->done = true;
		} else if (!strcasecmp(s, "Failed") || !strcasecmp(s, "Canceled")) {
			struct azure_error e;

			azure_error_from_json(cJSON_GetObjectItemCaseSensitive(r.json, "error"), 200, &e);
			azure_status(st, e.code[0] ? azure_error_class(&e) : PROVIDER_TRANSIENT, "operation %s: %s%s%s",
				     s, e.code[0] ? e.code : "no error code", e.message[0] ? ": " : "", e.message);
			if (st->code == PROVIDER_THROTTLED)
				st->code = PROVIDER_TRANSIENT;
			l->done = true;
			rc = -1;
		}
	} else if (r.status != 202) {
		l->done = true;
	}
	if (!l->done)
		l->next_ns = clock_now(ap->clock) + poll_delay(ap, r.retry_after_ms);
	azure_resp_free(&r);
	return rc;
}

/* ---- launch ---- */

/* The scale set as read this round: its capacity, etag, location and sku. */
struct vmss_read {
	int capacity;
	char etag[160];
	char location[64];
	char sku[64];
	char tier[32];
	int tag_max;
	cJSON *before;          /* the VMs before the write */
};

static int read_vmss(struct provider *p, const struct az_group *g, struct vmss_read *v,
		     struct provider_status *st)
{
	struct az_prov *ap = AP(p);
	struct arm_resp r;
	const cJSON *sku;
	char path[1024];

	cJSON_Delete(v->before);
	memset(v, 0, sizeof(*v));
	v->tag_max = -1;
	azure_vmss_path(ap, g, "", path, sizeof(path));
	if (azure_call(p, false, "vmss.get", "GET", path, NULL, NULL, &r, st) < 0) {
		azure_resp_free(&r);
		return -1;
	}
	sku = cJSON_GetObjectItemCaseSensitive(r.json, "sku");
	if (azure_capacity_of(r.json, &v->capacity) < 0 || !azure_jstr(sku, "name")[0] || !azure_jstr(r.json, "location")[0]) {
		/* never a capacity computed from an unknown size */
		azure_status(st, PROVIDER_TRANSIENT, "scale set %s: the answer has no sku.capacity, sku.name or location: "
			     "nothing written", g->vmss);
		azure_resp_free(&r);
		return -1;
	}
	snprintf(v->etag, sizeof(v->etag), "%s", r.etag);
	snprintf(v->location, sizeof(v->location), "%s", azure_jstr(r.json, "location"));
	snprintf(v->sku, sizeof(v->sku), "%s", azure_jstr(sku, "name"));
	snprintf(v->tier, sizeof(v->tier), "%s", azure_jstr(sku, "tier"));
	if (azure_tag_int(cJSON_GetObjectItemCaseSensitive(r.json, "tags"), "max", &v->tag_max) != 0)
		v->tag_max = -1;
	azure_resp_free(&r);
	return azure_list_vms(p, g, &v->before, st);
}

static bool in_list(const cJSON *vms, const char *id)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, vms)
		if (!strcmp(azure_jstr(it, "instanceId"), id))
			return true;
	return false;
}

/* PUT the sparse body {location, sku} with If-Match. */
static int write_capacity(struct provider *p, const struct az_group *g, const struct vmss_read *v, int capacity,
			  struct arm_resp *r, struct provider_status *st)
{
	struct az_prov *ap = AP(p);
	cJSON *body = cJSON_CreateObject(), *sku;
	char path[1024];
	int rc;

	sku = body ? cJSON_AddObjectToObject(body, "sku") : NULL;
	if (!sku || !cJSON_AddStringToObject(body, "location", v->location) ||
	    !cJSON_AddStringToObject(sku, "name", v->sku) ||
	    (v->tier[0] && !cJSON_AddStringToObject(sku, "tier", v->tier)) ||
	    !cJSON_AddNumberToObject(sku, "capacity", capacity)) {
		cJSON_Delete(body);
		memset(r, 0, sizeof(*r));
		azure_status(st, PROVIDER_TRANSIENT, "out of memory");
		return -1;
	}
	azure_vmss_path(ap, g, "", path, sizeof(path));
	/* the launch took the write token before it read the size */
	rc = azure_call_ex(p, true, true, "vmss.put", "PUT", path, body, v->etag[0] ? v->etag : NULL, r, st);
	cJSON_Delete(body);
	return rc;
}

/* Is the scale set's capacity 'target' now (a write of it took effect)? */
static bool written_before(struct provider *p, const struct az_group *g, int target)
{
	struct vmss_read again;
	struct provider_status st;
	bool yes;

	memset(&again, 0, sizeof(again));
	yes = read_vmss(p, g, &again, &st) == 0 && again.capacity == target;
	cJSON_Delete(again.before);
	return yes;
}

#define AKS_BUSY_LOOKS 3  /* looks at a pool that is busy before a launch gives up for this round */

/*
 * The write of an AKS pool's launch, in the group's turn with the write
 * token taken: GET the pool (its count, provisioningState,
 * enableAutoScaling), wait while an operation runs on it (a few looks,
 * poll_ns apart: never a second operation on top), read the scale set
 * (its VMs before), then PUT the pool with count + 'count'. 0 when
 * written (ARM's answer in *r, the count before in v->capacity), 1 for a
 * 412 on the first try (read again), -1 with 'st'.
 */
static int aks_write(struct provider *p, struct az_group *g, int count, int tries, struct vmss_read *v, int *target,
		     struct arm_resp *r, struct provider_status *st)
{
	struct az_prov *ap = AP(p);
	struct aks_pool a;
	int looks, max, rc = -1;

	memset(r, 0, sizeof(*r));
	*target = -1;
	for (looks = 1;; looks++) {
		if (azure_aks_read(p, g, &a, st) < 0)
			return -1;
		if (a.autoscaling) {
			azure_aks_refuse_autoscaling(g, "scale", st);
			goto out;
		}
		if (!azure_aks_busy(&a))
			break;
		if (looks >= AKS_BUSY_LOOKS) {
			azure_status(st, PROVIDER_TRANSIENT, "AKS pool %s of cluster %s is still %s (an operation in progress) "
				     "after %d looks: nothing written; the next round asks again", g->aks_pool, g->aks_cluster,
				     a.state, looks);
			goto out;
		}
		log_at(ap->log, LOG_INFO, clock_wall(ap->clock),
		       "azure: group %s: AKS pool %s is %s (an operation in progress): waiting for it before writing",
		       g->name, g->aks_pool, a.state);
		aks_pool_free(&a);
		if (cloudcall_wait_until(ap->clock, ap->cancel, clock_now(ap->clock) + ap->poll_ns) < 0) {
			azure_status(st, PROVIDER_CANCELLED, "stopped waiting for AKS pool %s: luascale is stopping", g->aks_pool);
			return -1;
		}
	}
	if (read_vmss(p, g, v, st) < 0)
		goto out;
	v->capacity = a.count;
	max = v->tag_max >= 0 ? (g->max >= 0 && g->max < v->tag_max ? g->max : v->tag_max) : g->max;
	*target = a.count + count;
	if (max >= 0 && *target > max) {
		azure_status(st, PROVIDER_INVALID, "AKS pool %s would go to %d, above the group's max %d", g->aks_pool,
			     *target, max);
		goto out;
	}
	if (azure_aks_write_count(p, g, &a, *target, r, st) == 0) {
		rc = 0;
		goto out;
	}
	if (r->status == 412 && r->attempts > 1) {
		struct aks_pool again;
		struct provider_status rst;

		/* an earlier sending took effect and its answer was lost */
		if (azure_aks_read(p, g, &again, &rst) == 0 && again.count == *target) {
			log_at(ap->log, LOG_INFO, clock_wall(ap->clock),
			       "azure: group %s: AKS pool %s is at %d already: an earlier attempt of the write took effect",
			       g->name, g->aks_pool, *target);
			azure_resp_free(r);
			memset(st, 0, sizeof(*st));
			rc = 0;
		}
		aks_pool_free(&again);
		if (rc == 0)
			goto out;
	}
	if (r->status == 412 && tries == 0) {
		log_at(ap->log, LOG_INFO, clock_wall(ap->clock),
		       "azure: group %s: AKS pool %s changed since it was read (HTTP 412): reading it again", g->name,
		       g->aks_pool);
		azure_resp_free(r);
		rc = 1;
	} else if (r->status == 412) {
		azure_status(st, PROVIDER_TRANSIENT, "AKS pool %s changed again while it was being resized (HTTP 412 twice): "
			     "nothing more written", g->aks_pool);
	}
out:
	aks_pool_free(&a);
	return rc;
}

struct tracked {
	char id[32];
	bool reported, failed;
};

void azure_launch(struct provider *p, const char *group, int count, provider_instance_cb on_instance,
		  provider_done_cb on_done, void *ctx)
{
	struct az_prov *ap = AP(p);
	struct provider_status st, fst;
	struct az_group g;
	struct vmss_read v;
	struct arm_resp r;
	struct lro op;
	struct tracked *tr = NULL;
	size_t n_tr = 0, i;
	int made = 0, target, max, failed = 0, tries;
	int64_t deadline = clock_now(ap->clock) + ap->launch_wait_ns;
	bool op_failed = false, locked = false;
	pthread_mutex_t *wl = NULL;

	memset(&st, 0, sizeof(st));
	memset(&fst, 0, sizeof(fst));
	memset(&v, 0, sizeof(v));
	memset(&r, 0, sizeof(r));
	if (count <= 0 || count > 1000) {
		azure_status(&st, PROVIDER_INVALID, "launch of %d instances (1 to 1000 a call)", count);
		on_done(ctx, 0, &st);
		return;
	}
	if (azure_group_get(ap, group, &g) < 0) {
		azure_status(&st, PROVIDER_NOT_FOUND, "no node group %s in the cloud", group);
		on_done(ctx, 0, &st);
		return;
	}
	/* the size this round reads, never one remembered; on 412 (the scale
	 * set changed between the read and the write) read again, once. One
	 * write at a time per group, its token taken before the read, so the
	 * size read is the one the write raises. */
	if (g.aks && azure_aks_resolve(p, &g, &st) < 0)
		goto out;
	wl = azure_write_lock(ap, g.name);
	pthread_mutex_lock(wl);
	locked = true;
	for (tries = 0;; tries++) {
		if (provider_take_token(p->mutating, clock_now(ap->clock) + AZURE_TOKEN_WAIT_NS, ap->clock,
					&st) < 0)
			goto out;
		if (g.aks) {
			/* an AKS pool: its count, through the agentPools API */
			int rc = aks_write(p, &g, count, tries, &v, &target, &r, &st);

			if (rc == 0)
				break;
			if (rc == 1)
				continue;
			goto out;
		}
		if (read_vmss(p, &g, &v, &st) < 0)
			goto out;
		max = v.tag_max >= 0 ? (g.max >= 0 && g.max < v.tag_max ? g.max : v.tag_max) : g.max;
		target = v.capacity + count;
		if (max >= 0 && target > max) {
			azure_status(&st, PROVIDER_INVALID, "scale set %s would go to %d, above the group's max %d", g.vmss,
				     target, max);
			goto out;
		}
		if (write_capacity(p, &g, &v, target, &r, &st) == 0)
			break;
		if (r.status == 412 && r.attempts > 1 && written_before(p, &g, target)) {
			/* an earlier sending of this PUT took effect and its answer was
			 * lost (the retry meets the new etag): the capacity is the one
			 * this launch wrote. Follow it (no operation to poll) rather than
			 * raise it again. */
			log_at(ap->log, LOG_INFO, clock_wall(ap->clock),
			       "azure: group %s: scale set %s is at %d already: an earlier attempt of the write took effect",
			       g.name, g.vmss, target);
			azure_resp_free(&r);
			memset(&st, 0, sizeof(st));
			break;
		}
		if (r.status != 412 || tries > 0) {
			if (r.status == 412)
				azure_status(&st, PROVIDER_TRANSIENT, "scale set %s changed again while it was being resized "
					     "(HTTP 412 twice): nothing more written", g.vmss);
			goto out;
		}
		log_at(ap->log, LOG_INFO, clock_wall(ap->clock),
		       "azure: group %s: scale set %s changed since it was read (HTTP 412): reading it again", g.name,
		       g.vmss);
		azure_resp_free(&r);
	}
	pthread_mutex_unlock(wl);
	locked = false;
	if (g.aks)
		log_at(ap->log, LOG_INFO, clock_wall(ap->clock), "azure: group %s: AKS pool %s (cluster %s) count %d -> %d",
		       g.name, g.aks_pool, g.aks_cluster, v.capacity, target);
	else
		log_at(ap->log, LOG_INFO, clock_wall(ap->clock), "azure: group %s: scale set %s capacity %d -> %d", g.name,
		       g.vmss, v.capacity, target);
	tr = calloc((size_t)count, sizeof(*tr));
	if (!tr) {
		azure_status(&st, PROVIDER_TRANSIENT, "out of memory");
		goto out;
	}
	lro_start(ap, &r, &op);
	azure_resp_free(&r);
	/* follow the operation; report each new VM the moment the list shows it */
	for (;;) {
		cJSON *vms = NULL, *it;
		bool last = op.done || op_failed || clock_now(ap->clock) >= deadline;

		if (azure_list_vms(p, &g, &vms, &st) == 0) {
			cJSON_ArrayForEach(it, vms) {
				struct azure_vm vm;
				struct tracked *t = NULL;

				if (azure_vm_parse(it, &vm) < 0 || in_list(v.before, vm.instance_id))
					continue;
				for (i = 0; i < n_tr; i++)
					if (!strcmp(tr[i].id, vm.instance_id))
						t = &tr[i];
				if (!t) {
					if (n_tr == (size_t)count || !azure_claim(ap, g.name, vm.instance_id))
						continue; /* not one of ours: another launch's or writer's */
					t = &tr[n_tr++];
					snprintf(t->id, sizeof(t->id), "%s", vm.instance_id);
				}
				if (vm.failed && !t->failed) {
					t->failed = true;
					if (t->reported) {
						made--; /* reported while it was being created */
						/* it will never be a node: nothing should wait for it */
						groupcache_report(on_instance, ctx, vm.instance_id, g.name, NULL,
								  INSTANCE_GONE);
					}
					if (!failed++ && fst.code == PROVIDER_OK) {
						azure_status(&fst, azure_error_class(&vm.why), "VM %s failed to provision: %s%s%s",
							     vm.instance_id, vm.why.code, vm.why.message[0] ? ": " : "",
							     vm.why.message);
						if (fst.code == PROVIDER_THROTTLED || fst.code == PROVIDER_TRANSIENT ||
						    fst.code == PROVIDER_INVALID)
							fst.code = PROVIDER_NO_CAPACITY;
					}
				}
				if (!t->reported && !t->failed) {
					char pid[256];

					azure_format_provider_id(ap->sub, g.rg, g.vmss, vm.instance_id, pid, sizeof(pid));
					groupcache_report(on_instance, ctx, vm.instance_id, g.name, pid, vm.state);
					t->reported = true;
					made++;
				}
			}
			cJSON_Delete(vms);
		} else if (st.code == PROVIDER_CANCELLED) {
			goto out;
		}
		memset(&st, 0, sizeof(st));
		if (last)
			break;
		if (lro_poll(p, &op, &st) < 0) {
			if (st.code == PROVIDER_CANCELLED)
				goto out;
			op_failed = true;
			if (fst.code == PROVIDER_OK)
				fst = st;
		}
		memset(&st, 0, sizeof(st));
		if (!op.done && !op_failed &&
		    cloudcall_wait_until(ap->clock, ap->cancel,
					 clock_now(ap->clock) < op.next_ns ? op.next_ns : clock_now(ap->clock)) < 0) {
			azure_status(&st, PROVIDER_CANCELLED, "stopped following the launch: luascale is stopping");
			goto out;
		}
	}
	if (failed) {
		const char **ids = calloc((size_t)failed + 1, sizeof(*ids));
		struct provider_status ds;
		size_t k = 0;

		/* give back what cannot be made, so the scale set stops counting it */
		for (i = 0; ids && i < n_tr; i++)
			if (tr[i].failed)
				ids[k++] = tr[i].id;
		if (ids && azure_delete_vms(p, &g, ids, k, &ds) == 0)
			log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
			       "azure: group %s: %d VM(s) failed to provision (%s); deleted from scale set %s", g.name,
			       failed, fst.message, g.vmss);
		free(ids);
	}
	if (fst.code != PROVIDER_OK) {
		st = fst;
	} else if (!op.done) {
		log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
		       "azure: group %s: the resize of scale set %s is still running at the launch's deadline; "
		       "%d of %d VM(s) seen so far", g.name, g.vmss, made, count);
	}
out:
	if (locked)
		pthread_mutex_unlock(wl);
	azure_resp_free(&r);
	cJSON_Delete(v.before);
	free(tr);
	on_done(ctx, made, &st);
}

