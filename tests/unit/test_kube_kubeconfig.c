/*
 * Tests for kubeconfig: every auth form of a kubeconfig, relative paths,
 * several files, the rule that a context must be named (never
 * current-context), errors with file:line:col that never quote a secret,
 * base64, and the in-cluster environment with injected files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube/kubeconfig.h"

/* base64 of "-----BEGIN CERTIFICATE-----\nCA\n" etc. are not needed: any bytes do */
#define B64_CA "Q0EtUEVN"        /* "CA-PEM" */
#define B64_CERT "Q0VSVC1QRU0="  /* "CERT-PEM" */
#define B64_KEY "S0VZLVBFTQ=="   /* "KEY-PEM" */

static const char full[] =
	"apiVersion: v1\n"
	"kind: Config\n"
	"current-context: prod\n"
	"clusters:\n"
	"- name: prod-cluster\n"
	"  cluster:\n"
	"    server: https://prod.example:6443/\n"
	"    certificate-authority-data: " B64_CA "\n"
	"- name: dev-cluster\n"
	"  cluster:\n"
	"    server: https://dev.example:6443\n"
	"    certificate-authority: certs/ca.crt\n"
	"- name: lab-cluster\n"
	"  cluster:\n"
	"    server: https://lab.example\n"
	"    insecure-skip-tls-verify: true\n"
	"users:\n"
	"- name: token-user\n"
	"  user:\n"
	"    token: s3cr3t-t0ken\n"
	"- name: cert-user\n"
	"  user:\n"
	"    client-certificate-data: " B64_CERT "\n"
	"    client-key-data: " B64_KEY "\n"
	"- name: file-user\n"
	"  user:\n"
	"    client-certificate: /abs/cert.pem\n"
	"    client-key: rel/key.pem\n"
	"    tokenFile: tok\n"
	"- name: exec-user\n"
	"  user:\n"
	"    exec:\n"
	"      apiVersion: client.authentication.k8s.io/v1\n"
	"      command: ./bin/get-token\n"
	"      args: [--cluster, prod]\n"
	"      env:\n"
	"      - name: FOO\n"
	"        value: bar\n"
	"      interactiveMode: Never\n"
	"      provideClusterInfo: true\n"
	"- name: beta-user\n"
	"  user:\n"
	"    exec:\n"
	"      apiVersion: client.authentication.k8s.io/v1beta1\n"
	"      command: aws\n"
	"contexts:\n"
	"- name: prod\n"
	"  context: {cluster: prod-cluster, user: token-user, namespace: hub}\n"
	"- name: prod-cert\n"
	"  context: {cluster: prod-cluster, user: cert-user}\n"
	"- name: dev\n"
	"  context: {cluster: dev-cluster, user: file-user}\n"
	"- name: lab\n"
	"  context: {cluster: lab-cluster, user: exec-user}\n"
	"- name: beta\n"
	"  context: {cluster: lab-cluster, user: beta-user}\n"
	"- name: anon\n"
	"  context: {cluster: lab-cluster}\n";

static struct kube_config *parse_ok(const char *text, const char *ctx)
{
	struct kube_config *c = NULL;
	struct errbuf err = {""};
	int rc = kubeconfig_parse(text, strlen(text), "kc.yaml", "/home/u/.kube", ctx, &c, &err);

	if (rc != 0)
		fail_msg("unexpected error: %s", err.msg);
	assert_non_null(c);
	return c;
}

static void parse_err(const char *text, const char *ctx, struct errbuf *err)
{
	struct kube_config *c = (struct kube_config *)1;

	assert_int_equal(kubeconfig_parse(text, strlen(text), "kc.yaml", "/d", ctx, &c, err), -1);
	assert_null(c);
}

