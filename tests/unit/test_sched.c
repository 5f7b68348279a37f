/*
 * Tests for sched.c: fit predicates, first-fit-decreasing packing and drain
 * checks, on snapshots decoded from Kubernetes-shaped JSON through the real
 * path (snapshot_add_json, snapshot_set_groups, snapshot_finish).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "buf.h"
#include "model.h"
#include "sched.h"

#define NOW 1714557600 /* 2024-05-01T10:00:00Z */
#define GROUP_LABEL "luascale.io/node-group"

/* ---- building a cluster from JSON ---- */

struct world {
	struct buf items;            /* comma-separated List items */
	size_t n_items;
	struct node_group groups[4];
	struct kv group_kv[4];
	size_t n_groups;
	struct snapshot *s;
};

/* Appends one List item; single quotes in 'fmt' output become double quotes. */
__attribute__((format(printf, 2, 3)))
static void w_item(struct world *w, const char *fmt, ...)
{
	static char tmp[16384];
	va_list ap;
	int n;
	char *c;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < sizeof(tmp));
	for (c = tmp; *c; c++)
		if (*c == '\'')
			*c = '"';
	if (w->n_items++)
		buf_puts(&w->items, ",");
	buf_puts(&w->items, tmp);
	assert_int_equal(w->items.oom, 0);
}

static const char *opt(const char *s, const char *dflt)
{
	return s ? s : dflt;
}

/* ", X" when X is given, else "". */
static const char *comma(const char *s)
{
	return s && *s ? "," : "";
}

struct nodespec {
	const char *name;
	const char *cpu, *mem, *pods; /* defaults "4", "16Gi", "110" */
	const char *alloc;            /* extra allocatable members */
	const char *labels;           /* extra label members */
	const char *spec;             /* spec members beside providerID */
	const char *group;            /* luascale.io/node-group label */
	bool not_ready;
};

static void add_node(struct world *w, struct nodespec ns)
{
	char group[128] = "";

	if (ns.group)
		snprintf(group, sizeof(group), ",'" GROUP_LABEL "':'%s'", ns.group);
	w_item(w,
	       "{'apiVersion':'v1','kind':'Node','metadata':{'name':'%s',"
	       "'uid':'uid-%s','creationTimestamp':'2024-05-01T08:00:00Z',"
	       "'labels':{'kubernetes.io/hostname':'%s','kubernetes.io/os':'linux'%s%s%s}},"
	       "'spec':{'providerID':'kind://docker/luascale/%s'%s%s},"
	       "'status':{'capacity':{'cpu':'%s','memory':'%s','pods':'%s'%s%s},"
	       "'allocatable':{'cpu':'%s','memory':'%s','pods':'%s'%s%s},"
	       "'conditions':[{'type':'MemoryPressure','status':'False','reason':'KubeletHasSufficientMemory'},"
	       "{'type':'Ready','status':'%s','reason':'%s',"
	       "'lastTransitionTime':'2024-05-01T08:01:00Z'}]}}",
	       ns.name, ns.name, ns.name, group, comma(ns.labels),
	       opt(ns.labels, ""), ns.name, comma(ns.spec), opt(ns.spec, ""),
	       opt(ns.cpu, "4"), opt(ns.mem, "16Gi"), opt(ns.pods, "110"),
	       comma(ns.alloc), opt(ns.alloc, ""),
	       opt(ns.cpu, "4"), opt(ns.mem, "16Gi"), opt(ns.pods, "110"),
	       comma(ns.alloc), opt(ns.alloc, ""),
	       ns.not_ready ? "False" : "True",
	       ns.not_ready ? "KubeletNotReady" : "KubeletReady");
}

struct podspec {
	const char *ns;          /* default "default" */
	const char *name;
	const char *node;        /* NULL: pending */
	const char *cpu, *mem;   /* NULL: not requested */
	const char *ext;         /* extended request members, also set as limits */
	const char *labels;      /* label members */
	const char *annotations; /* annotation members */
	const char *owner;       /* controller kind; NULL: ReplicaSet, "": none */
	const char *spec;        /* extra spec members (nodeSelector, affinity, ...) */
	const char *tol;         /* tolerations beside the default not-ready one */
	const char *meta;        /* extra metadata members (deletionTimestamp) */
	const char *phase;       /* NULL: Running when bound, Pending otherwise */
};

static void add_pod(struct world *w, struct podspec ps)
{
	char req[512], lim[256] = "", owner[512] = "", node[160] = "", status[512];
	const char *kind = opt(ps.owner, "ReplicaSet");
	const char *phase = ps.phase ? ps.phase : ps.node ? "Running" : "Pending";

	snprintf(req, sizeof(req), "%s%s%s%s%s%s%s%s%s",
		 ps.cpu ? "'cpu':'" : "", opt(ps.cpu, ""), ps.cpu ? "'" : "",
		 ps.cpu && ps.mem ? "," : "",
		 ps.mem ? "'memory':'" : "", opt(ps.mem, ""), ps.mem ? "'" : "",
		 (ps.cpu || ps.mem) && ps.ext ? "," : "", opt(ps.ext, ""));
	if (ps.ext)
		snprintf(lim, sizeof(lim), ",'limits':{%s}", ps.ext);
	if (*kind) {
		const char *api = strcmp(kind, "Node") == 0 ? "v1" :
				  strcmp(kind, "Job") == 0 ? "batch/v1" : "apps/v1";

		snprintf(owner, sizeof(owner),
			 ",'ownerReferences':[{'apiVersion':'%s','kind':'%s',"
			 "'name':'%s-owner','uid':'uid-owner-%s','controller':true,"
			 "'blockOwnerDeletion':true}]",
			 api, kind, ps.name, ps.name);
	}
	if (ps.node)
		snprintf(node, sizeof(node), "'nodeName':'%s',", ps.node);
	if (ps.node)
		snprintf(status, sizeof(status),
			 "{'phase':'%s','conditions':[{'type':'PodScheduled','status':'True'}],"
			 "'hostIP':'10.0.0.1','podIP':'10.244.1.7','qosClass':'Burstable'}",
			 phase);
	else
		snprintf(status, sizeof(status),
			 "{'phase':'%s','conditions':[{'type':'PodScheduled','status':'False',"
			 "'reason':'Unschedulable','message':'0/3 nodes are available: 3 Insufficient cpu.'}],"
			 "'qosClass':'Burstable'}",
			 phase);
	w_item(w,
	       "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'%s','namespace':'%s',"
	       "'uid':'uid-%s','creationTimestamp':'2024-05-01T09:00:00Z',"
	       "'labels':{%s},'annotations':{%s}%s%s%s},"
	       "'spec':{%s'containers':[{'name':'main','image':'registry.k8s.io/pause:3.9',"
	       "'resources':{'requests':{%s}%s}}],'restartPolicy':'Always',"
	       "'schedulerName':'default-scheduler','tolerations':[{'key':'node.kubernetes.io/not-ready',"
	       "'operator':'Exists','effect':'NoExecute','tolerationSeconds':300}%s%s]%s%s},"
	       "'status':%s}",
	       ps.name, opt(ps.ns, "default"), ps.name, opt(ps.labels, ""),
	       opt(ps.annotations, ""), owner, comma(ps.meta), opt(ps.meta, ""),
	       node, req, lim, comma(ps.tol), opt(ps.tol, ""),
	       comma(ps.spec), opt(ps.spec, ""), status);
}

static void add_pdb(struct world *w, const char *ns, const char *name,
		    const char *match_labels, int allowed)
{
	w_item(w,
	       "{'apiVersion':'policy/v1','kind':'PodDisruptionBudget',"
	       "'metadata':{'name':'%s','namespace':'%s','generation':1},"
	       "'spec':{'minAvailable':1,'selector':{'matchLabels':{%s}}},"
	       "'status':{'currentHealthy':3,'desiredHealthy':1,'disruptionsAllowed':%d,"
	       "'expectedPods':3,'observedGeneration':1}}",
	       name, ns, match_labels, allowed);
}

/* A group whose nodes carry luascale.io/node-group=NAME; target -1: as registered. */
static struct node_group *add_group(struct world *w, const char *name,
				    int64_t cpu_m, int64_t memory, int target)
{
	struct node_group *g;

	assert_true(w->n_groups < 4);
	g = &w->groups[w->n_groups];
	w->group_kv[w->n_groups].key = GROUP_LABEL;
	w->group_kv[w->n_groups].value = name;
	memset(g, 0, sizeof(*g));
	g->name = name;
	g->min = 0;
	g->max = 1000;
	g->price_per_hour = 0.2;
	g->selector.items = &w->group_kv[w->n_groups];
	g->selector.n = 1;
	g->tmpl.labels = g->selector;
	g->tmpl.allocatable.cpu_m = cpu_m;
	g->tmpl.allocatable.memory = memory;
	g->tmpl.allocatable.pods = 110;
	g->target = target;
	w->n_groups++;
	return g;
}

static struct snapshot *build(struct world *w)
{
	struct errbuf err = {{0}};
	struct buf doc = BUF_INIT;
	int rc;

	buf_puts(&doc, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"\"},\"items\":[");
	if (w->items.len)
		buf_puts(&doc, w->items.data);
	buf_puts(&doc, "]}");
	assert_int_equal(doc.oom, 0);
	w->s = snapshot_new();
	assert_non_null(w->s);
	rc = snapshot_add_json(w->s, doc.data, doc.len, "test", &err);
	buf_free(&doc);
	if (rc)
		fail_msg("snapshot_add_json: %s", err.msg);
	if (snapshot_set_groups(w->s, w->groups, w->n_groups, &err))
		fail_msg("snapshot_set_groups: %s", err.msg);
	if (snapshot_finish(w->s, NOW, &err))
		fail_msg("snapshot_finish: %s", err.msg);
	return w->s;
}

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));

	if (!w)
		return -1;
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	snapshot_free(w->s);
	buf_free(&w->items);
	free(w);
	return 0;
}

/* "ns/name" or "name" (namespace default). */
static uint32_t pod_ix(const struct snapshot *s, const char *ref)
{
	const char *slash = strchr(ref, '/');
	const char *name = slash ? slash + 1 : ref;
	size_t nslen = slash ? (size_t)(slash - ref) : strlen("default");
	const char *ns = slash ? ref : "default";
	size_t i;

	for (i = 0; i < s->n_pods; i++)
		if (strcmp(s->pods[i].name, name) == 0 &&
		    strlen(s->pods[i].ns) == nslen &&
		    strncmp(s->pods[i].ns, ns, nslen) == 0)
			return (uint32_t)i;
	fail_msg("no pod %s in the snapshot", ref);
	return 0;
}

static const struct pod *pod_of(const struct snapshot *s, const char *ref)
{
	return &s->pods[pod_ix(s, ref)];
}

static size_t node_ix(const struct snapshot *s, const char *name)
{
	int32_t i = snapshot_find_node(s, name);

	if (i < 0)
		fail_msg("no node %s in the snapshot", name);
	return (size_t)i;
}

static enum sched_fit fits(const struct snapshot *s, const char *pod,
			   const char *node, char *detail, size_t len)
{
	return sched_fits_node(s, pod_of(s, pod), node_ix(s, node), detail, len);
}

#define assert_fit(s, pod, node, want)                                        \
	do {                                                                  \
		char d_[256];                                                 \
		enum sched_fit f_ = fits(s, pod, node, d_, sizeof(d_));       \
		if (f_ != (want))                                             \
			fail_msg("%s on %s: got %s (%s), want %s", pod, node, \
				 sched_fit_str(f_), d_, sched_fit_str(want)); \
	} while (0)

/* ---- resources ---- */

