/*
 * Tests for GKE's kube-env (gce_kube_env.c): labels, taints and
 * kube_reserved from AUTOSCALER_ENV_VARS, NODE_LABELS and NODE_TAINTS as
 * GKE writes them (quoted or not), and hostile input refused whole with
 * the bad part named: huge values, missing separators, bad effects,
 * duplicate keys, bad quoting, bad quantities; the metadata item found in
 * an instance template's properties.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "providers/gce/gce_kube_env.h"

static const char *label(const struct gce_kube_env *e, const char *key)
{
	size_t i;

	for (i = 0; i < e->t.n_labels; i++)
		if (!strcmp(e->t.labels[i].key, key))
			return e->t.labels[i].value;
	return NULL;
}

static int parse(const char *text, struct gce_kube_env *e, struct errbuf *err)
{
	return gce_kube_env_parse(text, strlen(text), e, err);
}

static void test_autoscaler_env_vars(void **state)
{
	struct gce_kube_env e;
	struct errbuf err;
	const char *text =
		"ALLOCATE_NODE_CIDRS: \"true\"\n"
		"AUTOSCALER_ENV_VARS: kube_reserved=cpu=1060m,memory=1019Mi,ephemeral-storage=41Gi;"
		"node_labels=cloud.google.com/gke-nodepool=ml-pool,cloud.google.com/gke-os-distribution=cos,team=ml;"
		"node_taints=dedicated=ml:NoSchedule,gpu:NoExecute;os=linux;os_distribution=cos;"
		"evictionHard=memory.available=200Mi,nodefs.available=10%\n"
		"NODE_LABELS: ignored=because-autoscaler-env-vars-is-there\n"
		"KUBELET_ARGS: '--v=2 --node-labels=x=y'\n";

	(void)state;
	if (parse(text, &e, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal((int)e.t.n_labels, 3);
	assert_string_equal(label(&e, "cloud.google.com/gke-nodepool"), "ml-pool");
	assert_string_equal(label(&e, "team"), "ml");
	assert_null(label(&e, "ignored"));
	assert_int_equal((int)e.t.n_taints, 2);
	assert_string_equal(e.t.taints[0].key, "dedicated");
	assert_string_equal(e.t.taints[0].value, "ml");
	assert_string_equal(e.t.taints[0].effect, "NoSchedule");
	assert_string_equal(e.t.taints[1].key, "gpu");
	assert_string_equal(e.t.taints[1].value, "");
	assert_string_equal(e.t.taints[1].effect, "NoExecute");
	assert_true(e.reserved);
	assert_int_equal(e.reserved_cpu_m, 1060);
	assert_int_equal(e.reserved_memory, 1019ll << 20);
	assert_true(e.eviction);
	assert_int_equal(e.eviction_memory, 200ll << 20);
	gce_kube_env_clear(&e);
}

/* Without AUTOSCALER_ENV_VARS: NODE_LABELS and NODE_TAINTS, quoted as YAML allows. */
static void test_node_labels_and_taints(void **state)
{
	struct gce_kube_env e;
	struct errbuf err;

	(void)state;
	if (parse("NODE_LABELS: 'a=b,example.com/c=d'\nNODE_TAINTS: \"k=v:PreferNoSchedule\"\n", &e, &err) < 0)
		fail_msg("%s", err.msg);
	assert_string_equal(label(&e, "a"), "b");
	assert_string_equal(label(&e, "example.com/c"), "d");
	assert_int_equal((int)e.t.n_taints, 1);
	assert_string_equal(e.t.taints[0].effect, "PreferNoSchedule");
	assert_false(e.reserved);
	gce_kube_env_clear(&e);
	/* empty lists and a kube-env that says nothing of nodes */
	assert_int_equal(parse("NODE_LABELS: ''\nNODE_TAINTS:\n", &e, &err), 0);
	assert_int_equal((int)e.t.n_labels + (int)e.t.n_taints, 0);
	assert_int_equal(parse("AUTOSCALER_ENV_VARS: node_labels=;os=linux;\n", &e, &err), 0);
	assert_int_equal((int)e.t.n_labels, 0);
	assert_int_equal(parse("CLUSTER_NAME: c\n", &e, &err), 0);
	assert_int_equal(parse("", &e, &err), 0);
	assert_int_equal((int)e.t.n_labels, 0);
}