static void test_token_context(void **state)
{
	struct kube_config *c = parse_ok(full, "prod");

	(void)state;
	assert_string_equal(c->context, "prod");
	assert_string_equal(c->cluster_name, "prod-cluster");
	assert_string_equal(c->user_name, "token-user");
	assert_string_equal(c->namespace, "hub");
	assert_string_equal(c->server, "https://prod.example:6443"); /* trailing / cut */
	assert_int_equal(c->ca_len, 6);
	assert_memory_equal(c->ca_data, "CA-PEM", 6);
	assert_null(c->ca_file);
	assert_false(c->insecure_skip_tls_verify);
	assert_string_equal(c->token, "s3cr3t-t0ken");
	assert_null(c->token_file);
	assert_null(c->exec);
	assert_null(c->cert_data);
	kube_config_free(c);
}

static void test_cert_data_context(void **state)
{
	struct kube_config *c = parse_ok(full, "prod-cert");

	(void)state;
	assert_int_equal(c->cert_len, 8);
	assert_memory_equal(c->cert_data, "CERT-PEM", 8);
	assert_int_equal(c->key_len, 7);
	assert_memory_equal(c->key_data, "KEY-PEM", 7);
	assert_null(c->token);
	assert_null(c->namespace);
	kube_config_free(c);
}

static void test_files_relative_to_kubeconfig(void **state)
{
	struct kube_config *c = parse_ok(full, "dev");

	(void)state;
	assert_string_equal(c->ca_file, "/home/u/.kube/certs/ca.crt");
	assert_null(c->ca_data);
	assert_string_equal(c->cert_file, "/abs/cert.pem");
	assert_string_equal(c->key_file, "/home/u/.kube/rel/key.pem");
	assert_string_equal(c->token_file, "/home/u/.kube/tok");
	assert_null(c->token);
	kube_config_free(c);
}

static void test_exec_v1(void **state)
{
	struct kube_config *c = parse_ok(full, "lab");
	const struct kube_exec *x = c->exec;

	(void)state;
	assert_true(c->insecure_skip_tls_verify);
	assert_string_equal(c->server, "https://lab.example");
	assert_non_null(x);
	assert_string_equal(x->command, "/home/u/.kube/./bin/get-token");
	assert_int_equal(x->n_args, 2);
	assert_string_equal(x->args[0], "--cluster");
	assert_string_equal(x->args[1], "prod");
	assert_int_equal(x->n_env, 1);
	assert_string_equal(x->env_names[0], "FOO");
	assert_string_equal(x->env_values[0], "bar");
	assert_string_equal(x->api_version, "client.authentication.k8s.io/v1");
	assert_int_equal(x->interactive, KUBE_EXEC_NEVER);
	assert_true(x->provide_cluster_info);
	kube_config_free(c);
}

static void test_exec_v1beta1_defaults(void **state)
{
	struct kube_config *c = parse_ok(full, "beta");

	(void)state;
	assert_non_null(c->exec);
	assert_string_equal(c->exec->command, "aws"); /* looked up in PATH, not made relative */
	assert_int_equal(c->exec->interactive, KUBE_EXEC_IF_AVAILABLE);
	assert_int_equal(c->exec->n_args, 0);
	assert_false(c->exec->provide_cluster_info);
	kube_config_free(c);
}

static void test_anonymous_user(void **state)
{
	struct kube_config *c = parse_ok(full, "anon");

	(void)state;
	assert_null(c->user_name);
	assert_null(c->token);
	assert_null(c->exec);
	kube_config_free(c);
}

static void test_no_context_named(void **state)
{
	struct errbuf err = {""};

	(void)state;
	/* current-context: prod is set, and still not used */
	parse_err(full, NULL, &err);
	assert_non_null(strstr(err.msg, "current-context"));
	assert_non_null(strstr(err.msg, "\"prod\""));
	assert_non_null(strstr(err.msg, "contexts: prod, prod-cert, dev, lab, beta, anon"));
	parse_err(full, "", &err);
	assert_non_null(strstr(err.msg, "never uses current-context"));
}

static void test_unknown_context(void **state)
{
	struct errbuf err = {""};

	(void)state;
	parse_err(full, "staging", &err);
	assert_non_null(strstr(err.msg, "no context \"staging\""));
	assert_non_null(strstr(err.msg, "prod, prod-cert, dev"));
}

