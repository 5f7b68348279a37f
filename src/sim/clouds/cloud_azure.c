/*
 * sim/cloud_azure: the Azure flavour of the simulated cloud — Azure names
 * for every instance (the cloud's namer), scale sets whose VMs follow
 * sku.capacity and stay Failed when their allocation fails, etags and
 * long-running operations.
 */
#include "sim/clouds/cloud_azure.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "runtime/backoff.h"
#include "runtime/clock.h"

#define MAX_CAPACITY 1000

static const struct sim_azure_vmsize builtin_sizes[] = {
	{"Standard_D2s_v3", "standardDSv3Family", 2, 8192, 0, 16384, false},
	{"Standard_D4s_v3", "standardDSv3Family", 4, 16384, 0, 32768, false},
	{"Standard_D8s_v3", "standardDSv3Family", 8, 32768, 0, 65536, false},
	{"Standard_D4s_v5", "standardDSv5Family", 4, 16384, 0, 0, false},
	{"Standard_E4s_v3", "standardESv3Family", 4, 32768, 0, 65536, false},
	{"Standard_F4s_v2", "standardFSv2Family", 4, 8192, 0, 32768, false},
	{"Standard_NC6s_v3", "standardNCSv3Family", 6, 114688, 1, 344064, false},
	/* newer than the provider's static table: their resources come from /skus */
	{"Standard_D4ls_v6", "standardDLSv6Family", 4, 8192, 0, 0, false},
	{"Standard_D8ls_v6", "standardDLSv6Family", 8, 16384, 0, 0, true},
};
#define N_SIZES (sizeof(builtin_sizes) / sizeof(builtin_sizes[0]))

struct vmss {
	int capacity;
	int next_id;
	uint64_t etag;
	struct sim_azure_vm *vm;
	size_t n, cap;
};

struct sim_azure {
	_Atomic int refs;          /* the owner + every creation in flight */
	_Atomic bool dead;
	struct sim_cloud *c;
	const struct sim_azure_conf *conf;
	struct vmss *s;
	size_t n_groups;
	uint64_t rng;
	uint32_t ip_next;
	uint64_t op_seq;
	struct sim_azure_op *ops;
	size_t n_ops, cap_ops;
};

/* One creation, for its callbacks. */
struct attempt {
	struct sim_azure *g;
	size_t gi;
	char name[96];
};

static void azure_put(struct sim_azure *g)
{
	size_t i;

	if (atomic_fetch_sub(&g->refs, 1) != 1)
		return;
	for (i = 0; i < g->n_groups; i++)
		free(g->s[i].vm);
	free(g->s);
	free(g->ops);
	free(g);
}

const struct sim_azure_vmsize *sim_azure_find_vmsize(const char *name)
{
	size_t i;

	for (i = 0; name && i < N_SIZES; i++)
		if (strcasecmp(builtin_sizes[i].name, name) == 0)
			return &builtin_sizes[i];
	return NULL;
}

const struct sim_azure_vmsize *sim_azure_vmsize_at(size_t i)
{
	return i < N_SIZES ? &builtin_sizes[i] : NULL;
}

bool sim_azure_valid_guid(const char *s)
{
	size_t i;

	if (!s || strlen(s) != 36)
		return false;
	for (i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return false;
		} else if (!strchr("0123456789abcdefABCDEF", s[i])) {
			return false;
		}
	}
	return true;
}

void sim_azure_computer_name(const char *prefix, int id, char *out, size_t size)
{
	static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	char suffix[7];
	unsigned v = id < 0 ? 0u : (unsigned)id;
	int k;

	for (k = 5; k >= 0; k--) {
		suffix[k] = digits[v % 36];
		v /= 36;
	}
	suffix[6] = '\0';
	snprintf(out, size, "%.*s%s", size > 7 ? (int)(size - 7) : 0, prefix, suffix);
}

