/*
 * Tests for the kinds the model keeps beside nodes, pods and PDBs:
 * Namespaces, PersistentVolumeClaims, PersistentVolumes, StorageClasses
 * and DaemonSets — their decoding and its messages, the snapshot's
 * *_known flags, the snapshot_add_*() builders and the deep clones.
 * JSON is written with single quotes here and turned into double quotes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "model.h"

#define MI (INT64_C(1024) * 1024)

/* 'text' with every ' turned into ", malloc'ed. */
static char *dq(const char *text)
{
	char *s = strdup(text), *p;

	assert_non_null(s);
	for (p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	return s;
}

/* Decodes one object with snapshot_add_object(); the message stays in 'err'. */
static int add_obj(struct snapshot *s, const char *text, struct errbuf *err)
{
	char *json = dq(text);
	cJSON *obj = cJSON_Parse(json);
	int rc;

	if (!obj)
		fail_msg("test JSON does not parse: %s", json);
	rc = snapshot_add_object(s, obj, NULL, err);
	cJSON_Delete(obj);
	free(json);
	return rc;
}

static void add_ok(struct snapshot *s, const char *text)
{
	struct errbuf err = {{0}};

	if (add_obj(s, text, &err) != 0)
		fail_msg("%s: %s", text, err.msg);
}

static int add_doc(struct snapshot *s, const char *text, struct errbuf *err)
{
	char *json = dq(text);
	int rc = snapshot_add_json(s, json, strlen(json), "state.json", err);

	free(json);
	return rc;
}

static void expect_error(const char *text, const char *message)
{
	struct snapshot *s = snapshot_new();
	struct errbuf err = {{0}};
	char *want = dq(message);

	assert_non_null(s);
	if (add_obj(s, text, &err) != -1)
		fail_msg("accepted: %s", text);
	if (!strstr(err.msg, want))
		fail_msg("%s: message \"%s\", want \"%s\"", text, err.msg, want);
	/* a refused object adds nothing and marks nothing known */
	assert_int_equal(s->n_namespaces + s->n_pvcs + s->n_pvs + s->n_storage_classes +
			 s->n_daemonsets + s->n_pods, 0);
	assert_false(s->volumes_known || s->namespaces_known || s->daemonsets_known);
	free(want);
	snapshot_free(s);
}

static const struct selector_req *expr(const struct node_affinity *a, size_t term,
				       size_t i)
{
	assert_true(term < a->n_terms);
	assert_true(i < a->terms[term].n_exprs);
	return &a->terms[term].exprs[i];
}

/* ---- decoding ---- */

static void test_namespace(void **state)
{
	struct snapshot *s = snapshot_new();

	(void)state;
	add_ok(s, "{'kind':'Namespace','apiVersion':'v1','metadata':{'name':'team-a',"
		  "'labels':{'kubernetes.io/metadata.name':'team-a','tier':'gold'},"
		  "'uid':'u1'},'spec':{'finalizers':['kubernetes']},'status':{'phase':'Active'}}");
	assert_int_equal(s->n_namespaces, 1);
	assert_string_equal(s->namespaces[0].name, "team-a");
	assert_int_equal(s->namespaces[0].labels.n, 2);
	assert_string_equal(kvlist_get(&s->namespaces[0].labels, "tier"), "gold");
	assert_true(s->namespaces_known);
	assert_false(s->volumes_known || s->daemonsets_known);
	snapshot_free(s);

	expect_error("{'kind':'Namespace','metadata':{}}", "Namespace: metadata.name: missing");
	expect_error("{'kind':'Namespace','metadata':{'name':'a','labels':{'x':1}}}",
		     "Namespace a: metadata.labels.x: expected a string, got a number");
}

static void test_pvc(void **state)
{
	struct snapshot *s = snapshot_new();

	(void)state;
	add_ok(s, "{'kind':'PersistentVolumeClaim','metadata':{'namespace':'db','name':'data-0'},"
		  "'spec':{'volumeName':'pv-1','storageClassName':'fast',"
		  "'resources':{'requests':{'storage':'10Gi'}}},'status':{'phase':'Bound'}}");
	/* no class, unbound */
	add_ok(s, "{'kind':'PersistentVolumeClaim','metadata':{'namespace':'db','name':'plain'},"
		  "'spec':{}}");
	/* the legacy annotation names the class when the field is absent... */
	add_ok(s, "{'kind':'PersistentVolumeClaim','metadata':{'namespace':'db','name':'old',"
		  "'annotations':{'volume.beta.kubernetes.io/storage-class':'legacy'}},"
		  "'spec':{'storageClassName':null}}");
	/* ...not when it is set */
	add_ok(s, "{'kind':'PersistentVolumeClaim','metadata':{'namespace':'db','name':'both',"
		  "'annotations':{'volume.beta.kubernetes.io/storage-class':'legacy'}},"
		  "'spec':{'storageClassName':'fast'}}");
	assert_int_equal(s->n_pvcs, 4);
	assert_string_equal(s->pvcs[0].ns, "db");
	assert_string_equal(s->pvcs[0].name, "data-0");
	assert_string_equal(s->pvcs[0].volume_name, "pv-1");
	assert_string_equal(s->pvcs[0].storage_class, "fast");
	assert_string_equal(s->pvcs[1].volume_name, "");
	assert_string_equal(s->pvcs[1].storage_class, "");
	assert_string_equal(s->pvcs[2].storage_class, "legacy");
	assert_string_equal(s->pvcs[3].storage_class, "fast");
	assert_true(s->volumes_known);
	assert_false(s->namespaces_known || s->daemonsets_known);
	snapshot_free(s);

	expect_error("{'kind':'PersistentVolumeClaim','metadata':{'name':'c'}}",
		     "PersistentVolumeClaim: metadata.namespace: missing");
	expect_error("{'kind':'PersistentVolumeClaim','metadata':{'namespace':'db','name':'c'},"
		     "'spec':{'volumeName':7}}",
		     "PersistentVolumeClaim db/c: spec.volumeName: expected a string, got a number");
	expect_error("{'kind':'PersistentVolumeClaim','metadata':{'namespace':'db','name':'c'},"
		     "'spec':{'storageClassName':['a']}}",
		     "PersistentVolumeClaim db/c: spec.storageClassName: expected a string, got an array");
	expect_error("{'kind':'PersistentVolumeClaim','metadata':{'namespace':'db','name':'c',"
		     "'annotations':{'volume.beta.kubernetes.io/storage-class':true}}}",
		     "PersistentVolumeClaim db/c: metadata.annotations."
		     "volume.beta.kubernetes.io/storage-class: expected a string, got a boolean");
}

static void test_pv(void **state)
{
	struct snapshot *s = snapshot_new();
	const struct pv *v;

	(void)state;
	add_ok(s, "{'kind':'PersistentVolume','metadata':{'name':'pv-1',"
		  "'labels':{'topology.kubernetes.io/zone':'eu-1a'}},"
		  "'spec':{'capacity':{'storage':'10Gi'},'nodeAffinity':{'required':{'nodeSelectorTerms':["
		  "{'matchExpressions':[{'key':'topology.kubernetes.io/zone','operator':'In',"
		  "'values':['eu-1a','eu-1b']}]},"
		  "{'matchFields':[{'key':'metadata.name','operator':'In','values':['n1']}]}]}}}}");
	add_ok(s, "{'kind':'PersistentVolume','metadata':{'name':'pv-2'},'spec':{}}");
	assert_int_equal(s->n_pvs, 2);
	v = &s->pvs[0];
	assert_string_equal(v->name, "pv-1");
	assert_string_equal(kvlist_get(&v->labels, "topology.kubernetes.io/zone"), "eu-1a");
	assert_int_equal(v->node_affinity.n_terms, 2);
	assert_string_equal(expr(&v->node_affinity, 0, 0)->key, "topology.kubernetes.io/zone");
	assert_int_equal(expr(&v->node_affinity, 0, 0)->op, SELECTOR_IN);
	assert_int_equal(expr(&v->node_affinity, 0, 0)->n_values, 2);
	assert_string_equal(expr(&v->node_affinity, 0, 0)->values[1], "eu-1b");
	assert_int_equal(v->node_affinity.terms[1].n_fields, 1);
	assert_string_equal(v->node_affinity.terms[1].fields[0].values[0], "n1");
	assert_int_equal(s->pvs[1].node_affinity.n_terms, 0);
	assert_true(s->volumes_known);
	snapshot_free(s);

	expect_error("{'kind':'PersistentVolume','metadata':{'name':'pv-1'},'spec':{'nodeAffinity':"
		     "{'required':{'nodeSelectorTerms':[{'matchExpressions':[{'key':'k','operator':'Near'}]}]}}}}",
		     "PersistentVolume pv-1: spec.nodeAffinity.required.nodeSelectorTerms[0]."
		     "matchExpressions[0].operator: unknown operator 'Near'");
	expect_error("{'kind':'PersistentVolume','metadata':{'name':'pv-1'},'spec':{'nodeAffinity':"
		     "{'required':{'nodeSelectorTerms':{}}}}}",
		     "PersistentVolume pv-1: spec.nodeAffinity.required.nodeSelectorTerms: "
		     "expected an array, got an object");
	expect_error("{'kind':'PersistentVolume','metadata':{'name':'pv-1'},'spec':{'nodeAffinity':[]}}",
		     "PersistentVolume pv-1: spec.nodeAffinity: expected an object, got an array");
}

static void test_storage_class(void **state)
{
	struct snapshot *s = snapshot_new();
	const struct storage_class *c;

	(void)state;
	add_ok(s, "{'kind':'StorageClass','apiVersion':'storage.k8s.io/v1','metadata':{'name':'zonal'},"
		  "'provisioner':'ebs.csi.aws.com','volumeBindingMode':'WaitForFirstConsumer',"
		  "'allowedTopologies':[{'matchLabelExpressions':[{'key':'topology.kubernetes.io/zone',"
		  "'values':['eu-1a','eu-1b']},{'key':'disk','values':['ssd']}]},"
		  "{'matchLabelExpressions':[{'key':'topology.kubernetes.io/zone','values':['eu-1c']}]}]}");
	add_ok(s, "{'kind':'StorageClass','metadata':{'name':'standard'},'volumeBindingMode':'Immediate'}");
	add_ok(s, "{'kind':'StorageClass','metadata':{'name':'default'}}");
	assert_int_equal(s->n_storage_classes, 3);
	c = &s->storage_classes[0];
	assert_string_equal(c->name, "zonal");
	assert_true(c->wait_for_first_consumer);
	/* each term ORed, its expressions ANDed, each "key In values" */
	assert_int_equal(c->allowed_topologies.n_terms, 2);
	assert_int_equal(c->allowed_topologies.terms[0].n_exprs, 2);
	assert_int_equal(c->allowed_topologies.terms[0].n_fields, 0);
	assert_string_equal(expr(&c->allowed_topologies, 0, 0)->key, "topology.kubernetes.io/zone");
	assert_int_equal(expr(&c->allowed_topologies, 0, 0)->op, SELECTOR_IN);
	assert_int_equal(expr(&c->allowed_topologies, 0, 0)->n_values, 2);
	assert_string_equal(expr(&c->allowed_topologies, 0, 0)->values[0], "eu-1a");
	assert_string_equal(expr(&c->allowed_topologies, 0, 1)->key, "disk");
	assert_int_equal(expr(&c->allowed_topologies, 0, 1)->op, SELECTOR_IN);
	assert_string_equal(expr(&c->allowed_topologies, 1, 0)->values[0], "eu-1c");
	assert_false(s->storage_classes[1].wait_for_first_consumer);
	assert_int_equal(s->storage_classes[1].allowed_topologies.n_terms, 0);
	assert_false(s->storage_classes[2].wait_for_first_consumer);
	assert_true(s->volumes_known);
	snapshot_free(s);

	expect_error("{'kind':'StorageClass','metadata':{'name':'x'},'volumeBindingMode':'Later'}",
		     "StorageClass x: volumeBindingMode: unknown mode 'Later' "
		     "(want Immediate or WaitForFirstConsumer)");
	expect_error("{'kind':'StorageClass','metadata':{'name':'x'},'allowedTopologies':{}}",
		     "StorageClass x: allowedTopologies: expected an array, got an object");
	expect_error("{'kind':'StorageClass','metadata':{'name':'x'},'allowedTopologies':"
		     "[{'matchLabelExpressions':[{'key':'z','values':['a',2]}]}]}",
		     "StorageClass x: allowedTopologies[0].matchLabelExpressions[0].values[1]: "
		     "expected a string, got a number");
	expect_error("{'kind':'StorageClass','metadata':{'name':'x'},'allowedTopologies':"
		     "[{},{'matchLabelExpressions':[{'values':['a']}]}]}",
		     "StorageClass x: allowedTopologies[1].matchLabelExpressions[0].key: missing");
}

/* A DaemonSet as the API server serves one, its template asking for
 * resources in containers, an init container and overhead. */
static const char daemonset_json[] =
	"{'kind':'DaemonSet','apiVersion':'apps/v1','metadata':{'namespace':'kube-system',"
	"'name':'node-agent','uid':'ds-uid','labels':{'app':'ds-label'}},"
	"'spec':{'selector':{'matchLabels':{'app':'agent'}},'template':{"
	"'metadata':{'labels':{'app':'agent'},'annotations':{'note':'x'}},"
	"'spec':{'nodeSelector':{'kubernetes.io/os':'linux'},"
	"'priorityClassName':'system-node-critical','priority':2000001000,"
	"'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
	"{'nodeSelectorTerms':[{'matchExpressions':[{'key':'type','operator':'NotIn',"
	"'values':['virtual']}]}]}}},"
	"'tolerations':[{'operator':'Exists'},{'key':'gpu','operator':'Equal','value':'yes',"
	"'effect':'NoSchedule'}],"
	"'initContainers':[{'name':'init','resources':{'requests':{'cpu':'500m'}}}],"
	"'containers':[{'name':'a','resources':{'requests':{'cpu':'100m','memory':'64Mi'}},"
	"'ports':[{'containerPort':9100,'hostPort':9100}]},"
	"{'name':'b','resources':{'limits':{'cpu':'200m','memory':'32Mi'}}}],"
	"'overhead':{'cpu':'10m'}}}},"
	"'status':{'desiredNumberScheduled':3}}";

static void test_daemonset(void **state)
{
	struct snapshot *s = snapshot_new();
	const struct daemonset *ds;
	const struct pod *t;

	(void)state;
	add_ok(s, daemonset_json);
	assert_int_equal(s->n_daemonsets, 1);
	/* the template is not one of the snapshot's pods */
	assert_int_equal(s->n_pods, 0);
	ds = &s->daemonsets[0];
	t = &ds->tmpl;
	assert_string_equal(ds->ns, "kube-system");
	assert_string_equal(ds->name, "node-agent");
	assert_string_equal(t->ns, "kube-system");
	assert_string_equal(t->name, "node-agent");
	/* read as the pod the controller makes */
	assert_string_equal(kvlist_get(&t->labels, "app"), "agent");
	assert_string_equal(kvlist_get(&t->annotations, "note"), "x");
	assert_true(t->flags & POD_DAEMONSET);
	assert_string_equal(t->controller_kind, "DaemonSet");
	assert_string_equal(t->controller_name, "node-agent");
	assert_string_equal(t->node_name, "");
	assert_int_equal(t->phase, POD_PENDING);
	assert_int_equal(t->node, -1);
	assert_int_equal(t->priority, 2000001000);
	/* max(100m + 200m, 500m) + 10m; memory: 64Mi + 32Mi (a limit is a request) */
	assert_int_equal(t->requests.cpu_m, 510);
	assert_int_equal(t->requests.memory, 96 * MI);
	assert_int_equal(t->requests.pods, 1);
	assert_string_equal(kvlist_get(&t->node_selector, "kubernetes.io/os"), "linux");
	assert_int_equal(t->affinity.n_terms, 1);
	assert_int_equal(expr(&t->affinity, 0, 0)->op, SELECTOR_NOT_IN);
	assert_int_equal(t->n_tolerations, 2);
	assert_int_equal(t->tolerations[0].op, TOLERATION_EXISTS);
	assert_string_equal(t->tolerations[1].key, "gpu");
	assert_int_equal(t->tolerations[1].effect, TAINT_NO_SCHEDULE);
	assert_true(s->daemonsets_known);
	assert_false(s->volumes_known || s->namespaces_known);
	snapshot_free(s);

	expect_error("{'kind':'DaemonSet','metadata':{'namespace':'a','name':'d'},'spec':{}}",
		     "DaemonSet a/d: spec.template: missing");
	expect_error("{'kind':'DaemonSet','metadata':{'namespace':'a','name':'d'},'spec':{'template':[]}}",
		     "DaemonSet a/d: spec.template: expected an object, got an array");
	expect_error("{'kind':'DaemonSet','metadata':{'namespace':'a','name':'d'},'spec':{'template':"
		     "{'spec':{'containers':[{},{'resources':{'requests':{'cpu':'abc'}}}]}}}}",
		     "DaemonSet a/d: spec.template.spec.containers[1].resources.requests.cpu: "
		     "invalid quantity 'abc'");
	expect_error("{'kind':'DaemonSet','metadata':{'namespace':'a','name':'d'},'spec':{'template':"
		     "{'spec':{'tolerations':[{'operator':'Maybe'}]}}}}",
		     "DaemonSet a/d: spec.template.spec.tolerations[0].operator: unknown operator 'Maybe'");
	expect_error("{'kind':'DaemonSet','metadata':{'namespace':'a','name':'d'},'spec':{'template':"
		     "{'metadata':{'labels':{'x':5}}}}}",
		     "DaemonSet a/d: spec.template.metadata.labels.x: expected a string, got a number");
	expect_error("{'kind':'DaemonSet','metadata':{'namespace':'a','name':'d'},'spec':{'template':"
		     "{'spec':'none'}}}",
		     "DaemonSet a/d: spec.template.spec: expected an object, got a string");
}

/* ---- the *_known flags ---- */

static void test_known_flags(void **state)
{
	struct snapshot *s;
	struct errbuf err = {{0}};

	(void)state;
	/* nodes and pods only: nothing else is known */
	s = snapshot_new();
	assert_int_equal(add_doc(s, "{'kind':'List','items':[{'kind':'Node','metadata':{'name':'n1'}},"
				    "{'kind':'Pod','metadata':{'namespace':'a','name':'p'}}]}", &err), 0);
	assert_false(s->volumes_known || s->namespaces_known || s->daemonsets_known);
	snapshot_free(s);

	/* one of each kind in a v1 List */
	s = snapshot_new();
	assert_int_equal(add_doc(s, "{'apiVersion':'v1','kind':'List','items':["
				    "{'kind':'Namespace','metadata':{'name':'a'}},"
				    "{'kind':'PersistentVolume','metadata':{'name':'v'}},"
				    "{'kind':'DaemonSet','metadata':{'namespace':'a','name':'d'},"
				    "'spec':{'template':{}}}]}", &err), 0);
	assert_true(s->volumes_known && s->namespaces_known && s->daemonsets_known);
	assert_int_equal(s->n_namespaces + s->n_pvs + s->n_daemonsets, 3);
	snapshot_free(s);

	/* a typed List counts even without items */
	s = snapshot_new();
	assert_int_equal(add_doc(s, "{'kind':'PersistentVolumeClaimList','apiVersion':'v1',"
				    "'metadata':{'resourceVersion':'1'},'items':[]}", &err), 0);
	assert_true(s->volumes_known);
	assert_false(s->namespaces_known || s->daemonsets_known);
	assert_int_equal(add_doc(s, "{'kind':'NamespaceList','items':null}", &err), 0);
	assert_true(s->namespaces_known);
	assert_int_equal(add_doc(s, "{'kind':'DaemonSetList'}", &err), 0);
	assert_true(s->daemonsets_known);
	snapshot_free(s);

	/* an empty v1 List or a List of other kinds says nothing */
	s = snapshot_new();
	assert_int_equal(add_doc(s, "{'kind':'List','items':[]}", &err), 0);
	assert_int_equal(add_doc(s, "{'kind':'ServiceList','items':[]}", &err), 0);
	assert_false(s->volumes_known || s->namespaces_known || s->daemonsets_known);
	snapshot_free(s);

	/* a typed List's items take its kind, even when it comes last */
	s = snapshot_new();
	assert_int_equal(add_doc(s, "{'items':[{'metadata':{'name':'fast'},"
				    "'volumeBindingMode':'WaitForFirstConsumer'}],'kind':'StorageClassList'}",
				 &err), 0);
	assert_int_equal(s->n_storage_classes, 1);
	assert_true(s->storage_classes[0].wait_for_first_consumer);
	assert_true(s->volumes_known);
	snapshot_free(s);

	/* an item error names the item and its object */
	s = snapshot_new();
	assert_int_equal(add_doc(s, "{'kind':'List','items':[{'kind':'Namespace','metadata':{'name':'a'}},"
				    "{'kind':'PersistentVolumeClaim','metadata':{'namespace':'a','name':'c'},"
				    "'spec':{'volumeName':1}}]}", &err), -1);
	assert_non_null(strstr(err.msg, "state.json: items[1] (PersistentVolumeClaim a/c): "
					"spec.volumeName: expected a string"));
	snapshot_free(s);
}

static void test_known_flags_from_file(void **state)
{
	char path[] = "/tmp/test_model_kinds_XXXXXX";
	char *json = dq("{'kind':'DaemonSetList','apiVersion':'apps/v1','items':[]}");
	struct snapshot *s = snapshot_new();
	struct errbuf err = {{0}};
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
	close(fd);
	if (snapshot_load_file(s, path, &err) != 0)
		fail_msg("%s", err.msg);
	assert_true(s->daemonsets_known);
	assert_false(s->volumes_known || s->namespaces_known);
	unlink(path);
	free(json);
	snapshot_free(s);
}

/* ---- building without JSON ---- */

static void test_add_without_json(void **state)
{
	struct snapshot *s = snapshot_new();
	struct errbuf err = {{0}};
	struct kv label = {"tier", "gold"};
	struct namespace_obj ns = {.name = "a", .labels = {&label, 1}};
	struct pvc c = {.ns = "a", .name = "c", .volume_name = "", .storage_class = "fast"};
	struct pv v = {.name = "v"};
	struct storage_class sc = {.name = "fast", .wait_for_first_consumer = true};
	struct daemonset ds = {.ns = "a", .name = "d"};
	size_t i;

	(void)state;
	ds.tmpl.ns = "a";
	ds.tmpl.name = "d";
	ds.tmpl.node = 7;
	for (i = 0; i < 100; i++) { /* past the first growth */
		assert_int_equal(snapshot_add_namespace(s, &ns, &err), 0);
		assert_int_equal(snapshot_add_pvc(s, &c, &err), 0);
		assert_int_equal(snapshot_add_pv(s, &v, &err), 0);
		assert_int_equal(snapshot_add_storage_class(s, &sc, &err), 0);
		assert_int_equal(snapshot_add_daemonset(s, &ds, &err), 0);
	}
	assert_int_equal(s->n_namespaces, 100);
	assert_int_equal(s->n_daemonsets, 100);
	/* borrowed, not copied */
	assert_ptr_equal(s->namespaces[99].labels.items, &label);
	assert_ptr_equal(s->pvcs[50].storage_class, c.storage_class);
	assert_int_equal(s->daemonsets[3].tmpl.node, -1);
	assert_true(s->storage_classes[9].wait_for_first_consumer);
	/* the builder says what is known */
	assert_false(s->volumes_known || s->namespaces_known || s->daemonsets_known);
	assert_int_equal(snapshot_finish(s, 1714557600, &err), 0);
	assert_int_equal(snapshot_add_pvc(s, &c, &err), -1);
	assert_non_null(strstr(err.msg, "finished"));
	assert_int_equal(s->n_pvcs, 100);
	snapshot_free(s);
}

/* ---- deep clones ---- */

static void test_clones(void **state)
{
	struct snapshot *s = snapshot_new();
	struct namespace_obj *ns;
	struct pvc *c;
	struct pv *v;
	struct storage_class *sc;
	struct daemonset *ds;

	(void)state;
	add_ok(s, "{'kind':'Namespace','metadata':{'name':'team-a','labels':{'tier':'gold'}}}");
	add_ok(s, "{'kind':'PersistentVolumeClaim','metadata':{'namespace':'db','name':'data-0'},"
		  "'spec':{'volumeName':'pv-1','storageClassName':'fast'}}");
	add_ok(s, "{'kind':'PersistentVolume','metadata':{'name':'pv-1','labels':{'zone':'z1'}},"
		  "'spec':{'nodeAffinity':{'required':{'nodeSelectorTerms':["
		  "{'matchExpressions':[{'key':'zone','operator':'In','values':['z1','z2']}],"
		  "'matchFields':[{'key':'metadata.name','operator':'NotIn','values':['n9']}]}]}}}}");
	add_ok(s, "{'kind':'StorageClass','metadata':{'name':'fast'},'volumeBindingMode':"
		  "'WaitForFirstConsumer','allowedTopologies':[{'matchLabelExpressions':"
		  "[{'key':'zone','values':['z1']}]},{'matchLabelExpressions':[{'key':'zone',"
		  "'values':['z3']}]}]}");
	add_ok(s, daemonset_json);
	s->daemonsets[0].tmpl.node = 4;

	ns = namespace_clone(&s->namespaces[0]);
	c = pvc_clone(&s->pvcs[0]);
	v = pv_clone(&s->pvs[0]);
	sc = storage_class_clone(&s->storage_classes[0]);
	ds = daemonset_clone(&s->daemonsets[0]);
	assert_non_null(ns);
	assert_non_null(c);
	assert_non_null(v);
	assert_non_null(sc);
	assert_non_null(ds);
	/* the clones own everything: the snapshot's arena is gone (ASan sees a
	 * borrowed pointer) */
	snapshot_free(s);

	assert_string_equal(ns->name, "team-a");
	assert_string_equal(kvlist_get(&ns->labels, "tier"), "gold");
	assert_string_equal(c->ns, "db");
	assert_string_equal(c->name, "data-0");
	assert_string_equal(c->volume_name, "pv-1");
	assert_string_equal(c->storage_class, "fast");
	assert_string_equal(v->name, "pv-1");
	assert_string_equal(kvlist_get(&v->labels, "zone"), "z1");
	assert_int_equal(v->node_affinity.n_terms, 1);
	assert_string_equal(expr(&v->node_affinity, 0, 0)->values[1], "z2");
	assert_int_equal(v->node_affinity.terms[0].fields[0].op, SELECTOR_NOT_IN);
	assert_string_equal(v->node_affinity.terms[0].fields[0].values[0], "n9");
	assert_string_equal(sc->name, "fast");
	assert_true(sc->wait_for_first_consumer);
	assert_int_equal(sc->allowed_topologies.n_terms, 2);
	assert_string_equal(expr(&sc->allowed_topologies, 1, 0)->values[0], "z3");
	assert_string_equal(ds->ns, "kube-system");
	assert_string_equal(ds->name, "node-agent");
	assert_string_equal(ds->tmpl.name, "node-agent");
	assert_string_equal(kvlist_get(&ds->tmpl.labels, "app"), "agent");
	assert_int_equal(ds->tmpl.requests.cpu_m, 510);
	assert_int_equal(ds->tmpl.n_tolerations, 2);
	assert_string_equal(ds->tmpl.tolerations[1].value, "yes");
	assert_string_equal(expr(&ds->tmpl.affinity, 0, 0)->values[0], "virtual");
	assert_string_equal(kvlist_get(&ds->tmpl.node_selector, "kubernetes.io/os"), "linux");
	assert_int_equal(ds->tmpl.node, -1);
	free(ns);
	free(c);
	free(v);
	free(sc);
	free(ds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_namespace),
		cmocka_unit_test(test_pvc),
		cmocka_unit_test(test_pv),
		cmocka_unit_test(test_storage_class),
		cmocka_unit_test(test_daemonset),
		cmocka_unit_test(test_known_flags),
		cmocka_unit_test(test_known_flags_from_file),
		cmocka_unit_test(test_add_without_json),
		cmocka_unit_test(test_clones),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