static void test_hostile(void **state)
{
	static const struct {
		const char *text;
		const char *want;
	} cases[] = {
		{"NODE_LABELS: a=b,c\n", "NODE_LABELS: \"c\" has no '='"},
		{"NODE_LABELS: a=b,,c=d\n", "NODE_LABELS: item 2 is empty"},
		{"NODE_LABELS: a=b,\n", "item 2 is empty"},
		{"NODE_LABELS: a=b,a=c\n", "label a is given twice"},
		{"NODE_LABELS: 'bad key=x'\n", "label key \"bad key\""},
		{"NODE_LABELS: a=has space\n", "value \"has space\" is not a label value"},
		{"NODE_LABELS: -a=b\n", "label key \"-a\""},
		{"NODE_TAINTS: k=v\n", "has no ':Effect'"},
		{"NODE_TAINTS: k=v:NoWay\n", "effect \"NoWay\" is not NoSchedule"},
		{"NODE_TAINTS: k=v:noschedule\n", "effect \"noschedule\""},
		{"NODE_TAINTS: k=v:NoSchedule,k=w:NoSchedule\n", "taint k:NoSchedule is given twice"},
		{"NODE_TAINTS: =v:NoSchedule\n", "taint key \"\""},
		{"NODE_TAINTS: k=v:NoSchedule,\n", "item 2 is empty"},
		{"AUTOSCALER_ENV_VARS: node_labels=a=b;node_labels=c=d\n", "node_labels is given twice"},
		{"AUTOSCALER_ENV_VARS: node_labels\n", "\"node_labels\" has no '='"},
		{"AUTOSCALER_ENV_VARS: node_taints=k=v:Nope\n", "AUTOSCALER_ENV_VARS node_taints: taint k"},
		{"AUTOSCALER_ENV_VARS: kube_reserved=cpu=lots\n", "kube_reserved: cpu \"lots\" is not a quantity"},
		{"AUTOSCALER_ENV_VARS: kube_reserved=cpu=-1\n", "is not a quantity of 0 or more"},
		{"AUTOSCALER_ENV_VARS: kube_reserved=cpu=1,cpu=2\n", "kube_reserved: cpu is given twice"},
		{"AUTOSCALER_ENV_VARS: kube_reserved=memory\n", "\"memory\" is not resource=quantity"},
		{"AUTOSCALER_ENV_VARS: evictionHard=memory.available=1Zi\n", "memory.available \"1Zi\""},
		{"NODE_LABELS: a=b\nNODE_LABELS: c=d\n", "NODE_LABELS"},         /* a duplicate YAML key */
		{"NODE_LABELS: 'a=b\n", "kube-env"},                              /* an unclosed quote */
		{"NODE_LABELS: [a=b]\n", "NODE_LABELS (line 1) is not a string"},
		{"- a\n- b\n", "not a map"},
		{"just text\n", "not a map"},
		{"NODE_LABELS: &x a=b\nNODE_TAINTS: *x\n", "kube-env"},           /* aliases */
	};
	struct gce_kube_env e;
	struct errbuf err;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err.msg[0] = '\0';
		if (parse(cases[i].text, &e, &err) == 0)
			fail_msg("case %zu accepted: %s", i, cases[i].text);
		if (!strstr(err.msg, cases[i].want))
			fail_msg("case %zu: \"%s\" does not say \"%s\"", i, err.msg, cases[i].want);
		/* never half of it */
		assert_int_equal((int)e.t.n_labels, 0);
		assert_int_equal((int)e.t.n_taints, 0);
		assert_false(e.reserved);
	}
}

