/*
 * sim/cloud_azure: the Azure flavour of the simulated cloud — Azure names
 * for every instance (the cloud's namer), scale sets whose VMs follow
 * sku.capacity and stay Failed when their allocation fails, etags and
 * long-running operations.
 */
#include "sim/clouds/cloud_azure.h"

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
	int next_id;
	uint64_t etag;
	struct sim_azure_vm *view; /* its VMs as sim_azure_vms gives them */
	size_t view_cap;
};

struct sim_azure {
	struct sim_cloud *c;
	const struct sim_azure_conf *conf;
	struct sim_managed *ms;    /* the scale sets' VMs */
	struct vmss *s;
	size_t n_groups;
	uint64_t rng;
	uint32_t ip_next;
	uint64_t op_seq;
	struct sim_azure_op *ops;
	size_t n_ops, cap_ops;
};

/* Frees it once the last creation in flight is over (the members' destroy). */
static void azure_destroy(void *ud)
{
	struct sim_azure *g = ud;
	size_t i;

	for (i = 0; g->s && i < g->n_groups; i++)
		free(g->s[i].view);
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

/* ---- VMs (sim/clouds/cloud.h's members: name "<vmss>_<id>", number the id) ---- */

static int namer(void *ud, struct sim_cloud *c, size_t gi, const struct sim_launch_spec *spec,
		 struct sim_instance *in)
{
	struct sim_azure *g = ud;
	const struct sim_azure_conf *conf = g->conf;
	const struct sim_azure_group *ag = &conf->groups[gi];
	const char *name = spec ? spec->arg : NULL;
	struct sim_member fresh;
	const struct sim_member *vm;
	char computer[80];
	uint32_t n;

	(void)c;
	if (name) {
		/* the VM is found by name: the scale set's array may have moved
		 * since the launch was asked for */
		vm = sim_managed_find(g->ms, gi, name);
		if (!vm)
			return -1; /* deleted while being made */
	} else {
		/* a starting instance: the next instance id of its scale set */
		memset(&fresh, 0, sizeof(fresh));
		fresh.number = g->s[gi].next_id++;
		snprintf(fresh.name, sizeof(fresh.name), "%.80s_%d", ag->vmss, fresh.number);
		snprintf(fresh.zone, sizeof(fresh.zone), "%.7s",
			 ag->n_zones ? ag->zones[(size_t)fresh.number % ag->n_zones] : "");
		vm = &fresh;
	}
	snprintf(in->id, sizeof(in->id), "%s", vm->name);
	if (sim_cloud_find_instance(g->c, in->id))
		return -1;
	n = sim_cloud_next_ip(&g->ip_next, 4);
	snprintf(in->private_ip, sizeof(in->private_ip), "10.224.%u.%u", (n >> 8) & 255, n & 255);
	sim_azure_computer_name(ag->computer_prefix, vm->number, computer, sizeof(computer));
	snprintf(in->node_name, sizeof(in->node_name), "%s", computer);
	if (vm->zone[0])
		snprintf(in->zone, sizeof(in->zone), "%.20s-%.7s", conf->location, vm->zone);
	else
		snprintf(in->zone, sizeof(in->zone), "0");
	snprintf(in->instance_type, sizeof(in->instance_type), "%s", ag->vm_size);
	snprintf(in->provider_id, sizeof(in->provider_id),
		 "azure:///subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/virtualMachineScaleSets/%s/virtualMachines/%d",
		 conf->subscription, conf->resource_group, ag->vmss, vm->number);
	return 0;
}

/* A new VM takes its scale set's next instance id. */
static void member_name(void *ud, size_t gi, struct sim_member *m)
{
	struct sim_azure *g = ud;

	m->number = g->s[gi].next_id++;
	snprintf(m->name, sizeof(m->name), "%.80s_%d", g->conf->groups[gi].vmss, m->number);
	m->zone[7] = '\0';
}

/* A VM whose allocation failed stays Failed. */
static void member_failed(void *ud, size_t gi, struct sim_member *m, enum provider_error e)
{
	struct sim_azure *g = ud;

	sim_azure_failure(e, g->conf->groups[gi].vm_size, m->zone[0] != '\0', m->error_code,
			  sizeof(m->error_code), m->error_message, sizeof(m->error_message));
	sim_cloud_tracef(g->c, "azure: scale set %s: VM %d failed: %s", g->conf->groups[gi].vmss,
			 m->number, m->error_code);
}

/* One whose machine died otherwise takes one off the capacity (as
 * deleting a scale set's VM does). */
static void member_lost(void *ud, size_t gi, const struct sim_member *m)
{
	struct sim_azure *g = ud;
	int capacity = sim_managed_target(g->ms, gi);

	(void)m;
	if (capacity > 0)
		sim_managed_set_target(g->ms, gi, capacity - 1);
	g->s[gi].etag++;
}

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
	static const struct sim_managed_ops mops = {member_name, member_failed, member_lost,
						    azure_destroy};
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
	g->c = cloud;
	g->conf = conf;
	g->rng = seed ^ 0x3c6ef372fe94f82bULL;
	g->ip_next = (0u << 8) | 4;
	g->n_groups = conf->n_groups;
	g->s = conf->n_groups ? calloc(conf->n_groups, sizeof(*g->s)) : NULL;
	if (conf->n_groups && !g->s) {
		azure_destroy(g);
		goto oom;
	}
	g->ms = sim_managed_new(cloud, &mops, NULL, g);
	if (!g->ms) {
		azure_destroy(g);
		goto oom;
	}
	for (i = 0; i < g->n_groups; i++) {
		g->s[i].etag = 1;
		sim_managed_set_zones(g->ms, i, conf->groups[i].zones, conf->groups[i].n_zones);
	}
	sim_cloud_set_namer(cloud, namer, g);
	return g;
oom:
	errbuf_set(err, "out of memory");
	return NULL;
}