static void test_cpu(void **state)
{
	struct world *w = *state;
	struct snapshot *s;
	char d[128];

	add_node(w, (struct nodespec){.name = "n1", .cpu = "4"});
	add_pod(w, (struct podspec){.name = "used", .node = "n1", .cpu = "2800m", .mem = "1Gi"});
	add_pod(w, (struct podspec){.name = "big", .cpu = "2500m", .mem = "1Gi"});
	add_pod(w, (struct podspec){.name = "exact", .cpu = "1200m", .mem = "1Gi"});
	s = build(w);

	assert_int_equal(fits(s, "big", "n1", d, sizeof(d)), SCHED_NO_CPU);
	assert_string_equal(d, "insufficient cpu: needs 2500m, free 1200m");
	assert_fit(s, "exact", "n1", SCHED_FITS);
}

static void test_memory(void **state)
{
	struct world *w = *state;
	struct snapshot *s;
	char d[128];

	add_node(w, (struct nodespec){.name = "n1", .mem = "8Gi"});
	add_pod(w, (struct podspec){.name = "used", .node = "n1", .cpu = "100m", .mem = "6Gi"});
	add_pod(w, (struct podspec){.name = "big", .cpu = "100m", .mem = "3Gi"});
	add_pod(w, (struct podspec){.name = "exact", .cpu = "100m", .mem = "2Gi"});
	s = build(w);

	assert_int_equal(fits(s, "big", "n1", d, sizeof(d)), SCHED_NO_MEMORY);
	assert_string_equal(d, "insufficient memory: needs 3Gi, free 2Gi");
	assert_fit(s, "exact", "n1", SCHED_FITS);
}

static void test_ephemeral(void **state)
{
	struct world *w = *state;
	struct snapshot *s;
	char d[128];

	add_node(w, (struct nodespec){.name = "n1", .alloc = "'ephemeral-storage':'10Gi'"});
	add_pod(w, (struct podspec){.name = "big", .cpu = "100m", .ext = "'ephemeral-storage':'20Gi'"});
	add_pod(w, (struct podspec){.name = "small", .cpu = "100m", .ext = "'ephemeral-storage':'5Gi'"});
	s = build(w);

	assert_int_equal(fits(s, "big", "n1", d, sizeof(d)), SCHED_NO_EPHEMERAL);
	assert_string_equal(d, "insufficient ephemeral-storage: needs 20Gi, free 10Gi");
	assert_fit(s, "small", "n1", SCHED_FITS);
}

static void test_extended(void **state)
{
	struct world *w = *state;
	struct snapshot *s;
	char d[128];

	add_node(w, (struct nodespec){.name = "gpu1", .alloc = "'nvidia.com/gpu':'2'"});
	add_node(w, (struct nodespec){.name = "plain"});
	add_pod(w, (struct podspec){.name = "train-0", .node = "gpu1", .cpu = "1", .ext = "'nvidia.com/gpu':'1'"});
	add_pod(w, (struct podspec){.name = "one", .cpu = "1", .ext = "'nvidia.com/gpu':'1'"});
	add_pod(w, (struct podspec){.name = "two", .cpu = "1", .ext = "'nvidia.com/gpu':'2'"});
	add_pod(w, (struct podspec){.name = "none", .cpu = "1", .ext = "'nvidia.com/gpu':'0'"});
	s = build(w);

	assert_fit(s, "one", "gpu1", SCHED_FITS);
	assert_int_equal(fits(s, "two", "gpu1", d, sizeof(d)), SCHED_NO_EXTENDED);
	assert_string_equal(d, "insufficient nvidia.com/gpu: needs 2, free 1");
	assert_int_equal(fits(s, "one", "plain", d, sizeof(d)), SCHED_NO_EXTENDED);
	assert_non_null(strstr(d, "nvidia.com/gpu"));
	/* a request of 0 fits a node without the resource */
	assert_fit(s, "none", "plain", SCHED_FITS);
}

static void test_zero_request_fits_full_node(void **state)
{
	struct world *w = *state;
	struct snapshot *s;

	add_node(w, (struct nodespec){.name = "n1", .cpu = "1", .mem = "1Gi"});
	add_pod(w, (struct podspec){.name = "hog", .node = "n1", .cpu = "1500m", .mem = "1Gi"});
	add_pod(w, (struct podspec){.name = "besteffort"});
	add_pod(w, (struct podspec){.name = "tiny", .cpu = "1m"});
	s = build(w);

	assert_fit(s, "besteffort", "n1", SCHED_FITS);
	assert_fit(s, "tiny", "n1", SCHED_NO_CPU);
}

static void test_pods_limit(void **state)
{
	struct world *w = *state;
	struct snapshot *s;
	char d[128];

	add_node(w, (struct nodespec){.name = "n1", .pods = "2"});
	add_node(w, (struct nodespec){.name = "n2", .pods = "3"});
	add_pod(w, (struct podspec){.name = "a", .node = "n1", .cpu = "100m"});
	add_pod(w, (struct podspec){.name = "b", .node = "n1", .cpu = "100m"});
	add_pod(w, (struct podspec){.name = "c", .node = "n2", .cpu = "100m"});
	add_pod(w, (struct podspec){.name = "d", .node = "n2", .cpu = "100m"});
	add_pod(w, (struct podspec){.name = "new"});
	s = build(w);

	assert_int_equal(fits(s, "new", "n1", d, sizeof(d)), SCHED_NO_PODS);
	assert_string_equal(d, "insufficient pods: needs 1, free 0");
	assert_fit(s, "new", "n2", SCHED_FITS);
}

/* room_fits checks pods, cpu, memory, ephemeral, extended, in that order. */
static void test_room_fits_order(void **state)
{
	struct res_ext want_ext = {"example.com/dongle", 1};
	struct res_ext have_ext = {"example.com/dongle", 0};
	struct resources req = {.cpu_m = 1000, .memory = 1024, .ephemeral = 1024,
				.pods = 1, .ext = &want_ext, .n_ext = 1};
	struct room r = {.ext = &have_ext, .n_ext = 1};
	char d[128];

	(void)state;
	assert_int_equal(room_fits(&r, &req, d, sizeof(d)), SCHED_NO_PODS);
	r.pods = 1;
	assert_int_equal(room_fits(&r, &req, d, sizeof(d)), SCHED_NO_CPU);
	r.cpu_m = 1000;
	assert_int_equal(room_fits(&r, &req, d, sizeof(d)), SCHED_NO_MEMORY);
	r.memory = 1024;
	assert_int_equal(room_fits(&r, &req, d, sizeof(d)), SCHED_NO_EPHEMERAL);
	r.ephemeral = 1024;
	assert_int_equal(room_fits(&r, &req, d, sizeof(d)), SCHED_NO_EXTENDED);
	assert_string_equal(d, "insufficient example.com/dongle: needs 1, free 0");
	have_ext.value = 1;
	assert_int_equal(room_fits(&r, &req, NULL, 0), SCHED_FITS);
	/* a tiny detail buffer is truncated, not overflowed */
	have_ext.value = 0;
	assert_int_equal(room_fits(&r, &req, d, 8), SCHED_NO_EXTENDED);
	assert_int_equal(strlen(d), 7);
	/* a request of 0 fits even an overcommitted resource */
	have_ext.value = -1;
	want_ext.value = 0;
	r.cpu_m = -500;
	req.cpu_m = 0;
	assert_int_equal(room_fits(&r, &req, d, sizeof(d)), SCHED_FITS);
}

static void test_room_of_node_and_take(void **state)
{
	struct world *w = *state;
	struct snapshot *s;
	struct room r;
	const struct pod *p;

	add_node(w, (struct nodespec){.name = "gpu1", .cpu = "8", .mem = "32Gi",
				      .alloc = "'nvidia.com/gpu':'2'"});
	add_pod(w, (struct podspec){.name = "used", .node = "gpu1", .cpu = "2", .mem = "4Gi",
				    .ext = "'nvidia.com/gpu':'1'"});
	add_pod(w, (struct podspec){.name = "done", .node = "gpu1", .cpu = "4", .mem = "4Gi",
				    .phase = "Succeeded"});
	add_pod(w, (struct podspec){.name = "job", .cpu = "3", .mem = "8Gi",
				    .ext = "'nvidia.com/gpu':'1'"});
	s = build(w);

	assert_int_equal(room_of_node(s, node_ix(s, "gpu1"), &r), 0);
	assert_int_equal(r.cpu_m, 6000);
	assert_int_equal(r.memory, 28LL << 30);
	assert_int_equal(r.pods, 109);
	assert_int_equal(r.n_ext, 1);
	assert_string_equal(r.ext[0].name, "nvidia.com/gpu");
	assert_int_equal(r.ext[0].value, 1);

	p = pod_of(s, "job");
	assert_int_equal(room_fits(&r, &p->requests, NULL, 0), SCHED_FITS);
	room_take(&r, &p->requests);
	assert_int_equal(r.cpu_m, 3000);
	assert_int_equal(r.memory, 20LL << 30);
	assert_int_equal(r.pods, 108);
	assert_int_equal(r.ext[0].value, 0);
	/* the same pod again: the gpu is gone */
	assert_int_equal(room_fits(&r, &p->requests, NULL, 0), SCHED_NO_EXTENDED);
	room_free(&r);
	assert_null(r.ext);
}

static void test_room_of_template(void **state)
{
	struct world *w = *state;
	struct res_ext gpu = {"nvidia.com/gpu", 4};
	struct node_group *g = add_group(w, "gpu", 16000, 64LL << 30, -1);
	struct snapshot *s;
	struct room r;

	g->tmpl.allocatable.ext = &gpu;
	g->tmpl.allocatable.n_ext = 1;
	add_pod(w, (struct podspec){.name = "big", .cpu = "17"});
	add_pod(w, (struct podspec){.name = "ok", .cpu = "16", .ext = "'nvidia.com/gpu':'4'"});
	s = build(w);

	assert_int_equal(room_of_template(&s->groups[0], &r), 0);
	assert_int_equal(r.cpu_m, 16000);
	assert_int_equal(r.memory, 64LL << 30);
	assert_int_equal(r.pods, 110);
	assert_int_equal(r.n_ext, 1);
	assert_int_equal(r.ext[0].value, 4);
	room_free(&r);

	assert_int_equal(sched_fits_template(pod_of(s, "big"), &s->groups[0], NULL, 0),
			 SCHED_NO_CPU);
	assert_int_equal(sched_fits_template(pod_of(s, "ok"), &s->groups[0], NULL, 0),
			 SCHED_FITS);
}

/* ---- labels, affinity, taints ---- */

static void test_node_selector(void **state)
{
	struct world *w = *state;
	struct snapshot *s;
	char d[128];

	add_node(w, (struct nodespec){.name = "n1", .labels = "'disktype':'ssd'"});
	add_pod(w, (struct podspec){.name = "ok", .spec = "'nodeSelector':{'disktype':'ssd','kubernetes.io/os':'linux'}"});
	add_pod(w, (struct podspec){.name = "bad", .spec = "'nodeSelector':{'disktype':'hdd'}"});
	add_pod(w, (struct podspec){.name = "missing", .spec = "'nodeSelector':{'disktype':'ssd','gpu':'true'}"});
	s = build(w);

	assert_fit(s, "ok", "n1", SCHED_FITS);
	assert_int_equal(fits(s, "bad", "n1", d, sizeof(d)), SCHED_NODE_SELECTOR);
	assert_string_equal(d, "node selector disktype=hdd: node has disktype=ssd");
	assert_int_equal(fits(s, "missing", "n1", d, sizeof(d)), SCHED_NODE_SELECTOR);
	assert_string_equal(d, "node selector gpu=true: node has no label gpu");
}

#define AFFINITY(terms) \
	"'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':" \
	"{'nodeSelectorTerms':[" terms "]}}}"
#define EXPR(key, op, values) \
	"{'key':'" key "','operator':'" op "'" values "}"
#define VALUES(v) ",'values':[" v "]"
#define TERM(exprs) "{'matchExpressions':[" exprs "]}"