void sim_azure_failure(enum provider_error e, const char *vm_size, bool zonal, char *code,
		       size_t code_size, char *msg, size_t msg_size)
{
	switch (e) {
	case PROVIDER_QUOTA:
	case PROVIDER_INVALID:
		snprintf(code, code_size, "QuotaExceeded");
		snprintf(msg, msg_size, "Operation could not be completed as it results in exceeding approved %s Cores quota.",
			 vm_size);
		break;
	case PROVIDER_NO_CAPACITY:
		snprintf(code, code_size, "%s", zonal ? "ZonalAllocationFailed" : "AllocationFailed");
		snprintf(msg, msg_size, "Allocation failed. We do not have sufficient capacity for the requested VM size %s in this %s. Read more about improving likelihood of allocation success at http://aka.ms/allocation-guidance",
			 vm_size, zonal ? "zone" : "region");
		break;
	case PROVIDER_THROTTLED:
		snprintf(code, code_size, "TooManyRequests");
		snprintf(msg, msg_size, "The request is being throttled.");
		break;
	default:
		snprintf(code, code_size, "InternalExecutionError");
		snprintf(msg, msg_size, "An internal execution error occurred. Please retry later.");
		break;
	}
}

/* ---- VMs ---- */

static struct sim_azure_vm *vm_find_name(struct sim_azure *g, size_t gi, const char *name)
{
	size_t k;

	for (k = 0; k < g->s[gi].n; k++)
		if (strcmp(g->s[gi].vm[k].name, name) == 0)
			return &g->s[gi].vm[k];
	return NULL;
}

/* The zone with the fewest live VMs of scale set gi ("" regional). */
static const char *spread_zone(const struct sim_azure *g, size_t gi)
{
	const struct sim_azure_group *ag = &g->conf->groups[gi];
	const struct vmss *s = &g->s[gi];
	size_t z, k, best = 0;
	int best_n = -1;

	if (!ag->n_zones)
		return "";
	for (z = 0; z < ag->n_zones; z++) {
		int count = 0;

		for (k = 0; k < s->n; k++)
			if (s->vm[k].state != SIM_AZURE_DELETING &&
			    strcmp(s->vm[k].zone, ag->zones[z]) == 0)
				count++;
		if (best_n < 0 || count < best_n) {
			best_n = count;
			best = z;
		}
	}
	return ag->zones[best];
}

static struct sim_azure_vm *vm_add(struct sim_azure *g, size_t gi, const char *zone, uint64_t op)
{
	struct vmss *s = &g->s[gi];
	const struct sim_azure_group *ag = &g->conf->groups[gi];
	struct sim_azure_vm *vm;

	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct sim_azure_vm *nv = realloc(s->vm, cap * sizeof(*nv));

		if (!nv)
			return NULL;
		s->vm = nv;
		s->cap = cap;
	}
	vm = &s->vm[s->n++];
	memset(vm, 0, sizeof(*vm));
	vm->instance_id = s->next_id++;
	snprintf(vm->name, sizeof(vm->name), "%.80s_%d", ag->vmss, vm->instance_id);
	sim_azure_computer_name(ag->computer_prefix, vm->instance_id, vm->computer,
				sizeof(vm->computer));
	snprintf(vm->zone, sizeof(vm->zone), "%.7s", zone);
	vm->state = SIM_AZURE_CREATING;
	vm->op = op;
	return vm;
}

static void vm_remove(struct sim_azure *g, size_t gi, size_t k)
{
	struct vmss *s = &g->s[gi];

	memmove(&s->vm[k], &s->vm[k + 1], (s->n - k - 1) * sizeof(*s->vm));
	s->n--;
}

static int namer(void *ud, struct sim_cloud *c, size_t gi, const struct sim_launch_spec *spec,
		 struct sim_instance *in)
{
	struct sim_azure *g = ud;
	const struct sim_azure_conf *conf = g->conf;
	const struct sim_azure_group *ag = &conf->groups[gi];
	const struct attempt *at = spec ? spec->arg : NULL;
	const struct sim_azure_vm *vm = NULL;
	struct sim_azure_vm fresh;
	uint32_t n;