static void test_errors_name_line_col(void **state)
{
	struct errbuf err = {""};

	(void)state;
	/* a server that is not a string */
	parse_err("clusters:\n- name: c\n  cluster:\n    server: [a, b]\n"
		  "contexts:\n- name: x\n  context: {cluster: c}\n", "x", &err);
	assert_string_equal(err.msg,
			    "kc.yaml:4:13: clusters[\"c\"].cluster.server: expected a string, found a list");
	/* a context naming a cluster that does not exist */
	parse_err("clusters: []\ncontexts:\n- name: x\n  context:\n    cluster: nope\n", "x", &err);
	assert_non_null(strstr(err.msg, "kc.yaml:5:14: "));
	assert_non_null(strstr(err.msg, "no cluster \"nope\""));
	/* a user naming nothing */
	parse_err("clusters:\n- name: c\n  cluster: {server: 'https://h'}\n"
		  "contexts:\n- name: x\n  context:\n    cluster: c\n    user: ghost\n", "x", &err);
	assert_non_null(strstr(err.msg, "kc.yaml:8:11: "));
	assert_non_null(strstr(err.msg, "no user \"ghost\""));
	/* YAML syntax errors come with a position too */
	parse_err("clusters: [\n", "x", &err);
	assert_non_null(strstr(err.msg, "kc.yaml:"));
	/* lists that are not lists */
	parse_err("contexts: {a: b}\n", "x", &err);
	assert_string_equal(err.msg, "kc.yaml:1:11: contexts: expected a list, found a mapping");
	/* server not a URL */
	parse_err("clusters:\n- name: c\n  cluster: {server: 'h:6443'}\n"
		  "contexts:\n- name: x\n  context: {cluster: c}\n", "x", &err);
	assert_non_null(strstr(err.msg, "kc.yaml:3:21: "));
	assert_non_null(strstr(err.msg, "http:// or https://"));
	/* duplicate context names are refused (which one would act?) */
	parse_err("contexts:\n- name: x\n  context: {cluster: c}\n- name: x\n  context: {cluster: c}\n",
		  "x", &err);
	assert_non_null(strstr(err.msg, "kc.yaml:4:9: "));
	assert_non_null(strstr(err.msg, "second entry named \"x\""));
}

#define HEAD \
	"clusters:\n- name: c\n  cluster: {server: 'https://h'}\n" \
	"contexts:\n- name: x\n  context: {cluster: c, user: u}\n" \
	"users:\n- name: u\n  user:\n"