static const struct {
	const char *name;
	const char *spec;
	enum sched_fit want;
} affinity_cases[] = {
	{"in-ok", AFFINITY(TERM(EXPR("zone", "In", VALUES("'b','a'")))), SCHED_FITS},
	{"in-bad", AFFINITY(TERM(EXPR("zone", "In", VALUES("'c'")))), SCHED_NODE_AFFINITY},
	{"in-absent", AFFINITY(TERM(EXPR("rack", "In", VALUES("'a'")))), SCHED_NODE_AFFINITY},
	{"notin-ok", AFFINITY(TERM(EXPR("zone", "NotIn", VALUES("'c'")))), SCHED_FITS},
	{"notin-bad", AFFINITY(TERM(EXPR("zone", "NotIn", VALUES("'c','a'")))), SCHED_NODE_AFFINITY},
	{"notin-absent", AFFINITY(TERM(EXPR("rack", "NotIn", VALUES("'r1'")))), SCHED_FITS},
	{"exists-ok", AFFINITY(TERM(EXPR("zone", "Exists", ""))), SCHED_FITS},
	{"exists-bad", AFFINITY(TERM(EXPR("rack", "Exists", ""))), SCHED_NODE_AFFINITY},
	{"dne-ok", AFFINITY(TERM(EXPR("rack", "DoesNotExist", ""))), SCHED_FITS},
	{"dne-bad", AFFINITY(TERM(EXPR("zone", "DoesNotExist", ""))), SCHED_NODE_AFFINITY},
	{"gt-ok", AFFINITY(TERM(EXPR("cores", "Gt", VALUES("'4'")))), SCHED_FITS},
	{"gt-equal", AFFINITY(TERM(EXPR("cores", "Gt", VALUES("'8'")))), SCHED_NODE_AFFINITY},
	{"gt-absent", AFFINITY(TERM(EXPR("rack", "Gt", VALUES("'1'")))), SCHED_NODE_AFFINITY},
	{"gt-unparsable", AFFINITY(TERM(EXPR("bad", "Gt", VALUES("'1'")))), SCHED_NODE_AFFINITY},
	{"gt-negative", AFFINITY(TERM(EXPR("cores", "Gt", VALUES("'-3'")))), SCHED_FITS},
	{"lt-ok", AFFINITY(TERM(EXPR("cores", "Lt", VALUES("'16'")))), SCHED_FITS},
	{"lt-equal", AFFINITY(TERM(EXPR("cores", "Lt", VALUES("'8'")))), SCHED_NODE_AFFINITY},
	{"lt-unparsable", AFFINITY(TERM(EXPR("bad", "Lt", VALUES("'100'")))), SCHED_NODE_AFFINITY},
	/* terms are ORed */
	{"or", AFFINITY(TERM(EXPR("zone", "In", VALUES("'c'"))) "," TERM(EXPR("zone", "In", VALUES("'a'")))), SCHED_FITS},
	/* expressions of a term are ANDed */
	{"and", AFFINITY(TERM(EXPR("zone", "In", VALUES("'a'")) "," EXPR("rack", "Exists", ""))), SCHED_NODE_AFFINITY},
	{"and-ok", AFFINITY(TERM(EXPR("zone", "In", VALUES("'a'")) "," EXPR("cores", "Gt", VALUES("'2'")))), SCHED_FITS},
	/* an empty term matches nothing, but another term still can */
	{"empty-term", AFFINITY("{}"), SCHED_NODE_AFFINITY},
	{"empty-or", AFFINITY("{}," TERM(EXPR("zone", "Exists", ""))), SCHED_FITS},
	/* no terms at all: no affinity */
	{"no-affinity", "'affinity':{}", SCHED_FITS},
};

static void test_affinity_operators(void **state)
{
	struct world *w = *state;
	struct snapshot *s;
	size_t i;

	add_node(w, (struct nodespec){.name = "n1",
				      .labels = "'zone':'a','cores':'8','bad':'eight'"});
	for (i = 0; i < sizeof(affinity_cases) / sizeof(affinity_cases[0]); i++)
		add_pod(w, (struct podspec){.name = affinity_cases[i].name,
					    .spec = affinity_cases[i].spec});
	s = build(w);
	for (i = 0; i < sizeof(affinity_cases) / sizeof(affinity_cases[0]); i++)
		assert_fit(s, affinity_cases[i].name, "n1", affinity_cases[i].want);
}

static void test_affinity_detail(void **state)
{
	struct world *w = *state;
	struct snapshot *s;
	char d[128];

	add_node(w, (struct nodespec){.name = "n1", .labels = "'zone':'a'"});
	add_pod(w, (struct podspec){.name = "p", .spec = AFFINITY(TERM(
		EXPR("zone", "Exists", "") "," EXPR("zone", "In", VALUES("'b','c'"))))});
	s = build(w);
	assert_int_equal(fits(s, "p", "n1", d, sizeof(d)), SCHED_NODE_AFFINITY);
	assert_string_equal(d, "required node affinity: zone In (b,c) not satisfied");
}

#define FIELDS(op, values) \
	"{'matchFields':[{'key':'metadata.name','operator':'" op "'" values "}]}"

static void test_affinity_match_fields(void **state)
{
	struct world *w = *state;
	struct snapshot *s;

	add_group(w, "workers", 4000, 16LL << 30, -1);
	add_node(w, (struct nodespec){.name = "n1"});
	add_node(w, (struct nodespec){.name = "n2"});
	add_pod(w, (struct podspec){.name = "pinned", .spec = AFFINITY(FIELDS("In", VALUES("'n1'")))});
	add_pod(w, (struct podspec){.name = "not-n2", .spec = AFFINITY(FIELDS("NotIn", VALUES("'n2'")))});
	s = build(w);

	assert_fit(s, "pinned", "n1", SCHED_FITS);
	assert_fit(s, "pinned", "n2", SCHED_NODE_AFFINITY);
	assert_fit(s, "not-n2", "n1", SCHED_FITS);
	assert_fit(s, "not-n2", "n2", SCHED_NODE_AFFINITY);
	/* a template has no name: matchFields never match it */
	assert_int_equal(sched_fits_template(pod_of(s, "pinned"), &s->groups[0], NULL, 0),
			 SCHED_NODE_AFFINITY);
	assert_int_equal(sched_fits_template(pod_of(s, "not-n2"), &s->groups[0], NULL, 0),
			 SCHED_NODE_AFFINITY);
}

static void test_taints(void **state)
{
	struct world *w = *state;
	struct snapshot *s;
	char d[128];

	add_node(w, (struct nodespec){.name = "t1",
		.spec = "'taints':[{'key':'dedicated','value':'gpu','effect':'NoSchedule'}]"});
	add_node(w, (struct nodespec){.name = "t2",
		.spec = "'taints':[{'key':'maintenance','effect':'NoExecute','timeAdded':'2024-05-01T09:00:00Z'}]"});
	add_node(w, (struct nodespec){.name = "t3",
		.spec = "'taints':[{'key':'spot','value':'true','effect':'PreferNoSchedule'}]"});
	add_pod(w, (struct podspec){.name = "plain"});
	add_pod(w, (struct podspec){.name = "equal", .tol = "{'key':'dedicated','operator':'Equal','value':'gpu','effect':'NoSchedule'}"});
	add_pod(w, (struct podspec){.name = "equal-wrong-value", .tol = "{'key':'dedicated','operator':'Equal','value':'cpu','effect':'NoSchedule'}"});
	add_pod(w, (struct podspec){.name = "wrong-effect", .tol = "{'key':'dedicated','operator':'Equal','value':'gpu','effect':'NoExecute'}"});
	add_pod(w, (struct podspec){.name = "exists-key", .tol = "{'key':'dedicated','operator':'Exists'}"});
	add_pod(w, (struct podspec){.name = "everything", .tol = "{'operator':'Exists'}"});
	add_pod(w, (struct podspec){.name = "noexecute", .tol = "{'key':'maintenance','operator':'Exists','effect':'NoExecute','tolerationSeconds':60}"});
	s = build(w);

	assert_int_equal(fits(s, "plain", "t1", d, sizeof(d)), SCHED_TAINT);
	assert_string_equal(d, "taint dedicated=gpu:NoSchedule");
	assert_int_equal(fits(s, "plain", "t2", d, sizeof(d)), SCHED_TAINT);
	assert_string_equal(d, "taint maintenance:NoExecute");
	assert_fit(s, "plain", "t3", SCHED_FITS); /* PreferNoSchedule is ignored */

	assert_fit(s, "equal", "t1", SCHED_FITS);
	assert_fit(s, "equal-wrong-value", "t1", SCHED_TAINT);
	assert_fit(s, "wrong-effect", "t1", SCHED_TAINT);
	assert_fit(s, "exists-key", "t1", SCHED_FITS);  /* no effect: every effect */
	assert_fit(s, "exists-key", "t2", SCHED_TAINT); /* other key */
	assert_fit(s, "everything", "t1", SCHED_FITS);  /* empty key + Exists */
	assert_fit(s, "everything", "t2", SCHED_FITS);
	assert_fit(s, "noexecute", "t2", SCHED_FITS);
	assert_fit(s, "noexecute", "t1", SCHED_TAINT);
}

static void test_cordoned_and_check_order(void **state)
{
	struct world *w = *state;
	struct snapshot *s;
	char d[128];

	add_node(w, (struct nodespec){.name = "c1", .labels = "'zone':'a'",
				      .spec = "'unschedulable':true,'taints':[{'key':'node.kubernetes.io/unschedulable','effect':'NoSchedule','timeAdded':'2024-05-01T09:30:00Z'}]"});
	add_node(w, (struct nodespec){.name = "o1", .cpu = "1", .labels = "'zone':'a'",
				      .spec = "'taints':[{'key':'dedicated','value':'db','effect':'NoSchedule'}]"});
	add_pod(w, (struct podspec){.name = "plain", .cpu = "100m"});
	add_pod(w, (struct podspec){.name = "tolerant", .cpu = "100m", .tol = "{'key':'node.kubernetes.io/unschedulable','operator':'Exists','effect':'NoSchedule'}"});
	add_pod(w, (struct podspec){.name = "wrong-zone", .cpu = "100m", .spec = "'nodeSelector':{'zone':'b'}"});
	add_pod(w, (struct podspec){.name = "wrong-aff", .cpu = "100m",
				    .spec = AFFINITY(TERM(EXPR("zone", "In", VALUES("'b'"))))});
	add_pod(w, (struct podspec){.name = "sel-and-aff", .cpu = "100m",
				    .spec = "'nodeSelector':{'zone':'b'}," AFFINITY(TERM(EXPR("zone", "In", VALUES("'b'"))))});
	add_pod(w, (struct podspec){.name = "huge", .cpu = "8"});
	s = build(w);

	assert_int_equal(fits(s, "plain", "c1", d, sizeof(d)), SCHED_UNSCHEDULABLE);
	assert_non_null(strstr(d, "cordoned"));
	assert_fit(s, "tolerant", "c1", SCHED_FITS);
	/* cordon comes before the node selector */
	assert_fit(s, "wrong-zone", "c1", SCHED_UNSCHEDULABLE);
	/* node selector, then affinity, then taints, then room */
	assert_fit(s, "wrong-zone", "o1", SCHED_NODE_SELECTOR);
	assert_fit(s, "sel-and-aff", "o1", SCHED_NODE_SELECTOR);
	assert_fit(s, "wrong-aff", "o1", SCHED_NODE_AFFINITY);
	assert_fit(s, "huge", "o1", SCHED_TAINT);
}