/* Huge input: a value past a label's 63, an item past 1 KiB, too many
 * labels, a kube-env past GCE's 256 KiB. */
static void test_huge(void **state)
{
	size_t n = GCE_KUBE_ENV_MAX + 64, i;
	char *big = malloc(n + 1);
	struct gce_kube_env e;
	struct errbuf err;
	int k;

	(void)state;
	assert_non_null(big);
	snprintf(big, n, "NODE_LABELS: a=");
	for (i = strlen(big); i < 100; i++)
		big[i] = 'x';
	big[i++] = '\n';
	big[i] = '\0';
	assert_int_equal(parse(big, &e, &err), -1);
	assert_non_null(strstr(err.msg, "is not a label value"));
	snprintf(big, n, "NODE_LABELS: a=");
	for (i = strlen(big); i < 3000; i++)
		big[i] = 'x';
	big[i++] = '\n';
	big[i] = '\0';
	assert_int_equal(parse(big, &e, &err), -1);
	assert_non_null(strstr(err.msg, "longer than 1023 bytes"));
	snprintf(big, n, "NODE_LABELS: ");
	for (k = 0; k < GCE_KUBE_ENV_MAX_LABELS + 1; k++)
		snprintf(big + strlen(big), n - strlen(big), "%sl%d=v", k ? "," : "", k);
	strcat(big, "\n");
	assert_int_equal(parse(big, &e, &err), -1);
	assert_non_null(strstr(err.msg, "more than 256 labels"));
	memset(big, 'x', n);
	memcpy(big, "K: ", 3);
	big[n] = '\0';
	assert_int_equal(gce_kube_env_parse(big, n, &e, &err), -1);
	assert_non_null(strstr(err.msg, "more than GCE's"));
	/* a NUL inside */
	assert_int_equal(gce_kube_env_parse("NODE_LABELS: a=b\0c", 18, &e, &err), -1);
	assert_non_null(strstr(err.msg, "NUL"));
	free(big);
}

static void test_metadata_item(void **state)
{
	static const struct {
		const char *props;
		int rc;
		const char *text;   /* rc 0: the kube-env found (NULL: none) */
	} cases[] = {
		{"{}", 0, NULL},
		{"{\"metadata\":{}}", 0, NULL},
		{"{\"metadata\":{\"items\":[{\"key\":\"startup-script\",\"value\":\"x\"},{\"key\":\"kube-env\",\"value\":\"A: b\"}]}}", 0, "A: b"},
		{"{\"metadata\":[]}", -1, "metadata is not an object"},
		{"{\"metadata\":{\"items\":{}}}", -1, "items is not a list"},
		{"{\"metadata\":{\"items\":[{\"value\":\"x\"}]}}", -1, "items[0] has no string key"},
		{"{\"metadata\":{\"items\":[{\"key\":\"kube-env\",\"value\":5}]}}", -1, "(kube-env) has no string value"},
		{"{\"metadata\":{\"items\":[{\"key\":\"kube-env\",\"value\":\"a\"},{\"key\":\"kube-env\",\"value\":\"b\"}]}}", -1, "kube-env twice"},
	};
	struct errbuf err;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *p = cJSON_Parse(cases[i].props);
		const char *text = NULL;
		int rc;

		assert_non_null(p);
		rc = gce_kube_env_of(p, &text, &err);
		if (rc != cases[i].rc)
			fail_msg("case %zu: %d", i, rc);
		if (rc == 0 && cases[i].text)
			assert_string_equal(text, cases[i].text);
		else if (rc == 0)
			assert_null(text);
		else if (!strstr(err.msg, cases[i].text))
			fail_msg("case %zu: \"%s\"", i, err.msg);
		cJSON_Delete(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_autoscaler_env_vars),
		cmocka_unit_test(test_node_labels_and_taints),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_huge),
		cmocka_unit_test(test_metadata_item),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