static void test_auth_rules(void **state)
{
	struct errbuf err = {""};

	(void)state;
	parse_err(HEAD "    exec:\n      command: x\n      apiVersion: client.authentication.k8s.io/v1\n",
		  "x", &err);
	assert_non_null(strstr(err.msg, "kc.yaml:11:7: "));
	assert_non_null(strstr(err.msg, "interactiveMode is required"));
	parse_err(HEAD "    exec:\n      command: x\n      apiVersion: client.authentication.k8s.io/v1alpha1\n",
		  "x", &err);
	assert_non_null(strstr(err.msg, "kc.yaml:12:19: "));
	assert_non_null(strstr(err.msg, "not supported"));
	parse_err(HEAD "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n", "x", &err);
	assert_non_null(strstr(err.msg, "needs a command"));
	parse_err(HEAD "    exec:\n      command: x\n      apiVersion: client.authentication.k8s.io/v1\n"
		       "      interactiveMode: Sometimes\n", "x", &err);
	assert_non_null(strstr(err.msg, "kc.yaml:13:24: "));
	parse_err(HEAD "    token: abcdefgh\n    exec:\n      command: x\n"
		       "      apiVersion: client.authentication.k8s.io/v1beta1\n", "x", &err);
	assert_non_null(strstr(err.msg, "exec and token"));
	assert_null(strstr(err.msg, "abcdefgh"));
	parse_err(HEAD "    client-certificate: a.pem\n", "x", &err);
	assert_non_null(strstr(err.msg, "needs its key"));
	parse_err(HEAD "    client-key-data: " B64_KEY "\n    client-key: k.pem\n", "x", &err);
	assert_non_null(strstr(err.msg, "both set"));
	parse_err(HEAD "    auth-provider: {name: gcp}\n", "x", &err);
	assert_non_null(strstr(err.msg, "kc.yaml:10:20: "));
	assert_non_null(strstr(err.msg, "exec credential plugin"));
	parse_err(HEAD "    exec:\n      command: x\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
		       "      env:\n      - name: A\n", "x", &err);
	assert_non_null(strstr(err.msg, "needs a value"));
	/* a CA twice, and a CA with insecure */
	parse_err("clusters:\n- name: c\n  cluster:\n    server: https://h\n"
		  "    certificate-authority: ca.crt\n    certificate-authority-data: " B64_CA "\n"
		  "contexts:\n- name: x\n  context: {cluster: c}\n", "x", &err);
	assert_non_null(strstr(err.msg, "both set"));
	parse_err("clusters:\n- name: c\n  cluster:\n    server: https://h\n"
		  "    insecure-skip-tls-verify: true\n    certificate-authority-data: " B64_CA "\n"
		  "contexts:\n- name: x\n  context: {cluster: c}\n", "x", &err);
	assert_non_null(strstr(err.msg, "kc.yaml:5:31: "));
	assert_non_null(strstr(err.msg, "contradictory"));
	parse_err("clusters:\n- name: c\n  cluster:\n    server: https://h\n"
		  "    insecure-skip-tls-verify: sure\n"
		  "contexts:\n- name: x\n  context: {cluster: c}\n", "x", &err);
	assert_non_null(strstr(err.msg, "expected true or false"));
}

static void test_bad_base64_is_located_not_quoted(void **state)
{
	struct errbuf err = {""};

	(void)state;
	parse_err(HEAD "    client-certificate-data: " B64_CERT "\n"
		       "    client-key-data: TOPSECRETKEY!!==\n", "x", &err);
	assert_string_equal(err.msg,
			    "kc.yaml:11:22: users[\"u\"].user.client-key-data: invalid base64 at offset 12");
	assert_null(strstr(err.msg, "TOPSECRET"));
	parse_err("clusters:\n- name: c\n  cluster:\n    server: https://h\n"
		  "    certificate-authority-data: QUJD=\n"
		  "contexts:\n- name: x\n  context: {cluster: c}\n", "x", &err);
	assert_non_null(strstr(err.msg, "kc.yaml:5:33: "));
	assert_non_null(strstr(err.msg, "invalid base64"));
	/* a token of the wrong type is reported without its content */
	parse_err(HEAD "    token: {value: hunter2hunter2}\n", "x", &err);
	assert_non_null(strstr(err.msg, "kc.yaml:10:12: "));
	assert_null(strstr(err.msg, "hunter2"));
}

static void test_base64(void **state)
{
	struct errbuf err = {""};
	unsigned char *p;
	size_t n = 99;

	(void)state;
	p = kube_base64_decode("aGVsbG8=", 8, &n, &err);
	assert_non_null(p);
	assert_int_equal(n, 5);
	assert_string_equal((char *)p, "hello");
	free(p);
	p = kube_base64_decode("aGVs\nbG8", 8, &n, &err); /* no padding, a line break */
	assert_non_null(p);
	assert_string_equal((char *)p, "hello");
	free(p);
	p = kube_base64_decode("", 0, &n, &err);
	assert_non_null(p);
	assert_int_equal(n, 0);
	free(p);
	assert_null(kube_base64_decode("aGVsbG8=x", 9, &n, &err)); /* data after padding */
	assert_string_equal(err.msg, "invalid base64 at offset 8");
	assert_null(kube_base64_decode("a", 1, &n, &err));
	assert_non_null(strstr(err.msg, "truncated"));
	assert_null(kube_base64_decode("ab-d", 4, &n, &err));
	assert_string_equal(err.msg, "invalid base64 at offset 2");
	assert_null(kube_base64_decode("a===", 4, &n, &err));
}