static void test_fits_labels_direct(void **state)
{
	struct world *w = *state;
	struct snapshot *s;
	struct kv kv[] = {{"zone", "a"}};
	struct kvlist labels = {kv, 1};
	struct taint t = {"dedicated", "", TAINT_NO_EXECUTE};
	char d[64];

	add_pod(w, (struct podspec){.name = "p", .spec = "'nodeSelector':{'zone':'a'}"});
	s = build(w);
	assert_int_equal(sched_fits_labels(pod_of(s, "p"), "x", &labels, NULL, 0,
					   false, d, sizeof(d)), SCHED_FITS);
	assert_int_equal(sched_fits_labels(pod_of(s, "p"), "x", &labels, &t, 1,
					   false, d, sizeof(d)), SCHED_TAINT);
	assert_string_equal(d, "taint dedicated:NoExecute");
	assert_int_equal(sched_fits_labels(pod_of(s, "p"), "x", &labels, &t, 1,
					   true, NULL, 0), SCHED_UNSCHEDULABLE);
	assert_int_equal(sched_fits_labels(pod_of(s, "p"), "x", NULL, NULL, 0,
					   false, NULL, 0), SCHED_NODE_SELECTOR);
}

/* An empty key tolerates every key only with Exists. */
static void test_toleration_empty_key(void **state)
{
	struct world *w = *state;
	struct snapshot *s;
	struct kv kv[] = {{"zone", "a"}};
	struct kvlist labels = {kv, 1};
	struct taint t = {"maintenance", "", TAINT_NO_EXECUTE};
	struct toleration equal = {"", "", TOLERATION_EQUAL, -1};
	struct toleration exists = {NULL, "", TOLERATION_EXISTS, -1};
	struct pod p;

	add_pod(w, (struct podspec){.name = "p"});
	s = build(w);
	p = *pod_of(s, "p");
	p.tolerations = &equal;
	p.n_tolerations = 1;
	assert_int_equal(sched_fits_labels(&p, "x", &labels, &t, 1, false, NULL, 0),
			 SCHED_TAINT);
	p.tolerations = &exists;
	assert_int_equal(sched_fits_labels(&p, "x", &labels, &t, 1, false, NULL, 0),
			 SCHED_FITS);
}

static void test_fit_str(void **state)
{
	int f;

	(void)state;
	assert_string_equal(sched_fit_str(SCHED_NO_CPU), "insufficient cpu");
	assert_string_equal(sched_fit_str(SCHED_NODE_SELECTOR), "node selector mismatch");
	for (f = SCHED_FITS; f <= SCHED_UNSCHEDULABLE; f++)
		assert_true(strlen(sched_fit_str((enum sched_fit)f)) > 0);
}

/* ---- packing ---- */

static void pack(struct snapshot *s, const char *const *names, size_t n,
		 int max_new, struct pack_result *r)
{
	uint32_t ix[64];
	struct errbuf err = {{0}};
	size_t i;

	assert_true(n <= 64);
	for (i = 0; i < n; i++)
		ix[i] = pod_ix(s, names[i]);
	if (sched_pack(s, ix, n, 0, max_new, r, &err))
		fail_msg("sched_pack: %s", err.msg);
	assert_int_equal(r->n_pods, n);
	assert_int_equal(r->n_placed + r->n_unplaced, n);
}

static void test_pack_ffd(void **state)
{
	struct world *w = *state;
	static const char *const names[] = {"s1", "s2", "s3", "b1", "b2", "b3"};
	struct pack_result r;
	struct snapshot *s;

	add_group(w, "workers", 4000, 16LL << 30, -1);
	add_pod(w, (struct podspec){.name = "s1", .cpu = "1", .mem = "1Gi"});
	add_pod(w, (struct podspec){.name = "s2", .cpu = "1", .mem = "1Gi"});
	add_pod(w, (struct podspec){.name = "s3", .cpu = "1", .mem = "1Gi"});
	add_pod(w, (struct podspec){.name = "b1", .cpu = "3", .mem = "1Gi"});
	add_pod(w, (struct podspec){.name = "b2", .cpu = "3", .mem = "1Gi"});
	add_pod(w, (struct podspec){.name = "b3", .cpu = "3", .mem = "1Gi"});
	s = build(w);

	/* first fit in input order would need 4 nodes (1+1+1, 3, 3, 3) */
	pack(s, names, 6, -1, &r);
	assert_int_equal(r.upcoming, 0);
	assert_int_equal(r.new_nodes, 3);
	assert_int_equal(r.n_placed, 6);
	assert_int_equal(r.n_unplaced, 0);
	/* b1..b3 open bins 0..2, then s1..s3 fill them in order */
	assert_int_equal(r.placement[3], 0);
	assert_int_equal(r.placement[4], 1);
	assert_int_equal(r.placement[5], 2);
	assert_int_equal(r.placement[0], 0);
	assert_int_equal(r.placement[1], 1);
	assert_int_equal(r.placement[2], 2);
	assert_float_equal(r.waste_cpu, 0.0, 1e-9);
	assert_float_equal(r.waste_memory, 42.0 / 48.0, 1e-9);
	pack_result_free(&r);
	assert_null(r.placement);
}

static void test_pack_memory_share(void **state)
{
	struct world *w = *state;
	static const char *const names[] = {"cpu-heavy", "mem-heavy", "filler"};
	struct pack_result r;
	struct snapshot *s;

	/* 4 cpu / 16Gi: mem-heavy (12Gi = 0.75) is larger than cpu-heavy (2 = 0.5) */
	add_group(w, "workers", 4000, 16LL << 30, -1);
	add_pod(w, (struct podspec){.name = "cpu-heavy", .cpu = "2", .mem = "1Gi"});
	add_pod(w, (struct podspec){.name = "mem-heavy", .cpu = "1", .mem = "12Gi"});
	add_pod(w, (struct podspec){.name = "filler", .cpu = "1", .mem = "4Gi"});
	s = build(w);

	pack(s, names, 3, -1, &r);
	assert_int_equal(r.placement[1], 0); /* mem-heavy first */
	assert_int_equal(r.placement[0], 0); /* cpu-heavy joins it (3 cpu, 13Gi) */
	assert_int_equal(r.placement[2], 1); /* filler: 4Gi no longer fits bin 0 */
	assert_int_equal(r.new_nodes, 2);
	pack_result_free(&r);
}

static void test_pack_upcoming_first(void **state)
{
	struct world *w = *state;
	static const char *const names[] = {"a", "b", "c"};
	static const char *const one[] = {"small"};
	struct pack_result r;
	struct snapshot *s;

	add_group(w, "workers", 4000, 16LL << 30, 3);
	add_node(w, (struct nodespec){.name = "w1", .group = "workers"});
	add_pod(w, (struct podspec){.name = "a", .cpu = "3"});
	add_pod(w, (struct podspec){.name = "b", .cpu = "3"});
	add_pod(w, (struct podspec){.name = "c", .cpu = "3"});
	add_pod(w, (struct podspec){.name = "small", .cpu = "1"});
	s = build(w);
	assert_int_equal(s->groups[0].current, 1);
	assert_int_equal(s->groups[0].target, 3);

	pack(s, names, 3, -1, &r);
	assert_int_equal(r.upcoming, 2);
	assert_int_equal(r.upcoming_used, 2);
	assert_int_equal(r.new_nodes, 1);
	assert_int_equal(r.placement[0], 0);
	assert_int_equal(r.placement[1], 1);
	assert_int_equal(r.placement[2], 2);
	assert_float_equal(r.waste_cpu, 0.25, 1e-9);
	pack_result_free(&r);

	pack(s, one, 1, -1, &r);
	assert_int_equal(r.upcoming, 2);
	assert_int_equal(r.upcoming_used, 1);
	assert_int_equal(r.new_nodes, 0);
	assert_int_equal(r.placement[0], 0);
	assert_float_equal(r.waste_cpu, 0.0, 1e-9); /* no new nodes */
	assert_float_equal(r.waste_memory, 0.0, 1e-9);
	pack_result_free(&r);
}

/* The nodes on their way can be overridden: none (they are taken), or more. */
static void test_pack_upcoming_override(void **state)
{
	struct world *w = *state;
	struct pack_result r;
	struct errbuf err = {{0}};
	struct snapshot *s;
	uint32_t ix[2];

	add_group(w, "workers", 4000, 16LL << 30, 3);
	add_node(w, (struct nodespec){.name = "w1", .group = "workers"});
	add_pod(w, (struct podspec){.name = "a", .cpu = "3"});
	add_pod(w, (struct podspec){.name = "b", .cpu = "3"});
	s = build(w);
	ix[0] = pod_ix(s, "a");
	ix[1] = pod_ix(s, "b");

	assert_int_equal(sched_pack_upcoming(s, ix, 2, 0, -1, 0, &r, &err), 0);
	assert_int_equal(r.upcoming, 0);
	assert_int_equal(r.upcoming_used, 0);
	assert_int_equal(r.new_nodes, 2);
	pack_result_free(&r);

	assert_int_equal(sched_pack_upcoming(s, ix, 2, 0, -1, 1, &r, &err), 0);
	assert_int_equal(r.upcoming, 1);
	assert_int_equal(r.new_nodes, 1);
	pack_result_free(&r);

	/* -1: the group's own, target 3 - 1 registered */
	assert_int_equal(sched_pack_upcoming(s, ix, 2, 0, -1, -1, &r, &err), 0);
	assert_int_equal(r.upcoming, 2);
	assert_int_equal(r.new_nodes, 0);
	pack_result_free(&r);
}

static void test_pack_unplaceable(void **state)
{
	struct world *w = *state;
	static const char *const names[] = {"huge", "ok", "wrong-pool", "gpu", "untolerated", "tolerant"};
	struct taint taint = {"dedicated", "batch", TAINT_NO_SCHEDULE};
	struct node_group *g;
	struct pack_result r;
	struct snapshot *s;

	g = add_group(w, "batch", 4000, 16LL << 30, -1);
	g->tmpl.taints = &taint;
	g->tmpl.n_taints = 1;
	add_pod(w, (struct podspec){.name = "huge", .cpu = "8", .tol = "{'key':'dedicated','operator':'Exists'}"});
	add_pod(w, (struct podspec){.name = "ok", .cpu = "1", .tol = "{'key':'dedicated','operator':'Exists'}"});
	add_pod(w, (struct podspec){.name = "wrong-pool", .cpu = "1",
				    .spec = "'nodeSelector':{'" GROUP_LABEL "':'gpu'}", .tol = "{'operator':'Exists'}"});
	add_pod(w, (struct podspec){.name = "gpu", .cpu = "1", .ext = "'nvidia.com/gpu':'1'",
				    .tol = "{'operator':'Exists'}"});
	add_pod(w, (struct podspec){.name = "untolerated", .cpu = "1"});
	add_pod(w, (struct podspec){.name = "tolerant", .cpu = "1",
				    .spec = "'nodeSelector':{'" GROUP_LABEL "':'batch'}",
				    .tol = "{'key':'dedicated','operator':'Equal','value':'batch','effect':'NoSchedule'}"});
	s = build(w);

	pack(s, names, 6, -1, &r);
	assert_int_equal(r.placement[0], -1);
	assert_int_equal(r.placement[1], 0);
	assert_int_equal(r.placement[2], -1);
	assert_int_equal(r.placement[3], -1);
	assert_int_equal(r.placement[4], -1);
	assert_int_equal(r.placement[5], 0);
	assert_int_equal(r.n_placed, 2);
	assert_int_equal(r.n_unplaced, 4);
	assert_int_equal(r.new_nodes, 1); /* unplaceable pods open no bin */
	pack_result_free(&r);
}