	(void)c;
	if (at) {
		/* the VM is found by name: the scale set's array may have moved
		 * since the launch was asked for */
		vm = vm_find_name(g, at->gi, at->name);
		if (!vm)
			return -1; /* deleted while being made */
	} else {
		/* a starting instance: the next instance id of its scale set */
		memset(&fresh, 0, sizeof(fresh));
		fresh.instance_id = g->s[gi].next_id++;
		snprintf(fresh.name, sizeof(fresh.name), "%.80s_%d", ag->vmss, fresh.instance_id);
		sim_azure_computer_name(ag->computer_prefix, fresh.instance_id, fresh.computer,
					sizeof(fresh.computer));
		snprintf(fresh.zone, sizeof(fresh.zone), "%.7s",
			 ag->n_zones ? ag->zones[(size_t)fresh.instance_id % ag->n_zones] : "");
		vm = &fresh;
	}
	snprintf(in->id, sizeof(in->id), "%s", vm->name);
	if (sim_cloud_find_instance(g->c, in->id))
		return -1;
	do {
		n = g->ip_next++;
	} while ((n & 255) < 4 || (n & 255) == 255);
	snprintf(in->private_ip, sizeof(in->private_ip), "10.224.%u.%u", (n >> 8) & 255, n & 255);
	snprintf(in->node_name, sizeof(in->node_name), "%s", vm->computer);
	if (vm->zone[0])
		snprintf(in->zone, sizeof(in->zone), "%.20s-%s", conf->location, vm->zone);
	else
		snprintf(in->zone, sizeof(in->zone), "0");
	snprintf(in->instance_type, sizeof(in->instance_type), "%s", ag->vm_size);
	snprintf(in->provider_id, sizeof(in->provider_id),
		 "azure:///subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/virtualMachineScaleSets/%s/virtualMachines/%d",
		 conf->subscription, conf->resource_group, ag->vmss, vm->instance_id);
	return 0;
}

static void refresh(struct sim_azure *g, size_t gi);

/* ---- construction ---- */

static bool valid_vmss_name(const char *s)
{
	size_t n = s ? strlen(s) : 0, i;

	if (n < 1 || n > 64)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_' || s[i] == '.'))
			return false;
	return s[n - 1] != '.' && s[n - 1] != '-';
}