/* ---- files ---- */

static char tmpdir[256];

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup_dir(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/luascale-kc-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_load_several_files(void **state)
{
	char path[1100], a[512], b[512];
	struct kube_config *c = NULL;
	struct errbuf err = {""};

	(void)state;
	write_file(tmpdir, "a.yaml",
		   "contexts:\n- name: x\n  context: {cluster: c, user: u}\n"
		   "users:\n- name: u\n  user: {tokenFile: t}\n");
	write_file(tmpdir, "b.yaml",
		   "clusters:\n- name: c\n  cluster: {server: 'https://b', certificate-authority: ca}\n"
		   "contexts:\n- name: x\n  context: {cluster: ignored}\n- name: y\n  context: {cluster: c}\n"
		   "users:\n- name: u\n  user: {token: later-file-loses}\n");
	snprintf(a, sizeof(a), "%s/a.yaml", tmpdir);
	snprintf(b, sizeof(b), "%s/b.yaml", tmpdir);
	snprintf(path, sizeof(path), "%s:%s", a, b);
	assert_int_equal(kubeconfig_load(path, "x", &c, &err), 0);
	assert_string_equal(c->server, "https://b");
	/* each path is relative to the file that holds it */
	snprintf(a, sizeof(a), "%s/ca", tmpdir);
	assert_string_equal(c->ca_file, a);
	snprintf(a, sizeof(a), "%s/t", tmpdir);
	assert_string_equal(c->token_file, a);
	assert_null(c->token);
	kube_config_free(c);
	/* no context: the message lists the contexts of both files */
	assert_int_equal(kubeconfig_load(path, NULL, &c, &err), -1);
	assert_non_null(strstr(err.msg, "contexts: x, y"));
	/* a missing file */
	snprintf(path, sizeof(path), "%s/none.yaml", tmpdir);
	assert_int_equal(kubeconfig_load(path, "x", &c, &err), -1);
	assert_non_null(strstr(err.msg, "cannot read"));
	/* an error in a file names that file */
	write_file(tmpdir, "bad.yaml", "contexts:\n- name: x\n  context: [1]\n");
	snprintf(path, sizeof(path), "%s/bad.yaml", tmpdir);
	assert_int_equal(kubeconfig_load(path, "x", &c, &err), -1);
	snprintf(a, sizeof(a), "%s/bad.yaml:3:12: ", tmpdir);
	assert_non_null(strstr(err.msg, a));
}

static void test_incluster(void **state)
{
	struct kube_incluster_env env = {0};
	struct kube_config *c = NULL;
	struct errbuf err = {""};
	char tok[512], ca[512], ns[512];

	(void)state;
	snprintf(tok, sizeof(tok), "%s/token", tmpdir);
	snprintf(ca, sizeof(ca), "%s/ca.crt", tmpdir);
	snprintf(ns, sizeof(ns), "%s/namespace", tmpdir);
	write_file(tmpdir, "token", "sa-token-value\n");
	write_file(tmpdir, "ca.crt", "CA");
	write_file(tmpdir, "namespace", "kube-system\n");
	env.host = "10.96.0.1";
	env.port = "443";
	env.token_file = tok;
	env.ca_file = ca;
	env.ns_file = ns;
	assert_int_equal(kube_config_incluster(&env, &c, &err), 0);
	assert_string_equal(c->server, "https://10.96.0.1:443");
	assert_string_equal(c->token_file, tok);
	assert_null(c->token); /* read (and re-read) by the client */
	assert_string_equal(c->ca_file, ca);
	assert_string_equal(c->namespace, "kube-system");
	assert_string_equal(c->context, "in-cluster");
	kube_config_free(c);

	env.host = "fd00::1";
	assert_int_equal(kube_config_incluster(&env, &c, &err), 0);
	assert_string_equal(c->server, "https://[fd00::1]:443");
	kube_config_free(c);

	env.host = "";
	assert_int_equal(kube_config_incluster(&env, &c, &err), -1);
	assert_non_null(strstr(err.msg, "KUBERNETES_SERVICE_HOST"));
	env.host = "10.96.0.1";
	env.port = "https";
	assert_int_equal(kube_config_incluster(&env, &c, &err), -1);
	assert_non_null(strstr(err.msg, "not a port"));
	env.port = "443";

	write_file(tmpdir, "token", "\n");
	assert_int_equal(kube_config_incluster(&env, &c, &err), -1);
	assert_non_null(strstr(err.msg, "empty"));
	write_file(tmpdir, "token", "sa-token-value");
	snprintf(ca, sizeof(ca), "%s/missing.crt", tmpdir);
	assert_int_equal(kube_config_incluster(&env, &c, &err), -1);
	assert_non_null(strstr(err.msg, "in-cluster CA"));
	assert_null(strstr(err.msg, "sa-token-value"));
	snprintf(tok, sizeof(tok), "%s/missing-token", tmpdir);
	assert_int_equal(kube_config_incluster(&env, &c, &err), -1);
	assert_non_null(strstr(err.msg, "service-account token"));
}

/* A FIFO with no writer as kubeconfig, or as an in-cluster file: refused at
 * once (a blocked open would hang this test), with the file's name. */
static void test_fifo_files_refused(void **state)
{
	struct kube_incluster_env env = {0};
	struct kube_config *c = NULL;
	struct errbuf err = {""};
	char fifo[512], tok[512], ca[512];

	(void)state;
	snprintf(fifo, sizeof(fifo), "%s/fifo", tmpdir);
	unlink(fifo);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(kubeconfig_load(fifo, "x", &c, &err), -1);
	assert_null(c);
	assert_non_null(strstr(err.msg, fifo));
	assert_non_null(strstr(err.msg, "not a regular file"));

	snprintf(tok, sizeof(tok), "%s/token", tmpdir);
	snprintf(ca, sizeof(ca), "%s/ca.crt", tmpdir);
	write_file(tmpdir, "token", "sa-token-value\n");
	write_file(tmpdir, "ca.crt", "CA");
	env.host = "10.96.0.1";
	env.port = "443";
	env.ns_file = fifo; /* optional, but must not block either */
	env.token_file = fifo;
	env.ca_file = ca;
	assert_int_equal(kube_config_incluster(&env, &c, &err), -1);
	assert_non_null(strstr(err.msg, "service-account token"));
	assert_non_null(strstr(err.msg, "not a regular file"));
	env.token_file = tok;
	env.ca_file = fifo;
	assert_int_equal(kube_config_incluster(&env, &c, &err), -1);
	assert_non_null(strstr(err.msg, "in-cluster CA"));
	assert_non_null(strstr(err.msg, fifo));
	assert_non_null(strstr(err.msg, "not a regular file"));
	env.ca_file = ca;
	assert_int_equal(kube_config_incluster(&env, &c, &err), 0);
	assert_null(c->namespace); /* the FIFO namespace file is skipped */
	kube_config_free(c);
	unlink(fifo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_token_context),
		cmocka_unit_test(test_cert_data_context),
		cmocka_unit_test(test_files_relative_to_kubeconfig),
		cmocka_unit_test(test_exec_v1),
		cmocka_unit_test(test_exec_v1beta1_defaults),
		cmocka_unit_test(test_anonymous_user),
		cmocka_unit_test(test_no_context_named),
		cmocka_unit_test(test_unknown_context),
		cmocka_unit_test(test_errors_name_line_col),
		cmocka_unit_test(test_auth_rules),
		cmocka_unit_test(test_bad_base64_is_located_not_quoted),
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_load_several_files),
		cmocka_unit_test(test_incluster),
		cmocka_unit_test(test_fifo_files_refused),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