static void test_pack_max_new(void **state)
{
	struct world *w = *state;
	static const char *const five[] = {"p5", "p4", "p3", "p2", "p1"};
	static const char *const mixed[] = {"p1", "p2", "small"};
	struct pack_result r;
	struct snapshot *s;
	int i;

	add_group(w, "workers", 4000, 16LL << 30, -1);
	for (i = 1; i <= 5; i++) {
		char name[8];

		snprintf(name, sizeof(name), "p%d", i);
		add_pod(w, (struct podspec){.name = name, .cpu = "3"});
	}
	add_pod(w, (struct podspec){.name = "small", .cpu = "1"});
	s = build(w);

	pack(s, five, 5, 2, &r);
	assert_int_equal(r.new_nodes, 2);
	assert_int_equal(r.n_placed, 2);
	assert_int_equal(r.n_unplaced, 3);
	/* equal sizes go by name: p1, p2 get the two nodes */
	assert_int_equal(r.placement[4], 0);
	assert_int_equal(r.placement[3], 1);
	assert_int_equal(r.placement[2], -1);
	assert_int_equal(r.placement[1], -1);
	assert_int_equal(r.placement[0], -1);
	pack_result_free(&r);

	/* past the cap, smaller pods still fill the open bins */
	pack(s, mixed, 3, 1, &r);
	assert_int_equal(r.placement[0], 0);
	assert_int_equal(r.placement[1], -1);
	assert_int_equal(r.placement[2], 0);
	assert_int_equal(r.new_nodes, 1);
	pack_result_free(&r);

	pack(s, mixed, 3, 0, &r);
	assert_int_equal(r.new_nodes, 0);
	assert_int_equal(r.n_placed, 0);
	assert_int_equal(r.n_unplaced, 3);
	pack_result_free(&r);
}

static void test_pack_waste(void **state)
{
	struct world *w = *state;
	static const char *const one[] = {"p"};
	static const char *const two[] = {"p", "q"};
	struct pack_result r;
	struct snapshot *s;

	add_group(w, "workers", 4000, 8LL << 30, -1);
	add_pod(w, (struct podspec){.name = "p", .cpu = "1", .mem = "2Gi"});
	add_pod(w, (struct podspec){.name = "q", .cpu = "3500m", .mem = "1Gi"});
	s = build(w);

	pack(s, one, 1, -1, &r);
	assert_int_equal(r.new_nodes, 1);
	assert_float_equal(r.waste_cpu, 0.75, 1e-9);
	assert_float_equal(r.waste_memory, 0.75, 1e-9);
	pack_result_free(&r);

	/* q (3.5 cpu) on one node, p on another: 4.5 of 8 cpu used, 3Gi of 16Gi */
	pack(s, two, 2, -1, &r);
	assert_int_equal(r.new_nodes, 2);
	assert_float_equal(r.waste_cpu, 3.5 / 8.0, 1e-9);
	assert_float_equal(r.waste_memory, 13.0 / 16.0, 1e-9);
	pack_result_free(&r);
}

static void test_pack_deterministic(void **state)
{
	struct world *w = *state;
	static const char *const order1[] = {"b", "a", "c"};
	static const char *const order2[] = {"c", "b", "a"};
	struct pack_result r1, r2;
	struct snapshot *s;

	add_group(w, "workers", 4000, 16LL << 30, -1);
	add_pod(w, (struct podspec){.name = "c", .cpu = "2"});
	add_pod(w, (struct podspec){.name = "b", .cpu = "2"});
	add_pod(w, (struct podspec){.name = "a", .cpu = "2"});
	s = build(w);

	pack(s, order1, 3, -1, &r1);
	pack(s, order2, 3, -1, &r2);
	/* a and b share node 0, c gets node 1, whatever the input order */
	assert_int_equal(r1.placement[0], 0); /* b */
	assert_int_equal(r1.placement[1], 0); /* a */
	assert_int_equal(r1.placement[2], 1); /* c */
	assert_int_equal(r2.placement[0], 1); /* c */
	assert_int_equal(r2.placement[1], 0); /* b */
	assert_int_equal(r2.placement[2], 0); /* a */
	pack_result_free(&r1);
	pack_result_free(&r2);
}

static void test_pack_pod_slots_and_extended(void **state)
{
	struct world *w = *state;
	static const char *const tiny[] = {"t1", "t2", "t3"};
	static const char *const gpus[] = {"g1", "g2", "t1"};
	struct res_ext gpu = {"nvidia.com/gpu", 1};
	struct node_group *g;
	struct pack_result r;
	struct snapshot *s;

	g = add_group(w, "gpu", 8000, 32LL << 30, -1);
	g->tmpl.allocatable.pods = 2;
	g->tmpl.allocatable.ext = &gpu;
	g->tmpl.allocatable.n_ext = 1;
	add_pod(w, (struct podspec){.name = "t1", .cpu = "100m"});
	add_pod(w, (struct podspec){.name = "t2", .cpu = "100m"});
	add_pod(w, (struct podspec){.name = "t3", .cpu = "100m"});
	add_pod(w, (struct podspec){.name = "g1", .cpu = "1", .ext = "'nvidia.com/gpu':'1'"});
	add_pod(w, (struct podspec){.name = "g2", .cpu = "1", .ext = "'nvidia.com/gpu':'1'"});
	s = build(w);

	pack(s, tiny, 3, -1, &r);
	assert_int_equal(r.new_nodes, 2); /* 2 pods per node */
	pack_result_free(&r);

	pack(s, gpus, 3, -1, &r);
	assert_int_equal(r.new_nodes, 2); /* 1 gpu per node */
	assert_int_equal(r.placement[0], 0);
	assert_int_equal(r.placement[1], 1);
	assert_int_equal(r.placement[2], 0);
	pack_result_free(&r);
}

static void test_pack_errors(void **state)
{
	struct world *w = *state;
	struct errbuf err = {{0}};
	struct pack_result r;
	struct snapshot *s;
	uint32_t ix;

	add_group(w, "workers", 4000, 16LL << 30, -1);
	add_pod(w, (struct podspec){.name = "p", .cpu = "1"});
	s = build(w);

	ix = pod_ix(s, "p");
	assert_int_equal(sched_pack(s, &ix, 1, 7, -1, &r, &err), -1);
	assert_true(strlen(err.msg) > 0);
	assert_null(r.placement);
	err.msg[0] = '\0';
	ix = 1000;
	assert_int_equal(sched_pack(s, &ix, 1, 0, -1, &r, &err), -1);
	assert_true(strlen(err.msg) > 0);
	assert_null(r.placement);

	assert_int_equal(sched_pack(s, NULL, 0, 0, -1, &r, &err), 0);
	assert_int_equal(r.new_nodes, 0);
	assert_int_equal(r.n_placed, 0);
	pack_result_free(&r);
}

/* Many pods of mixed sizes: every bin respects the template, counts add up. */
static void test_pack_many_consistent(void **state)
{
	struct world *w = *state;
	enum { N = 3000 };
	struct errbuf err = {{0}};
	struct pack_result r;
	struct snapshot *s;
	int64_t *cpu, *mem, *cnt;
	uint32_t seed = 12345;
	size_t i, placed = 0;

	add_group(w, "workers", 8000, 32LL << 30, -1);
	for (i = 0; i < N; i++) {
		char name[16], c[16], m[16];

		seed = seed * 1103515245u + 12345u;
		snprintf(name, sizeof(name), "p%05zu", i);
		snprintf(c, sizeof(c), "%um", 100 + (seed >> 8) % 4000);
		snprintf(m, sizeof(m), "%uMi", 64 + (seed >> 4) % 8192);
		add_pod(w, (struct podspec){.name = name, .cpu = c, .mem = m});
	}
	s = build(w);
	assert_int_equal(s->n_pending, N);
	assert_int_equal(sched_pack(s, s->pending, s->n_pending, 0, -1, &r, &err), 0);
	assert_int_equal(r.n_unplaced, 0);
	assert_true(r.new_nodes > 0);

	cpu = calloc((size_t)r.new_nodes, sizeof(*cpu));
	mem = calloc((size_t)r.new_nodes, sizeof(*mem));
	cnt = calloc((size_t)r.new_nodes, sizeof(*cnt));
	assert_non_null(cpu);
	assert_non_null(mem);
	assert_non_null(cnt);
	for (i = 0; i < N; i++) {
		const struct pod *p = &s->pods[s->pending[i]];
		int32_t b = r.placement[i];

		assert_true(b >= 0 && b < r.new_nodes);
		cpu[b] += p->requests.cpu_m;
		mem[b] += p->requests.memory;
		cnt[b]++;
		placed++;
	}
	for (i = 0; i < (size_t)r.new_nodes; i++) {
		assert_true(cpu[i] <= 8000);
		assert_true(mem[i] <= (32LL << 30));
		assert_true(cnt[i] >= 1 && cnt[i] <= 110);
	}
	assert_int_equal(placed, r.n_placed);
	free(cpu);
	free(mem);
	free(cnt);
	pack_result_free(&r);
}

/* ---- drains ---- */

static bool drainable(const struct snapshot *s, const char *node,
		      const struct drain_opts *o, char *why, size_t len)
{
	struct drain_opts def;

	if (!o) {
		drain_opts_default(&def);
		o = &def;
	}
	return sched_drainable(s, node_ix(s, node), o, why, len);
}

static void test_drain_opts_default(void **state)
{
	struct drain_opts o;

	(void)state;
	memset(&o, 0xff, sizeof(o));
	drain_opts_default(&o);
	assert_null(o.protected_pods);
	assert_null(o.excluded);
	assert_true(o.local_storage_blocks);
	assert_true(o.unreplicated_blocks);
	assert_false(o.kube_system_needs_pdb);
}

static void test_drain_ignores_daemonset_mirror_finished(void **state)
{
	struct world *w = *state;
	struct snapshot *s;
	char why[256] = "";

	add_node(w, (struct nodespec){.name = "n1"});
	add_pod(w, (struct podspec){.ns = "kube-system", .name = "kube-proxy-x", .node = "n1",
				    .cpu = "100m", .owner = "DaemonSet",
				    .spec = "'volumes':[{'name':'xtables-lock','hostPath':{'path':'/run/xtables.lock','type':'FileOrCreate'}}]"});
	add_pod(w, (struct podspec){.ns = "kube-system", .name = "etcd-n1", .node = "n1",
				    .cpu = "100m", .owner = "Node",
				    .annotations = "'kubernetes.io/config.mirror':'0123abcd','kubernetes.io/config.source':'file'",
				    .spec = "'volumes':[{'name':'etcd-data','hostPath':{'path':'/var/lib/etcd','type':'DirectoryOrCreate'}}]"});
	add_pod(w, (struct podspec){.name = "done", .node = "n1", .cpu = "1", .owner = "",
				    .phase = "Succeeded"});
	add_pod(w, (struct podspec){.name = "failed", .node = "n1", .cpu = "1", .owner = "Job",
				    .phase = "Failed",
				    .spec = "'volumes':[{'name':'scratch','emptyDir':{}}]"});
	add_pod(w, (struct podspec){.name = "leaving", .node = "n1", .cpu = "1", .owner = "",
				    .meta = "'deletionTimestamp':'2024-05-01T09:59:00Z','deletionGracePeriodSeconds':30"});
	add_node(w, (struct nodespec){.name = "empty"});
	s = build(w);

	assert_false(sched_pod_evictable(pod_of(s, "kube-system/kube-proxy-x")));
	assert_false(sched_pod_evictable(pod_of(s, "kube-system/etcd-n1")));
	assert_false(sched_pod_evictable(pod_of(s, "done")));
	assert_false(sched_pod_evictable(pod_of(s, "failed")));
	assert_false(sched_pod_evictable(pod_of(s, "leaving")));

	/* nothing to move, nowhere to go except 'empty' (which is fine) */
	assert_true(drainable(s, "n1", NULL, why, sizeof(why)));
	assert_true(drainable(s, "empty", NULL, why, sizeof(why)));
}

