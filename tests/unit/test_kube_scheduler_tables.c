/*
 * The kube-scheduler's Filter-plugin test tables, transcribed as data in
 * tests/data/kube-scheduler/<plugin>.json (see the README there), run
 * against sched_fits_node(): each case's objects and incoming pod become one
 * snapshot, and every node the case names must give the fit code it wants.
 * It owns no scheduling logic of its own; a malformed file or case fails.
 *
 * Usage: test_kube_scheduler_tables FILE.json
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "errbuf.h"
#include "model.h"
#include "sched.h"

#define NOW 1714557600 /* 2024-05-01T10:00:00Z */

/* The codes of the table format, one per enum sched_fit. */
static const struct {
	const char *name;
	enum sched_fit fit;
} codes[] = {
	{"fits", SCHED_FITS},
	{"cpu", SCHED_NO_CPU},
	{"memory", SCHED_NO_MEMORY},
	{"ephemeral", SCHED_NO_EPHEMERAL},
	{"pods", SCHED_NO_PODS},
	{"extended", SCHED_NO_EXTENDED},
	{"node-selector", SCHED_NODE_SELECTOR},
	{"node-affinity", SCHED_NODE_AFFINITY},
	{"taint", SCHED_TAINT},
	{"unschedulable", SCHED_UNSCHEDULABLE},
	{"host-ports", SCHED_HOST_PORTS},
	{"pod-affinity", SCHED_POD_AFFINITY},
	{"pod-anti-affinity", SCHED_POD_ANTI_AFFINITY},
	{"existing-anti-affinity", SCHED_EXISTING_ANTI_AFFINITY},
	{"topology-spread", SCHED_TOPOLOGY_SPREAD},
	{"volume-zone", SCHED_VOLUME_ZONE},
	{"volume-missing", SCHED_VOLUME_MISSING},
	{"not-modelled", SCHED_NOT_MODELLED},
};

struct tally {
	const char *plugin;
	size_t cases, checks, failed, skipped;
};

static bool code_of(const char *name, enum sched_fit *out)
{
	size_t i;

	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		if (strcmp(codes[i].name, name) == 0) {
			*out = codes[i].fit;
			return true;
		}
	}
	return false;
}

static const char *name_of(enum sched_fit f)
{
	size_t i;

	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (codes[i].fit == f)
			return codes[i].name;
	return "unknown";
}

__attribute__((format(printf, 3, 4)))
static void fail(struct tally *t, const char *case_name, const char *fmt, ...)
{
	va_list ap;

	printf("FAIL %s %s ", t->plugin, case_name ? case_name : "(file)");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	t->failed++;
}

/* Reads a whole file into a NUL-terminated heap buffer (free()), or NULL. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, got;

	if (!f)
		return NULL;
	do {
		if (cap - n < 65536) {
			char *nb = realloc(buf, cap + 65536 + 1);

			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
			cap += 65536;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got > 0);
	if (ferror(f)) {
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* A string member, or NULL when absent or not a string. */
static const char *str_member(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/*
 * The shape of one case: known members only, the right types, codes from
 * the list. Returns NULL when well formed, else what is wrong (static).
 */
static const char *case_malformed(const cJSON *c)
{
	static char why[160];
	static const char *const members[] = {"name", "note", "skip", "pod", "objects", "want"};
	const cJSON *m, *pod, *objects, *want, *meta;
	enum sched_fit fit;
	size_t i;

	if (!cJSON_IsObject(c))
		return "a case must be an object";
	cJSON_ArrayForEach(m, c) {
		for (i = 0; i < sizeof(members) / sizeof(members[0]); i++)
			if (strcmp(m->string, members[i]) == 0)
				break;
		if (i == sizeof(members) / sizeof(members[0])) {
			snprintf(why, sizeof(why), "unknown member \"%.64s\"", m->string);
			return why;
		}
	}
	if (!str_member(c, "name") || !*str_member(c, "name"))
		return "\"name\" must be a non-empty string";
	if (cJSON_GetObjectItemCaseSensitive(c, "note") && !str_member(c, "note"))
		return "\"note\" must be a string";
	if (cJSON_GetObjectItemCaseSensitive(c, "skip") &&
	    (!str_member(c, "skip") || !*str_member(c, "skip")))
		return "\"skip\" must be a non-empty string (the reason)";
	pod = cJSON_GetObjectItemCaseSensitive(c, "pod");
	objects = cJSON_GetObjectItemCaseSensitive(c, "objects");
	want = cJSON_GetObjectItemCaseSensitive(c, "want");
	if (!cJSON_IsObject(pod) || !str_member(pod, "kind") ||
	    strcmp(str_member(pod, "kind"), "Pod") != 0)
		return "\"pod\" must be a Pod object";
	meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
	if (!cJSON_IsObject(meta) || !str_member(meta, "name") || !str_member(meta, "namespace"))
		return "\"pod\" needs metadata.name and metadata.namespace";
	if (cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pod, "spec"),
					     "nodeName"))
		return "\"pod\" must be unbound (no spec.nodeName)";
	if (!cJSON_IsArray(objects))
		return "\"objects\" must be an array";
	cJSON_ArrayForEach(m, objects)
		if (!cJSON_IsObject(m) || !str_member(m, "kind"))
			return "every item of \"objects\" must be an object with a kind";
	if (!cJSON_IsObject(want) || !want->child)
		return "\"want\" must be a non-empty object";
	cJSON_ArrayForEach(m, want) {
		if (!cJSON_IsString(m) || !code_of(m->valuestring, &fit)) {
			snprintf(why, sizeof(why), "want[\"%.64s\"] is not a known code", m->string);
			return why;
		}
	}
	return NULL;
}