struct sim_azure *sim_azure_new(struct sim_cloud *cloud, const struct sim_azure_conf *conf,
				uint64_t seed, struct errbuf *err)
{
	struct sim_azure *g;
	size_t i, j;

	if (conf->n_groups != sim_cloud_n_groups(cloud)) {
		errbuf_set(err, "azure: %zu Azure groups for %zu node groups", conf->n_groups,
			   sim_cloud_n_groups(cloud));
		return NULL;
	}
	for (i = 0; i < conf->n_groups; i++) {
		const struct sim_azure_group *ag = &conf->groups[i];
		const char *gname = sim_cloud_group(cloud, i)->name;

		if (!valid_vmss_name(ag->vmss) || !ag->computer_prefix ||
		    strlen(ag->computer_prefix) > 9 + 50) {
			errbuf_set(err, "azure: node group %s: scale set \"%s\" must be 1-64 of [A-Za-z0-9._-], not ending in . or -, with a computer name prefix",
				   gname, ag->vmss ? ag->vmss : "");
			return NULL;
		}
		if (!sim_azure_find_vmsize(ag->vm_size)) {
			errbuf_set(err, "azure: node group %s: unknown VM size \"%s\"", gname,
				   ag->vm_size ? ag->vm_size : "");
			return NULL;
		}
		for (j = 0; j < i; j++)
			if (strcasecmp(conf->groups[j].vmss, ag->vmss) == 0) {
				errbuf_set(err, "azure: node groups %s and %s name one scale set \"%s\"",
					   sim_cloud_group(cloud, j)->name, gname, ag->vmss);
				return NULL;
			}
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		goto oom;
	atomic_init(&g->refs, 1);
	atomic_init(&g->dead, false);
	g->c = cloud;
	g->conf = conf;
	g->rng = seed ^ 0x3c6ef372fe94f82bULL;
	g->ip_next = (0u << 8) | 4;
	g->s = conf->n_groups ? calloc(conf->n_groups, sizeof(*g->s)) : NULL;
	if (conf->n_groups && !g->s) {
		azure_put(g);
		goto oom;
	}
	g->n_groups = conf->n_groups;
	for (i = 0; i < g->n_groups; i++)
		g->s[i].etag = 1;
	sim_cloud_set_namer(cloud, namer, g);
	return g;
oom:
	errbuf_set(err, "out of memory");
	return NULL;
}

void sim_azure_free(struct sim_azure *g)
{
	if (!g)
		return;
	atomic_store(&g->dead, true);
	azure_put(g);
}

const struct sim_azure_conf *sim_azure_conf(const struct sim_azure *g)
{
	return g->conf;
}

struct sim_cloud *sim_azure_cloud(const struct sim_azure *g)
{
	return g->c;
}

const struct sim_azure_group *sim_azure_group(const struct sim_azure *g, size_t i)
{
	return &g->conf->groups[i];
}

int sim_azure_find_vmss(const struct sim_azure *g, const char *name)
{
	size_t i;

	for (i = 0; name && i < g->n_groups; i++)
		if (strcasecmp(g->conf->groups[i].vmss, name) == 0)
			return (int)i;
	return -1;
}

int sim_azure_find_pool(const struct sim_azure *g, const char *name)
{
	size_t i;

	for (i = 0; name && g->conf->aks_cluster && i < g->n_groups; i++)
		if (g->conf->groups[i].agent_pool && strcmp(g->conf->groups[i].agent_pool, name) == 0)
			return (int)i;
	return -1;
}

int sim_azure_find_computer(struct sim_azure *g, size_t i, const char *computer)
{
	size_t k;

	refresh(g, i);
	for (k = 0; computer && k < g->s[i].n; k++)
		if (g->s[i].vm[k].state != SIM_AZURE_DELETING && strcmp(g->s[i].vm[k].computer, computer) == 0)
			return g->s[i].vm[k].instance_id;
	return -1;
}

int sim_azure_capacity(const struct sim_azure *g, size_t i)
{
	return g->s[i].capacity;
}

void sim_azure_etag(const struct sim_azure *g, size_t i, char *out, size_t size)
{
	snprintf(out, size, "\"%llu\"", (unsigned long long)g->s[i].etag);
}

/* ---- creation ---- */

static void attempt_instance(void *ctx, const struct sim_instance *copy)
{
	struct attempt *a = ctx;
	struct sim_azure *g = a->g;
	struct sim_azure_vm *vm;

	if (atomic_load(&g->dead))
		return;
	sim_cloud_lock(g->c);
	vm = vm_find_name(g, a->gi, a->name);
	if (vm) {
		vm->in = sim_cloud_find_instance(g->c, copy->id);
	} else {
		/* deleted while being made: it goes at once */
		struct sim_instance *in = sim_cloud_find_instance(g->c, copy->id);

		if (in)
			sim_cloud_terminate_instance(g->c, in);
	}
	sim_cloud_unlock(g->c);
}

static void attempt_done(void *ctx, int count, const struct provider_status *st)
{
	struct attempt *a = ctx;
	struct sim_azure *g = a->g;
	struct sim_azure_vm *vm;

	if (atomic_load(&g->dead) || !st || st->code == PROVIDER_CANCELLED) {
		free(a);
		azure_put(g);
		return;
	}
	sim_cloud_lock(g->c);
	vm = vm_find_name(g, a->gi, a->name);
	if (vm) {
		vm->launching = false;
		if (count < 1 && vm->state == SIM_AZURE_CREATING) {
			vm->state = SIM_AZURE_FAILED;
			sim_azure_failure(st->code, g->conf->groups[a->gi].vm_size, vm->zone[0] != '\0',
					  vm->error_code, sizeof(vm->error_code), vm->error_message,
					  sizeof(vm->error_message));
			sim_cloud_tracef(g->c, "azure: scale set %s: VM %d failed: %s",
					 g->conf->groups[a->gi].vmss, vm->instance_id, vm->error_code);
		}
	}
	sim_cloud_unlock(g->c);
	free(a);
	azure_put(g);
}

static void launch_vm(struct sim_azure *g, size_t gi, struct sim_azure_vm *vm)
{
	struct attempt *a = calloc(1, sizeof(*a));
	struct sim_launch_spec spec;

	if (!a)
		return;
	a->g = g;
	a->gi = gi;
	snprintf(a->name, sizeof(a->name), "%s", vm->name);
	memset(&spec, 0, sizeof(spec));
	spec.admitted = true;
	spec.arg = a; /* the namer finds the VM by a->name (read under the lock) */
	atomic_fetch_add(&g->refs, 1);
	vm->launching = true;
	if (sim_cloud_launch_spec(g->c, sim_cloud_group(g->c, gi)->name, 1, &spec, attempt_instance,
				  attempt_done, a) < 0) {
		vm->launching = false;
		atomic_fetch_sub(&g->refs, 1);
		free(a);
	}
}

/* Brings the VMs up to date with their instances: Deleting ones whose
 * machine is gone leave; one whose machine died otherwise leaves too and
 * takes one off the capacity (as deleting a scale set's VM does). */
static void refresh(struct sim_azure *g, size_t gi)
{
	struct vmss *s = &g->s[gi];
	size_t k = 0;

	while (k < s->n) {
		struct sim_azure_vm *vm = &s->vm[k];

		if (vm->state == SIM_AZURE_DELETING && (!vm->in || vm->in->state == INSTANCE_GONE)) {
			vm_remove(g, gi, k);
			continue;
		}
		if (vm->in && vm->state != SIM_AZURE_DELETING &&
		    (vm->in->state == INSTANCE_STOPPING || vm->in->state == INSTANCE_GONE)) {
			vm_remove(g, gi, k);
			if (s->capacity > 0)
				s->capacity--;
			s->etag++;
			continue;
		}
		if (vm->in && vm->state == SIM_AZURE_CREATING && vm->in->state == INSTANCE_RUNNING)
			vm->state = SIM_AZURE_SUCCEEDED;
		k++;
	}
}

const struct sim_azure_vm *sim_azure_vms(struct sim_azure *g, size_t i, size_t *n)
{
	refresh(g, i);
	*n = g->s[i].n;
	return g->s[i].vm;
}

bool sim_azure_latest_model(const struct sim_azure *g, const struct sim_azure_vm *vm)
{
	char why[192];

	return !vm->in || !sim_cloud_instance_outdated(sim_azure_cloud(g), vm->in, why, sizeof(why));
}

const struct sim_azure_vm *sim_azure_find_vm(struct sim_azure *g, size_t i, const char *id)
{
	size_t k, n;
	const struct sim_azure_vm *vm = sim_azure_vms(g, i, &n);
	char want[16];

	for (k = 0; id && k < n; k++) {
		snprintf(want, sizeof(want), "%d", vm[k].instance_id);
		if (strcmp(want, id) == 0)
			return &vm[k];
	}
	return NULL;
}

/* Takes VM k of scale set gi out: its machine stops. */
static void vm_delete(struct sim_azure *g, size_t gi, size_t k, uint64_t op)
{
	struct sim_azure_vm *vm = &g->s[gi].vm[k];

	if (!vm->in) {
		/* never made (or still being made: attempt_instance stops it) */
		vm_remove(g, gi, k);
		return;
	}
	vm->state = SIM_AZURE_DELETING;
	vm->op = op;
	sim_cloud_terminate_instance(g->c, vm->in);
}

static int live_count(const struct sim_azure *g, size_t gi)
{
	size_t k;
	int n = 0;

	for (k = 0; k < g->s[gi].n; k++)
		if (g->s[gi].vm[k].state != SIM_AZURE_DELETING)
			n++;
	return n;
}

static void op_new(struct sim_azure *g, size_t gi, bool del, struct sim_azure_op *out)
{
	int64_t delay = sim_cloud_call_delay(g->c, sim_cloud_group(g->c, gi)->name);
	uint64_t a = backoff_rand(&g->rng), b = backoff_rand(&g->rng);

	memset(out, 0, sizeof(*out));
	out->seq = ++g->op_seq;
	out->group = gi;
	out->delete = del;
	out->start_ns = sim_cloud_now(g->c);
	out->start_wall = clock_wall(executor_clock(sim_cloud_executor(g->c)));
	out->done_ns = out->start_ns + (delay >= 0 ? delay : g->conf->operation_ns);
	snprintf(out->id, sizeof(out->id), "%08llx-%04llx-4%03llx-a%03llx-%012llx",
		 (unsigned long long)(a >> 32), (unsigned long long)((a >> 16) & 0xffff),
		 (unsigned long long)(a & 0xfff), (unsigned long long)(b >> 52),
		 (unsigned long long)(b & 0xffffffffffffULL));
	if (g->n_ops == g->cap_ops) {
		size_t cap = g->cap_ops ? g->cap_ops * 2 : 64;
		struct sim_azure_op *no = realloc(g->ops, cap * sizeof(*no));

		if (!no)
			return; /* answered once, unknown later */
		g->ops = no;
		g->cap_ops = cap;
	}
	g->ops[g->n_ops++] = *out;
}

int sim_azure_set_capacity(struct sim_azure *g, size_t i, int capacity, struct sim_azure_op *op,
			   char *code, size_t code_size, struct errbuf *err)
{
	const struct sim_azure_group *ag = &g->conf->groups[i];
	const struct node_group *ng = sim_cloud_group(g->c, i);
	struct vmss *s = &g->s[i];
	int live, old = s->capacity;
	uint64_t seq;

	if (capacity < 0 || capacity > MAX_CAPACITY) {
		snprintf(code, code_size, "InvalidParameter");
		return errbuf_set(err, "The value %d of parameter 'sku.capacity' is out of range. The value must be between 0 and %d, inclusive.",
				  capacity, MAX_CAPACITY);
	}
	refresh(g, i);
	if (capacity > s->capacity &&
	    ((ng->max >= 0 && capacity > ng->max) ||
	     sim_cloud_launch_fault(g->c, ng->name, PROVIDER_QUOTA))) {
		const struct sim_azure_vmsize *vs = sim_azure_find_vmsize(ag->vm_size);
		int limit = (ng->max >= 0 ? ng->max : s->capacity) * vs->cpus;

		snprintf(code, code_size, "OperationNotAllowed");
		return errbuf_set(err, "Operation could not be completed as it results in exceeding approved %s Cores quota. Additional details - Deployment Model: Resource Manager, Location: %s, Current Limit: %d, Current Usage: %d, Additional Required: %d, (Minimum) New Limit Required: %d. QuotaExceeded",
				  vs->family, g->conf->location, limit, s->capacity * vs->cpus,
				  (capacity - s->capacity) * vs->cpus, capacity * vs->cpus);
	}
	op_new(g, i, false, op);
	seq = op->seq;
	s->capacity = capacity;
	s->etag++;
	live = live_count(g, i);
	while (live < capacity) {
		struct sim_azure_vm *vm = vm_add(g, i, spread_zone(g, i), seq);

		if (!vm)
			return errbuf_set(err, "out of memory");
		launch_vm(g, i, vm);
		live++;
	}
	while (live > capacity) {
		size_t k = s->n;

		while (k > 0 && s->vm[k - 1].state == SIM_AZURE_DELETING)
			k--;
		if (k == 0)
			break;
		vm_delete(g, i, k - 1, seq);
		live--;
	}
	sim_cloud_tracef(g->c, "azure: scale set %s capacity %d -> %d", ag->vmss, old, capacity);
	return 0;
}

int sim_azure_delete(struct sim_azure *g, size_t i, const char *const *ids, size_t n,
		     struct sim_azure_op *op, struct errbuf *err)
{
	struct vmss *s = &g->s[i];
	size_t k, j;
	char text[16];

	refresh(g, i);
	for (k = 0; k < n; k++) {
		for (j = 0; j < s->n; j++) {
			snprintf(text, sizeof(text), "%d", s->vm[j].instance_id);
			if (strcmp(text, ids[k]) == 0 && s->vm[j].state != SIM_AZURE_DELETING)
				break;
		}
		if (j == s->n)
			return errbuf_set(err, "The provided instanceId %.16s is not an active Virtual Machine Scale Set VM instanceId.",
					  ids[k]);
	}
	op_new(g, i, true, op);
	for (k = 0; k < n; k++) {
		for (j = 0; j < s->n; j++) {
			snprintf(text, sizeof(text), "%d", s->vm[j].instance_id);
			if (strcmp(text, ids[k]) == 0 && s->vm[j].state != SIM_AZURE_DELETING)
				break;
		}
		if (j == s->n)
			continue; /* named twice */
		vm_delete(g, i, j, op->seq);
		if (s->capacity > 0)
			s->capacity--;
	}
	s->etag++;
	sim_cloud_tracef(g->c, "azure: scale set %s delete %zu -> capacity %d",
			 g->conf->groups[i].vmss, n, s->capacity);
	return 0;
}

void sim_azure_start(struct sim_azure *g)
{
	size_t i, k, n;

	sim_cloud_lock(g->c);
	for (i = 0; i < g->n_groups; i++) {
		struct sim_instance *const *inst = sim_cloud_instances(g->c, i, &n);
		int min = sim_cloud_group(g->c, i)->min;
		struct sim_azure_op op;
		char code[48];
		struct errbuf err;

		for (k = 0; k < n; k++) {
			struct vmss *s = &g->s[i];
			struct sim_azure_vm *vm;
			const char *us = strrchr(inst[k]->id, '_');

			if (s->n == s->cap) {
				size_t cap = s->cap ? s->cap * 2 : 16;
				struct sim_azure_vm *nv = realloc(s->vm, cap * sizeof(*nv));

				if (!nv)
					break;
				s->vm = nv;
				s->cap = cap;
			}
			vm = &s->vm[s->n++];
			memset(vm, 0, sizeof(*vm));
			vm->instance_id = us ? atoi(us + 1) : (int)k;
			snprintf(vm->name, sizeof(vm->name), "%.95s", inst[k]->id);
			snprintf(vm->computer, sizeof(vm->computer), "%.79s", inst[k]->node_name);
			{
				const char *dash = strrchr(inst[k]->zone, '-');

				snprintf(vm->zone, sizeof(vm->zone), "%.7s", dash ? dash + 1 : "");
			}
			vm->in = inst[k];
			vm->state = inst[k]->state == INSTANCE_RUNNING ? SIM_AZURE_SUCCEEDED
								      : SIM_AZURE_CREATING;
		}
		g->s[i].capacity = (int)g->s[i].n;
		if (g->s[i].capacity < min)
			sim_azure_set_capacity(g, i, min, &op, code, sizeof(code), &err);
	}
	sim_cloud_unlock(g->c);
}

/* ---- operations ---- */

bool sim_azure_op_get(struct sim_azure *g, const char *id, struct sim_azure_op *out)
{
	size_t k;

	for (k = 0; id && k < g->n_ops; k++) {
		if (strcasecmp(g->ops[k].id, id) == 0) {
			*out = g->ops[k];
			return true;
		}
	}
	return false;
}

enum sim_azure_op_status sim_azure_op_status(struct sim_azure *g, const struct sim_azure_op *op,
					     char *code, size_t code_size, char *msg,
					     size_t msg_size)
{
	size_t k, n;
	const struct sim_azure_vm *vm;

	if (code_size)
		code[0] = '\0';
	if (msg_size)
		msg[0] = '\0';
	if (sim_cloud_now(g->c) < op->done_ns)
		return SIM_AZURE_IN_PROGRESS;
	vm = sim_azure_vms(g, op->group, &n);
	for (k = 0; !op->delete && k < n; k++)
		if (vm[k].op == op->seq && vm[k].launching)
			return SIM_AZURE_IN_PROGRESS;
	for (k = 0; !op->delete && k < n; k++) {
		if (vm[k].op == op->seq && vm[k].state == SIM_AZURE_FAILED) {
			snprintf(code, code_size, "%s", vm[k].error_code);
			snprintf(msg, msg_size, "%s", vm[k].error_message);
			return SIM_AZURE_OP_FAILED;
		}
	}
	return SIM_AZURE_OP_SUCCEEDED;
}

bool sim_azure_updating(struct sim_azure *g, size_t i)
{
	size_t k;
	char code[8], msg[8];

	for (k = g->n_ops; k > 0; k--) {
		if (g->ops[k - 1].group != i)
			continue;
		return sim_azure_op_status(g, &g->ops[k - 1], code, sizeof(code), msg, sizeof(msg)) ==
		       SIM_AZURE_IN_PROGRESS;
	}
	return false;
}