static void test_drain_local_storage(void **state)
{
	struct world *w = *state;
	struct drain_opts o;
	struct snapshot *s;
	char why[256];

	add_node(w, (struct nodespec){.name = "n1"});
	add_node(w, (struct nodespec){.name = "n2"});
	add_pod(w, (struct podspec){.name = "db-0", .node = "n1", .cpu = "1", .owner = "StatefulSet",
				    .spec = "'volumes':[{'name':'config','configMap':{'name':'db'}},{'name':'data','emptyDir':{}}]"});
	s = build(w);
	assert_true(sched_pod_evictable(pod_of(s, "db-0")));

	assert_false(drainable(s, "n1", NULL, why, sizeof(why)));
	assert_string_equal(why, "pod default/db-0 uses local storage (volume data)");
	assert_false(sched_node_blockers(s, node_ix(s, "n1"), NULL, why, sizeof(why)));

	drain_opts_default(&o);
	o.local_storage_blocks = false;
	assert_true(drainable(s, "n1", &o, why, sizeof(why)));
	assert_true(sched_node_blockers(s, node_ix(s, "n1"), &o, why, sizeof(why)));
}

static void test_drain_unreplicated(void **state)
{
	struct world *w = *state;
	struct drain_opts o;
	struct snapshot *s;
	char why[256];

	add_node(w, (struct nodespec){.name = "n1"});
	add_node(w, (struct nodespec){.name = "n2"});
	add_pod(w, (struct podspec){.name = "web-1", .node = "n1", .cpu = "1"});
	add_pod(w, (struct podspec){.name = "bare", .node = "n1", .cpu = "1", .owner = ""});
	s = build(w);

	assert_false(drainable(s, "n1", NULL, why, sizeof(why)));
	assert_string_equal(why, "pod default/bare is not managed by a controller");
	drain_opts_default(&o);
	o.unreplicated_blocks = false;
	assert_true(drainable(s, "n1", &o, why, sizeof(why)));
}

static void test_drain_safe_to_evict(void **state)
{
	struct world *w = *state;
	struct snapshot *s;
	char why[256];

	add_node(w, (struct nodespec){.name = "n1"});
	add_node(w, (struct nodespec){.name = "n2"});
	add_node(w, (struct nodespec){.name = "n3"});
	add_pod(w, (struct podspec){.name = "batch", .node = "n1", .cpu = "1",
				    .annotations = "'cluster-autoscaler.kubernetes.io/safe-to-evict':'false'"});
	add_pod(w, (struct podspec){.name = "fine", .node = "n3", .cpu = "1",
				    .annotations = "'cluster-autoscaler.kubernetes.io/safe-to-evict':'true'"});
	s = build(w);

	assert_false(drainable(s, "n1", NULL, why, sizeof(why)));
	assert_string_equal(why, "pod default/batch has safe-to-evict=false");
	assert_true(drainable(s, "n3", NULL, why, sizeof(why)));
}

static void test_drain_pdb(void **state)
{
	struct world *w = *state;
	struct snapshot *s;
	char why[256];

	add_node(w, (struct nodespec){.name = "n1"});
	add_node(w, (struct nodespec){.name = "n2"});
	add_node(w, (struct nodespec){.name = "n3"});
	add_node(w, (struct nodespec){.name = "n4"});
	add_node(w, (struct nodespec){.name = "spare", .cpu = "32", .mem = "128Gi"});
	/* n1: two web pods, web allows 1 disruption */
	add_pod(w, (struct podspec){.name = "web-1", .node = "n1", .cpu = "1", .labels = "'app':'web'"});
	add_pod(w, (struct podspec){.name = "web-2", .node = "n1", .cpu = "1", .labels = "'app':'web'"});
	/* n2: one web pod: allowed */
	add_pod(w, (struct podspec){.name = "web-3", .node = "n2", .cpu = "1", .labels = "'app':'web'"});
	/* n3: api pod, api allows 0 */
	add_pod(w, (struct podspec){.name = "api-1", .node = "n3", .cpu = "1", .labels = "'app':'api'"});
	/* n4: a pod of another namespace with the same labels */
	add_pod(w, (struct podspec){.ns = "other", .name = "api-9", .node = "n4", .cpu = "1",
				    .labels = "'app':'api'"});
	/* n5: a PDB selecting the whole namespace counts only evictable pods */
	add_node(w, (struct nodespec){.name = "n5"});
	add_pod(w, (struct podspec){.ns = "monitoring", .name = "prometheus-0", .node = "n5",
				    .cpu = "1", .owner = "StatefulSet"});
	add_pod(w, (struct podspec){.ns = "monitoring", .name = "node-exporter-x", .node = "n5",
				    .cpu = "100m", .owner = "DaemonSet"});
	add_pdb(w, "default", "web", "'app':'web'", 1);
	add_pdb(w, "default", "api", "'app':'api'", 0);
	add_pdb(w, "monitoring", "everything", "", 1);
	s = build(w);

	assert_false(drainable(s, "n1", NULL, why, sizeof(why)));
	assert_string_equal(why, "pod default/web-1: PodDisruptionBudget default/web allows 1 disruption, draining needs 2");
	assert_true(drainable(s, "n2", NULL, why, sizeof(why)));
	assert_false(drainable(s, "n3", NULL, why, sizeof(why)));
	assert_string_equal(why, "pod default/api-1: PodDisruptionBudget default/api allows 0 disruptions, draining needs 1");
	assert_true(drainable(s, "n4", NULL, why, sizeof(why)));
	assert_true(drainable(s, "n5", NULL, why, sizeof(why)));
}

static void test_drain_protected(void **state)
{
	struct world *w = *state;
	const char *vals[] = {"true"};
	struct selector_req req = {"hub.jupyter.org/autoscaler-critical", SELECTOR_IN, vals, 1};
	struct label_selector sel = {&req, 1};
	struct label_selector empty = {NULL, 0};
	struct drain_opts o;
	struct snapshot *s;
	char why[256];

	add_node(w, (struct nodespec){.name = "n1"});
	add_node(w, (struct nodespec){.name = "n2"});
	add_node(w, (struct nodespec){.name = "n3"});
	add_node(w, (struct nodespec){.name = "spare", .cpu = "32", .mem = "128Gi"});
	add_pod(w, (struct podspec){.ns = "jhub", .name = "hub-0", .node = "n1", .cpu = "1",
				    .labels = "'component':'hub','hub.jupyter.org/autoscaler-critical':'true'"});
	add_pod(w, (struct podspec){.ns = "jhub", .name = "agent-x", .node = "n2", .cpu = "100m",
				    .owner = "DaemonSet",
				    .labels = "'hub.jupyter.org/autoscaler-critical':'true'"});
	add_pod(w, (struct podspec){.ns = "jhub", .name = "old-hub", .node = "n3", .cpu = "1",
				    .phase = "Succeeded",
				    .labels = "'hub.jupyter.org/autoscaler-critical':'true'"});
	add_pod(w, (struct podspec){.ns = "jhub", .name = "user-1", .node = "n3", .cpu = "1",
				    .labels = "'component':'singleuser-server'"});
	s = build(w);

	drain_opts_default(&o);
	o.protected_pods = &sel;
	assert_false(drainable(s, "n1", &o, why, sizeof(why)));
	assert_string_equal(why, "pod jhub/hub-0 is protected (matches selector hub.jupyter.org/autoscaler-critical=true)");
	/* a protected DaemonSet pod protects its node too */
	assert_false(drainable(s, "n2", &o, why, sizeof(why)));
	assert_non_null(strstr(why, "pod jhub/agent-x is protected"));
	/* a finished protected pod does not */
	assert_true(drainable(s, "n3", &o, why, sizeof(why)));
	/* without the option, or with an empty selector, nothing is protected */
	assert_true(drainable(s, "n1", NULL, why, sizeof(why)));
	o.protected_pods = &empty;
	assert_true(drainable(s, "n1", &o, why, sizeof(why)));
	assert_true(drainable(s, "n2", &o, why, sizeof(why)));
}

static void test_drain_kube_system_pdb(void **state)
{
	struct world *w = *state;
	struct drain_opts o;
	struct snapshot *s;
	char why[256];

	add_node(w, (struct nodespec){.name = "n1"});
	add_node(w, (struct nodespec){.name = "n2"});
	add_node(w, (struct nodespec){.name = "spare", .cpu = "32", .mem = "128Gi"});
	add_pod(w, (struct podspec){.ns = "kube-system", .name = "coredns-x", .node = "n1",
				    .cpu = "100m", .labels = "'k8s-app':'kube-dns'"});
	add_pod(w, (struct podspec){.ns = "kube-system", .name = "metrics-server-x", .node = "n2",
				    .cpu = "100m", .labels = "'k8s-app':'metrics-server'"});
	add_pdb(w, "kube-system", "metrics-server", "'k8s-app':'metrics-server'", 1);
	s = build(w);

	assert_true(drainable(s, "n1", NULL, why, sizeof(why)));
	drain_opts_default(&o);
	o.kube_system_needs_pdb = true;
	assert_false(drainable(s, "n1", &o, why, sizeof(why)));
	assert_string_equal(why, "pod kube-system/coredns-x has no PodDisruptionBudget");
	assert_true(drainable(s, "n2", &o, why, sizeof(why)));
}

static void test_drain_no_room(void **state)
{
	struct world *w = *state;
	struct snapshot *s;
	char why[256];

	add_node(w, (struct nodespec){.name = "n1"});
	add_node(w, (struct nodespec){.name = "n2"});
	add_node(w, (struct nodespec){.name = "n3"});
	add_pod(w, (struct podspec){.name = "big", .node = "n1", .cpu = "3", .mem = "1Gi"});
	add_pod(w, (struct podspec){.name = "busy", .node = "n2", .cpu = "2", .mem = "1Gi"});
	/* n3: two 2-cpu pods; n2 has 2 cpu free: room is taken as pods are placed */
	add_pod(w, (struct podspec){.name = "half-a", .node = "n3", .cpu = "2", .mem = "4Gi"});
	add_pod(w, (struct podspec){.name = "half-b", .node = "n3", .cpu = "2", .mem = "4Gi"});
	s = build(w);

	/* n1's big pod: n2 has 2 cpu free, n3 none */
	assert_false(drainable(s, "n1", NULL, why, sizeof(why)));
	assert_string_equal(why, "no room for pod default/big (needs cpu 3, memory 1Gi)");
	/* n3: half-a goes to n2 (n1 has 1 cpu free), half-b has nowhere */
	assert_false(drainable(s, "n3", NULL, why, sizeof(why)));
	assert_string_equal(why, "no room for pod default/half-b (needs cpu 2, memory 4Gi)");
	/* a node never receives its own pods */
	assert_false(drainable(s, "n2", NULL, why, sizeof(why)));
	/* a short buffer is truncated */
	assert_false(drainable(s, "n1", NULL, why, 10));
	assert_string_equal(why, "no room f");
}

static void test_drain_excluded_destination(void **state)
{
	struct world *w = *state;
	struct drain_opts o;
	struct snapshot *s;
	uint8_t excluded[2] = {0, 0};
	char why[256];

	add_node(w, (struct nodespec){.name = "n1"});
	add_node(w, (struct nodespec){.name = "n2"});
	add_pod(w, (struct podspec){.name = "web-1", .node = "n1", .cpu = "1"});
	s = build(w);
	assert_int_equal(s->n_nodes, 2);

	drain_opts_default(&o);
	o.excluded = excluded;
	assert_true(drainable(s, "n1", &o, why, sizeof(why)));
	excluded[node_ix(s, "n2")] = 1;
	assert_false(drainable(s, "n1", &o, why, sizeof(why)));
	assert_non_null(strstr(why, "no room for pod default/web-1"));
	/* the drained node itself being excluded changes nothing */
	excluded[node_ix(s, "n2")] = 0;
	excluded[node_ix(s, "n1")] = 1;
	assert_true(drainable(s, "n1", &o, why, sizeof(why)));
}