/* The incoming pod's index in the snapshot, or -1. */
static long find_pod(const struct snapshot *s, const char *ns, const char *name)
{
	size_t i;

	for (i = 0; i < s->n_pods; i++)
		if (strcmp(s->pods[i].ns, ns) == 0 && strcmp(s->pods[i].name, name) == 0)
			return (long)i;
	return -1;
}

/* Builds the case's snapshot and checks every wanted node. */
static void run_case(struct tally *t, const cJSON *c)
{
	const char *name = str_member(c, "name");
	const cJSON *pod = cJSON_GetObjectItemCaseSensitive(c, "pod");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
	const cJSON *want = cJSON_GetObjectItemCaseSensitive(c, "want");
	const cJSON *o, *w;
	cJSON *list = NULL, *items;
	struct snapshot *s = NULL;
	struct errbuf err = {{0}};
	char *json = NULL;
	long p;

	list = cJSON_CreateObject();
	if (!list || !cJSON_AddStringToObject(list, "kind", "List") ||
	    !cJSON_AddStringToObject(list, "apiVersion", "v1") ||
	    !(items = cJSON_AddArrayToObject(list, "items")))
		goto oom;
	cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(c, "objects"))
		if (!cJSON_AddItemToArray(items, cJSON_Duplicate(o, true)))
			goto oom;
	if (!cJSON_AddItemToArray(items, cJSON_Duplicate(pod, true)))
		goto oom;
	if (!(json = cJSON_PrintUnformatted(list)) || !(s = snapshot_new()))
		goto oom;
	if (snapshot_add_json(s, json, strlen(json), name, &err) < 0) {
		fail(t, name, "snapshot_add_json: %s", err.msg);
		goto out;
	}
	if (snapshot_finish(s, NOW, &err) < 0) {
		fail(t, name, "snapshot_finish: %s", err.msg);
		goto out;
	}
	p = find_pod(s, str_member(meta, "namespace"), str_member(meta, "name"));
	if (p < 0) {
		fail(t, name, "the incoming pod is not in the snapshot");
		goto out;
	}
	cJSON_ArrayForEach(w, want) {
		char detail[256] = "";
		enum sched_fit expect = SCHED_FITS, got;
		int32_t n = snapshot_find_node(s, w->string);

		t->checks++;
		if (n < 0) {
			fail(t, name, "node %s: not in the snapshot", w->string);
			continue;
		}
		(void)code_of(w->valuestring, &expect);
		got = sched_fits_node(s, &s->pods[p], (size_t)n, detail, sizeof(detail));
		if (got != expect)
			fail(t, name, "node %s: want %s, got %s (%s)", w->string,
			     w->valuestring, name_of(got), detail);
	}
	goto out;
oom:
	fail(t, name, "out of memory");
out:
	snapshot_free(s);
	cJSON_free(json);
	cJSON_Delete(list);
}

int main(int argc, char **argv)
{
	struct tally t = {0};
	const cJSON *cases, *c;
	cJSON *doc = NULL;
	char *text = NULL;
	size_t len = 0;
	int rc = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: %s FILE.json (a table of tests/data/kube-scheduler)\n",
			argv[0]);
		return 2;
	}
	t.plugin = argv[1];
	if (!(text = slurp(argv[1], &len))) {
		fail(&t, NULL, "cannot read %s", argv[1]);
		goto out;
	}
	if (!(doc = cJSON_ParseWithLength(text, len))) {
		fail(&t, NULL, "%s is not JSON (near byte %ld)", argv[1],
		     cJSON_GetErrorPtr() ? (long)(cJSON_GetErrorPtr() - text) : -1L);
		goto out;
	}
	t.plugin = str_member(doc, "plugin");
	cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
	if (!t.plugin || !*t.plugin || !str_member(doc, "source") || !cJSON_IsArray(cases) ||
	    !cases->child) {
		t.plugin = argv[1];
		fail(&t, NULL, "needs \"plugin\", \"source\" and a non-empty \"cases\" array");
		goto out;
	}
	cJSON_ArrayForEach(c, cases) {
		const char *why = case_malformed(c);

		t.cases++;
		if (why) {
			fail(&t, cJSON_IsObject(c) ? str_member(c, "name") : NULL,
			     "malformed case (#%zu): %s", t.cases, why);
			continue;
		}
		if (str_member(c, "skip")) {
			t.skipped++;
			continue;
		}
		run_case(&t, c);
	}
	rc = t.failed ? 1 : 0;
out:
	printf("%zu cases, %zu checks, %zu failed, %zu skipped\n", t.cases, t.checks, t.failed,
	       t.skipped);
	cJSON_Delete(doc);
	free(text);
	return t.failed ? 1 : rc;
}