void sim_azure_free(struct sim_azure *g)
{
	if (g)
		sim_managed_free(g->ms);
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
	size_t k, n;
	const struct sim_member *m;
	char name[80];

	sim_managed_refresh(g->ms, i);
	m = sim_managed_members(g->ms, i, &n);
	for (k = 0; computer && k < n; k++) {
		if (m[k].state == SIM_MEMBER_DELETING)
			continue;
		sim_azure_computer_name(g->conf->groups[i].computer_prefix, m[k].number, name,
					sizeof(name));
		if (strcmp(name, computer) == 0)
			return m[k].number;
	}
	return -1;
}

int sim_azure_capacity(const struct sim_azure *g, size_t i)
{
	return sim_managed_target(g->ms, i);
}

void sim_azure_etag(const struct sim_azure *g, size_t i, char *out, size_t size)
{
	snprintf(out, size, "\"%llu\"", (unsigned long long)g->s[i].etag);
}

/* ---- scale sets ---- */

const struct sim_azure_vm *sim_azure_vms(struct sim_azure *g, size_t i, size_t *n)
{
	struct vmss *s = &g->s[i];
	const struct sim_member *m;
	size_t k;

	sim_managed_refresh(g->ms, i);
	m = sim_managed_members(g->ms, i, n);
	if (*n > s->view_cap) {
		struct sim_azure_vm *nv = realloc(s->view, *n * sizeof(*nv));

		if (!nv) {
			*n = 0;
			return s->view;
		}
		s->view = nv;
		s->view_cap = *n;
	}
	for (k = 0; k < *n; k++) {
		struct sim_azure_vm *vm = &s->view[k];

		memset(vm, 0, sizeof(*vm));
		vm->instance_id = m[k].number;
		snprintf(vm->name, sizeof(vm->name), "%s", m[k].name);
		sim_azure_computer_name(g->conf->groups[i].computer_prefix, m[k].number, vm->computer,
					sizeof(vm->computer));
		snprintf(vm->zone, sizeof(vm->zone), "%.7s", m[k].zone);
		vm->in = m[k].in;
		vm->state = m[k].state == SIM_MEMBER_RUNNING   ? SIM_AZURE_SUCCEEDED
			    : m[k].state == SIM_MEMBER_FAILED  ? SIM_AZURE_FAILED
			    : m[k].state == SIM_MEMBER_DELETING ? SIM_AZURE_DELETING
								: SIM_AZURE_CREATING;
		vm->launching = m[k].launching;
		vm->op = m[k].op;
		snprintf(vm->error_code, sizeof(vm->error_code), "%s", m[k].error_code);
		snprintf(vm->error_message, sizeof(vm->error_message), "%s", m[k].error_message);
	}
	return s->view;
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

static void op_new(struct sim_azure *g, size_t gi, bool del, struct sim_azure_op *out)
{
	uint64_t a = backoff_rand(&g->rng), b = backoff_rand(&g->rng);

	memset(out, 0, sizeof(*out));
	out->seq = ++g->op_seq;
	out->group = gi;
	out->delete = del;
	sim_managed_op_times(g->ms, gi, g->conf->operation_ns, &out->start_ns, &out->start_wall,
			     &out->done_ns);
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
	int old = sim_managed_target(g->ms, i), now;

	if (capacity < 0 || capacity > MAX_CAPACITY) {
		snprintf(code, code_size, "InvalidParameter");
		return errbuf_set(err, "The value %d of parameter 'sku.capacity' is out of range. The value must be between 0 and %d, inclusive.",
				  capacity, MAX_CAPACITY);
	}
	sim_managed_refresh(g->ms, i);
	now = sim_managed_target(g->ms, i);
	if (capacity > now &&
	    ((ng->max >= 0 && capacity > ng->max) ||
	     sim_cloud_launch_fault(g->c, ng->name, PROVIDER_QUOTA))) {
		const struct sim_azure_vmsize *vs = sim_azure_find_vmsize(ag->vm_size);
		int limit = (ng->max >= 0 ? ng->max : now) * vs->cpus;

		snprintf(code, code_size, "OperationNotAllowed");
		return errbuf_set(err, "Operation could not be completed as it results in exceeding approved %s Cores quota. Additional details - Deployment Model: Resource Manager, Location: %s, Current Limit: %d, Current Usage: %d, Additional Required: %d, (Minimum) New Limit Required: %d. QuotaExceeded",
				  vs->family, g->conf->location, limit, now * vs->cpus,
				  (capacity - now) * vs->cpus, capacity * vs->cpus);
	}
	op_new(g, i, false, op);
	g->s[i].etag++;
	if (sim_managed_resize(g->ms, i, capacity, op->seq) < 0)
		return errbuf_set(err, "out of memory");
	sim_cloud_tracef(g->c, "azure: scale set %s capacity %d -> %d", ag->vmss, old, capacity);
	return 0;
}

/* Scale set i's VM with instance id 'id' (decimal text) not being deleted, or NULL. */
static struct sim_member *live_vm(struct sim_azure *g, size_t i, const char *id)
{
	size_t k, n;
	struct sim_member *m = sim_managed_members(g->ms, i, &n);
	char text[16];

	for (k = 0; k < n; k++) {
		snprintf(text, sizeof(text), "%d", m[k].number);
		if (strcmp(text, id) == 0 && m[k].state != SIM_MEMBER_DELETING)
			return &m[k];
	}
	return NULL;
}

int sim_azure_delete(struct sim_azure *g, size_t i, const char *const *ids, size_t n,
		     struct sim_azure_op *op, struct errbuf *err)
{
	size_t k;

	sim_managed_refresh(g->ms, i);
	for (k = 0; k < n; k++)
		if (!live_vm(g, i, ids[k]))
			return errbuf_set(err, "The provided instanceId %.16s is not an active Virtual Machine Scale Set VM instanceId.",
					  ids[k]);
	op_new(g, i, true, op);
	for (k = 0; k < n; k++) {
		struct sim_member *m = live_vm(g, i, ids[k]);
		int capacity = sim_managed_target(g->ms, i);

		if (!m)
			continue; /* named twice */
		sim_managed_delete(g->ms, i, m, op->seq);
		if (capacity > 0)
			sim_managed_set_target(g->ms, i, capacity - 1);
	}
	g->s[i].etag++;
	sim_cloud_tracef(g->c, "azure: scale set %s delete %zu -> capacity %d",
			 g->conf->groups[i].vmss, n, sim_managed_target(g->ms, i));
	return 0;
}

void sim_azure_start(struct sim_azure *g)
{
	size_t i, k, n;

	sim_cloud_lock(g->c);
	for (i = 0; i < g->n_groups; i++) {
		int min = sim_cloud_group(g->c, i)->min;
		struct sim_member *m;
		struct sim_azure_op op;
		char code[48];
		struct errbuf err;

		sim_managed_adopt(g->ms, i);
		m = sim_managed_members(g->ms, i, &n);
		for (k = 0; k < n; k++) {
			/* "<vmss>_<id>" in a zone "<location>-<zone>" */
			const char *us = strrchr(m[k].name, '_');
			const char *dash = strrchr(m[k].zone, '-');

			m[k].number = us ? atoi(us + 1) : (int)k;
			memmove(m[k].zone, dash ? dash + 1 : "", dash ? strlen(dash + 1) + 1 : 1);
			m[k].zone[7] = '\0';
		}
		if (sim_managed_target(g->ms, i) < min)
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
	const struct sim_member *vm;

	if (code_size)
		code[0] = '\0';
	if (msg_size)
		msg[0] = '\0';
	if (sim_cloud_now(g->c) < op->done_ns)
		return SIM_AZURE_IN_PROGRESS;
	sim_managed_refresh(g->ms, op->group);
	vm = sim_managed_members(g->ms, op->group, &n);
	for (k = 0; !op->delete && k < n; k++)
		if (vm[k].op == op->seq && vm[k].launching)
			return SIM_AZURE_IN_PROGRESS;
	for (k = 0; !op->delete && k < n; k++) {
		if (vm[k].op == op->seq && vm[k].state == SIM_MEMBER_FAILED) {
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