static void test_drain_skips_cordoned_and_not_ready(void **state)
{
	struct world *w = *state;
	struct drain_opts o;
	struct snapshot *s;
	uint8_t excluded[4] = {0};
	char why[256];

	add_node(w, (struct nodespec){.name = "n1"});
	add_node(w, (struct nodespec){.name = "cordoned", .spec = "'unschedulable':true"});
	add_node(w, (struct nodespec){.name = "down", .not_ready = true});
	add_node(w, (struct nodespec){.name = "up"});
	add_pod(w, (struct podspec){.name = "web-1", .node = "n1", .cpu = "1"});
	s = build(w);
	assert_int_equal(s->n_nodes, 4);

	/* with 'up' out of the way only the cordoned and NotReady nodes have room */
	drain_opts_default(&o);
	o.excluded = excluded;
	excluded[node_ix(s, "up")] = 1;
	assert_false(drainable(s, "n1", &o, why, sizeof(why)));
	assert_string_equal(why, "no room for pod default/web-1 (needs cpu 1, memory 0)");
	excluded[node_ix(s, "up")] = 0;
	assert_true(drainable(s, "n1", &o, why, sizeof(why)));
}

static void test_drain_respects_destination_labels(void **state)
{
	struct world *w = *state;
	struct snapshot *s;
	char why[256];

	add_node(w, (struct nodespec){.name = "n1", .labels = "'disktype':'ssd'"});
	add_node(w, (struct nodespec){.name = "plain"});
	add_node(w, (struct nodespec){.name = "tainted", .labels = "'disktype':'ssd'",
				      .spec = "'taints':[{'key':'dedicated','value':'db','effect':'NoSchedule'}]"});
	add_node(w, (struct nodespec){.name = "m1", .labels = "'disktype':'ssd'"});
	add_pod(w, (struct podspec){.name = "fast", .node = "n1", .cpu = "1",
				    .spec = "'nodeSelector':{'disktype':'ssd'}"});
	add_pod(w, (struct podspec){.name = "fast-2", .node = "m1", .cpu = "1",
				    .spec = "'nodeSelector':{'disktype':'ssd'}"});
	add_pod(w, (struct podspec){.name = "hog", .node = "n1", .cpu = "3500m"});
	s = build(w);

	/* fast-2: plain lacks the label, tainted has the taint, n1 is overcommitted */
	assert_false(drainable(s, "m1", NULL, why, sizeof(why)));
	assert_string_equal(why, "no room for pod default/fast-2 (needs cpu 1, memory 0)");
	/* n1: hog -> plain, fast -> m1 (only untainted ssd node with room) */
	assert_true(drainable(s, "n1", NULL, why, sizeof(why)));
}

static void test_drain_largest_first(void **state)
{
	struct world *w = *state;
	struct snapshot *s;
	char why[256];

	add_node(w, (struct nodespec){.name = "n1"});
	add_node(w, (struct nodespec){.name = "n2"});
	add_node(w, (struct nodespec){.name = "n3"});
	add_pod(w, (struct podspec){.name = "used-2", .node = "n2", .cpu = "1"});
	add_pod(w, (struct podspec){.name = "used-3", .node = "n3", .cpu = "3"});
	/* a-small sorts first by name and by input order; it must go last */
	add_pod(w, (struct podspec){.name = "a-small", .node = "n1", .cpu = "1", .mem = "1Gi"});
	add_pod(w, (struct podspec){.name = "z-large", .node = "n1", .cpu = "3", .mem = "1Gi"});
	s = build(w);

	/* z-large -> n2 (3 free), a-small -> n3 (1 free) */
	assert_true(drainable(s, "n1", NULL, why, sizeof(why)));
	assert_true(sched_node_blockers(s, node_ix(s, "n1"), NULL, why, sizeof(why)));
}

/* ---- packing against the plain first-fit-decreasing reference ---- */

/* The reference: first fit decreasing by scanning every open bin from the
 * first, as packing was first written, through the public room functions. */
struct ref_item {
	double key;
	const struct pod *p;
	size_t idx;
};

static double ref_share(int64_t want, int64_t total)
{
	return want <= 0 || total <= 0 ? 0.0 : (double)want / (double)total;
}

static int ref_cmp(const void *a, const void *b)
{
	const struct ref_item *x = a, *y = b;
	int c;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	c = strcmp(x->p->ns ? x->p->ns : "", y->p->ns ? y->p->ns : "");
	if (c)
		return c;
	c = strcmp(x->p->name ? x->p->name : "", y->p->name ? y->p->name : "");
	if (c)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void ref_pack(const struct snapshot *s, const uint32_t *pods, size_t n, size_t group,
		     int max_new, int upcoming_nodes, int32_t *placement, int *new_nodes)
{
	const struct node_group *g = &s->groups[group];
	const struct resources *t = &g->tmpl.allocatable;
	struct ref_item *items = calloc(n ? n : 1, sizeof(*items));
	struct room *bins = NULL;
	size_t n_items = 0, nb = 0, cap = 0, upcoming, i, b;

	assert_non_null(items);
	upcoming = g->target > g->current ? (size_t)(g->target - g->current) : 0;
	if (upcoming_nodes >= 0)
		upcoming = (size_t)upcoming_nodes;
	for (i = 0; i < n; i++) {
		const struct pod *p = &s->pods[pods[i]];
		double c = ref_share(p->requests.cpu_m, t->cpu_m);
		double m = ref_share(p->requests.memory, t->memory);

		placement[i] = -1;
		if (sched_fits_template(p, g, NULL, 0) != SCHED_FITS)
			continue;
		items[n_items++] = (struct ref_item){c > m ? c : m, p, i};
	}
	qsort(items, n_items, sizeof(*items), ref_cmp);
	for (i = 0; i < upcoming + n_items; i++) {
		if (i >= upcoming) {
			const struct resources *req = &items[i - upcoming].p->requests;

			for (b = 0; b < nb; b++)
				if (room_fits(&bins[b], req, NULL, 0) == SCHED_FITS)
					break;
			if (b < nb) {
				room_take(&bins[b], req);
				placement[items[i - upcoming].idx] = (int32_t)b;
				continue;
			}
			if (max_new >= 0 && nb - upcoming >= (size_t)max_new)
				continue;
		}
		if (nb == cap) {
			cap = cap ? 2 * cap : 64;
			bins = realloc(bins, cap * sizeof(*bins));
			assert_non_null(bins);
		}
		assert_int_equal(room_of_template(g, &bins[nb]), 0);
		nb++;
		if (i >= upcoming) {
			room_take(&bins[nb - 1], &items[i - upcoming].p->requests);
			placement[items[i - upcoming].idx] = (int32_t)(nb - 1);
		}
	}
	*new_nodes = (int)(nb - upcoming);
	for (b = 0; b < nb; b++)
		room_free(&bins[b]);
	free(bins);
	free(items);
}

static uint32_t ref_rand(uint32_t *r)
{
	*r = *r * 1103515245u + 12345u;
	return (*r >> 8) & 0xffffff;
}

/*
 * Randomized clusters: pods of mixed and repeated sizes (ties broken by
 * namespace, name and position), zero requests, ephemeral storage and GPUs,
 * node selectors, affinity and tolerations, upcoming nodes and caps on new
 * nodes. The indexed packing must put every pod on the very bin the
 * reference does.
 */
static void test_pack_matches_reference(void **state)
{
	static struct res_ext gpu_ext[] = {{"nvidia.com/gpu", 4}};
	static struct taint gpu_taint[] = {{"nvidia.com/gpu", "present", TAINT_NO_SCHEDULE}};
	static const char *const zones[] = {"a", "b", "c"};
	struct world *w = *state;
	uint32_t seed;

	for (seed = 1; seed <= 6; seed++) {
		uint32_t r = seed * 2654435761u;
		struct snapshot *s;
		struct node_group *g;
		struct sched_cache *cache;
		size_t n_pods = 200 + seed * 250, i, gi, half;

#define RND() ref_rand(&r)
		snapshot_free(w->s);
		w->s = NULL;
		buf_free(&w->items);
		w->n_items = 0;
		w->n_groups = 0;
		{
			int64_t small_cpu = 2000 + (int64_t)(RND() % 3) * 1000;
			int64_t small_mem = (4LL + RND() % 4) << 30;

			add_group(w, "small", small_cpu, small_mem, -1);
		}
		g = add_group(w, "big", 16000, 64LL << 30, (int)(RND() % 5));
		g->tmpl.allocatable.ephemeral = 20LL << 30;
		g = add_group(w, "gpu", 8000, 32LL << 30, -1);
		g->tmpl.allocatable.ext = gpu_ext;
		g->tmpl.allocatable.n_ext = 1;
		g->tmpl.taints = gpu_taint;
		g->tmpl.n_taints = 1;
		add_group(w, "mid", 4000, 16LL << 30, 2);
		for (i = 0; i < n_pods; i++) {
			char name[32], ns[16], cpu[16], mem[16], ext[96] = "", spec[256] = "", tol[128] = "";
			unsigned kind = RND() % 100;
			bool repeat = RND() % 3 == 0; /* sizes from a short list: ties */

			snprintf(name, sizeof(name), "p%03u", (unsigned)(RND() % (n_pods / 2 + 1)));
			snprintf(ns, sizeof(ns), "ns%u", (unsigned)(RND() % 3));
			snprintf(cpu, sizeof(cpu), "%um", repeat ? 500u * (1 + (unsigned)RND() % 3) :
				 50 + (unsigned)(RND() % 3950));
			snprintf(mem, sizeof(mem), "%uMi", repeat ? 1024u * (1 + (unsigned)RND() % 2) :
				 64 + (unsigned)(RND() % 8000));
			if (kind < 8)
				snprintf(ext, sizeof(ext), "'nvidia.com/gpu':'%u'", 1 + (unsigned)(RND() % 3));
			else if (kind < 16)
				snprintf(ext, sizeof(ext), "'ephemeral-storage':'%uGi'", 1 + (unsigned)(RND() % 8));
			if (kind < 6)
				snprintf(tol, sizeof(tol), "{'key':'nvidia.com/gpu','operator':'Exists'}");
			if (kind >= 20 && kind < 35)
				snprintf(spec, sizeof(spec), "'nodeSelector':{'" GROUP_LABEL "':'%s'}",
					 RND() % 2 ? "big" : "mid");
			else if (kind >= 35 && kind < 50)
				snprintf(spec, sizeof(spec),
					 "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
					 "{'nodeSelectorTerms':[{'matchExpressions':[{'key':'" GROUP_LABEL
					 "','operator':'NotIn','values':['%s']}]}]}}}", zones[RND() % 3][0] == 'a' ?
					 "small" : "mid");
			/* a name may repeat within a namespace: keep the pair unique */
			snprintf(name + strlen(name), sizeof(name) - strlen(name), "-%zu", i);
			add_pod(w, (struct podspec){
				.ns = ns, .name = name,
				.cpu = kind >= 16 && kind < 19 ? NULL : cpu,
				.mem = kind == 19 ? NULL : mem,
				.ext = *ext ? ext : NULL,
				.spec = *spec ? spec : NULL,
				.tol = *tol ? tol : NULL,
			});
		}
		s = build(w);
		assert_int_equal(s->n_pending, n_pods);
		/* one cache for all of this snapshot's packings, as a view keeps */
		cache = sched_cache_new(s);
		assert_non_null(cache);
		for (gi = 0; gi < s->n_groups; gi++) {
			static const int caps[] = {-1, 0, 3, 40};
			size_t c;

			for (c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
				int upcoming = c == 2 ? 1 : -1, ref_new = 0;
				int32_t *want = malloc(n_pods * sizeof(*want));
				struct errbuf err = {{0}};
				struct pack_result res;

				assert_non_null(want);
				ref_pack(s, s->pending, s->n_pending, gi, caps[c], upcoming, want, &ref_new);
				if (sched_pack_upcoming(s, s->pending, s->n_pending, gi, caps[c], upcoming,
							&res, &err) < 0)
					fail_msg("sched_pack_upcoming: %s", err.msg);
				for (i = 0; i < n_pods; i++)
					if (res.placement[i] != want[i])
						fail_msg("seed %u group %s cap %d: pod %s/%s on bin %d, the reference puts it on %d",
							 seed, s->groups[gi].name, caps[c],
							 s->pods[s->pending[i]].ns, s->pods[s->pending[i]].name,
							 res.placement[i], want[i]);
				assert_int_equal(res.new_nodes, ref_new);
				pack_result_free(&res);
				/* the cached packing: the same bins, on every list (all
				 * pending pods; the second half, reversed; two thirds of
				 * them as a round of packing.cheapest() leaves, which
				 * walks the group's order; and those with one pod listed
				 * twice, which may not) */
				for (half = 0; half < 4; half++) {
					size_t m = half == 0 ? n_pods : half == 1 ? n_pods / 2 : 0, j;
					uint32_t *list = malloc((n_pods + 1) * sizeof(*list));

					assert_non_null(list);
					if (half <= 1) {
						for (j = 0; j < m; j++)
							list[j] = half ? s->pending[n_pods - 1 - j] : s->pending[j];
					} else {
						for (j = 0; j < n_pods; j++)
							if ((j * 7 + gi + c) % 3 != 0)
								list[m++] = s->pending[j];
						if (half == 3) {
							size_t again = m / 2;

							list[m++] = list[again];
						}
					}
					ref_pack(s, list, m, gi, caps[c], upcoming, want, &ref_new);
					if (sched_pack_cached(cache, list, m, gi, caps[c], upcoming, &res,
							      &err) < 0)
						fail_msg("sched_pack_cached: %s", err.msg);
					for (j = 0; j < m; j++)
						if (res.placement[j] != want[j])
							fail_msg("seed %u group %s cap %d list %zu: cached pod %s/%s on bin %d, the reference puts it on %d",
								 seed, s->groups[gi].name, caps[c], half,
								 s->pods[list[j]].ns, s->pods[list[j]].name,
								 res.placement[j], want[j]);
					assert_int_equal(res.new_nodes, ref_new);
					pack_result_free(&res);
					free(list);
				}
				free(want);
			}
		}
		sched_cache_free(cache);
#undef RND
	}
}

/* ---- placing on the nodes as they are, against a plain scan ---- */

/* The reference: each pod in the order given onto the first eligible node
 * by scanning every node from the first, through the public predicates. */
static void ref_place(const struct snapshot *s, const uint32_t *pods, size_t n, int32_t *dest)
{
	struct room *rooms = calloc(s->n_nodes ? s->n_nodes : 1, sizeof(*rooms));
	size_t i, k;

	assert_non_null(rooms);
	for (k = 0; k < s->n_nodes; k++)
		assert_int_equal(room_of_node(s, k, &rooms[k]), 0);
	for (i = 0; i < n; i++) {
		const struct pod *p = &s->pods[pods[i]];

		dest[i] = -1;
		for (k = 0; k < s->n_nodes; k++) {
			const struct node *nd = &s->nodes[k];

			if (!nd->ready || nd->unschedulable || nd->removing ||
			    room_fits(&rooms[k], &p->requests, NULL, 0) != SCHED_FITS ||
			    sched_fits_labels(p, nd->name, &nd->labels, nd->taints, nd->n_taints, false,
					      NULL, 0) != SCHED_FITS)
				continue;
			room_take(&rooms[k], &p->requests);
			dest[i] = (int32_t)k;
			break;
		}
	}
	for (k = 0; k < s->n_nodes; k++)
		room_free(&rooms[k]);
	free(rooms);
}

/*
 * Randomized clusters: nodes of mixed sizes, some with GPUs, tainted,
 * cordoned, not Ready or overcommitted, partly filled by bound pods;
 * pending pods of repeated and zero sizes, with GPUs, ephemeral storage,
 * node selectors, affinity on a label or on the node's name, and
 * tolerations. The indexed place must put every pod on the very node the
 * scan does, in every order (as given, reversed).
 */
static void test_place_matches_reference(void **state)
{
	struct world *w = *state;
	uint32_t seed;

	for (seed = 1; seed <= 8; seed++) {
		uint32_t r = seed * 2246822519u;
		size_t n_nodes = 20 + seed * 40, n_pods = 100 + seed * 60, i, k;
		struct snapshot *s;
		int32_t *want, *got;
		uint32_t *order;
		struct errbuf err = {{0}};

#define RND() ref_rand(&r)
		snapshot_free(w->s);
		w->s = NULL;
		buf_free(&w->items);
		w->n_items = 0;
		w->n_groups = 0;
		for (k = 0; k < n_nodes; k++) {
			char name[16], cpu[16], mem[16], labels[64], spec[160] = "";
			unsigned kind = RND() % 100;

			snprintf(name, sizeof(name), "n%03zu", k);
			snprintf(cpu, sizeof(cpu), "%u", 2u << (RND() % 4));
			snprintf(mem, sizeof(mem), "%uGi", 4u << (RND() % 4));
			snprintf(labels, sizeof(labels), "'zone':'%c','tier':'%s'", 'a' + (int)(RND() % 3),
				 RND() % 2 ? "web" : "batch");
			if (kind < 10)
				snprintf(spec, sizeof(spec), "'unschedulable':true");
			else if (kind < 25)
				snprintf(spec, sizeof(spec),
					 "'taints':[{'key':'dedicated','value':'batch','effect':'NoSchedule'}]");
			add_node(w, (struct nodespec){
				.name = name, .cpu = cpu, .mem = mem, .labels = labels,
				.spec = *spec ? spec : NULL,
				.alloc = kind >= 80 ? "'nvidia.com/gpu':'4'" : NULL,
				.pods = kind >= 70 && kind < 75 ? "3" : NULL,
				.not_ready = kind >= 25 && kind < 30,
			});
		}
		for (i = 0; i < n_nodes * 3; i++) { /* bound pods, some overcommitting */
			char name[16], node[16], cpu[16], mem[16];

			snprintf(name, sizeof(name), "b%04zu", i);
			snprintf(node, sizeof(node), "n%03u", (unsigned)(RND() % n_nodes));
			snprintf(cpu, sizeof(cpu), "%um", 100 + (unsigned)(RND() % 3000));
			snprintf(mem, sizeof(mem), "%uMi", 128 + (unsigned)(RND() % 6000));
			add_pod(w, (struct podspec){.name = name, .node = node, .cpu = cpu, .mem = mem});
		}
		for (i = 0; i < n_pods; i++) {
			char name[16], cpu[16], mem[16], ext[64] = "", spec[320] = "", tol[128] = "";
			unsigned kind = RND() % 100;
			bool repeat = RND() % 3 == 0;

			snprintf(name, sizeof(name), "q%04zu", i);
			snprintf(cpu, sizeof(cpu), "%um", repeat ? 250u * (1 + (unsigned)(RND() % 4)) :
				 10 + (unsigned)(RND() % 6000));
			snprintf(mem, sizeof(mem), "%uMi", repeat ? 512u : 32 + (unsigned)(RND() % 12000));
			if (kind < 8)
				snprintf(ext, sizeof(ext), "'nvidia.com/gpu':'%u'", 1 + (unsigned)(RND() % 3));
			else if (kind < 14)
				snprintf(ext, sizeof(ext), "'ephemeral-storage':'%uGi'", 1 + (unsigned)(RND() % 8));
			if (kind >= 20 && kind < 30)
				snprintf(spec, sizeof(spec), "'nodeSelector':{'zone':'%c'}", 'a' + (int)(RND() % 3));
			else if (kind >= 30 && kind < 38)
				snprintf(spec, sizeof(spec),
					 "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
					 "{'nodeSelectorTerms':[{'matchFields':[{'key':'metadata.name','operator':'In',"
					 "'values':['n%03u']}]}]}}}", (unsigned)(RND() % n_nodes));
			else if (kind >= 38 && kind < 46)
				snprintf(spec, sizeof(spec),
					 "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
					 "{'nodeSelectorTerms':[{'matchExpressions':[{'key':'tier','operator':'NotIn',"
					 "'values':['web']}]}]}}}");
			if (kind >= 50 && kind < 70)
				snprintf(tol, sizeof(tol), "{'key':'dedicated','operator':'Exists'}");
			add_pod(w, (struct podspec){
				.name = name,
				.cpu = kind >= 14 && kind < 17 ? NULL : cpu,
				.mem = kind == 17 ? NULL : mem,
				.ext = *ext ? ext : NULL,
				.spec = *spec ? spec : NULL,
				.tol = *tol ? tol : NULL,
			});
		}
#undef RND
		s = build(w);
		assert_int_equal(s->n_pending, n_pods);
		want = malloc(n_pods * sizeof(*want));
		got = malloc(n_pods * sizeof(*got));
		order = malloc(n_pods * sizeof(*order));
		assert_non_null(want);
		assert_non_null(got);
		assert_non_null(order);
		for (k = 0; k < 2; k++) {
			size_t placed = 0, ref_placed = 0;

			for (i = 0; i < n_pods; i++)
				order[i] = s->pending[k ? n_pods - 1 - i : i];
			ref_place(s, order, n_pods, want);
			if (sched_place(s, order, n_pods, got, &placed, &err) < 0)
				fail_msg("sched_place: %s", err.msg);
			for (i = 0; i < n_pods; i++) {
				if (got[i] != want[i])
					fail_msg("seed %u order %zu: pod %s on node %d, the scan puts it on %d",
						 seed, k, s->pods[order[i]].name, got[i], want[i]);
				ref_placed += want[i] >= 0;
			}
			assert_int_equal(placed, ref_placed);
			/* both outcomes occur: the test sees placed and unplaced pods */
			assert_true(placed > 0 && placed < n_pods);
		}
		order[0] = (uint32_t)s->n_pods; /* out of range: an error, nothing placed */
		assert_int_equal(sched_place(s, order, n_pods, got, &k, &err), -1);
		assert_non_null(strstr(err.msg, "out of range"));
		assert_int_equal(k, 0);
		free(want);
		free(got);
		free(order);
	}
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_cpu),
		T(test_pack_matches_reference),
		T(test_place_matches_reference),
		T(test_memory),
		T(test_ephemeral),
		T(test_extended),
		T(test_zero_request_fits_full_node),
		T(test_pods_limit),
		cmocka_unit_test(test_room_fits_order),
		T(test_room_of_node_and_take),
		T(test_room_of_template),
		T(test_node_selector),
		T(test_affinity_operators),
		T(test_affinity_detail),
		T(test_affinity_match_fields),
		T(test_taints),
		T(test_cordoned_and_check_order),
		T(test_fits_labels_direct),
		T(test_toleration_empty_key),
		cmocka_unit_test(test_fit_str),
		T(test_pack_ffd),
		T(test_pack_memory_share),
		T(test_pack_upcoming_first),
		T(test_pack_upcoming_override),
		T(test_pack_unplaceable),
		T(test_pack_max_new),
		T(test_pack_waste),
		T(test_pack_deterministic),
		T(test_pack_pod_slots_and_extended),
		T(test_pack_errors),
		T(test_pack_many_consistent),
		cmocka_unit_test(test_drain_opts_default),
		T(test_drain_ignores_daemonset_mirror_finished),
		T(test_drain_local_storage),
		T(test_drain_unreplicated),
		T(test_drain_safe_to_evict),
		T(test_drain_pdb),
		T(test_drain_protected),
		T(test_drain_kube_system_pdb),
		T(test_drain_no_room),
		T(test_drain_excluded_destination),
		T(test_drain_skips_cordoned_and_not_ready),
		T(test_drain_respects_destination_labels),
		T(test_drain_largest_first),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
