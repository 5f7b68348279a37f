/*
 * cli/status: `luascale status` — reads the status ConfigMap that the
 * running autoscaler writes and prints it (its text, or its JSON); with
 * --nodes, why the nodes stay: the ConfigMap's summary, or every node from
 * the daemon's /debug/nodes (--url). The cluster comes from the config as
 * for `luascale run`.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "buf.h"
#include "cli/cli.h"
#include "config.h"
#include "engine/status.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "kube/statuswriter.h"
#include "log.h"

/* /debug/nodes answers at 5,000 nodes with about 3 MB */
#define NODES_BODY_MAX ((size_t)256 << 20)
#define NODES_TIMEOUT_S 30L

static void status_usage(FILE *f)
{
	fputs("usage: luascale status --config FILE [--context NAME] [--json]\n"
	      "                       [--namespace NS] [--name NAME] [--nodes]\n"
	      "       luascale status --nodes --url http://HOST:PORT [--json]\n"
	      "\n"
	      "Prints the status the running autoscaler keeps in its ConfigMap\n"
	      "(status.namespace/status.name in the config, default\n"
	      "kube-system/luascale-status): the cluster's and each group's health,\n"
	      "sizes and backoff, the last scale-up and scale-down, the last policy error.\n"
	      "\n"
	      "  --config FILE     the autoscaler's config: its cluster section says where\n"
	      "  --context NAME    the kubeconfig context (overrides cluster.context)\n"
	      "  --json            print the machine-readable form (key status.json)\n"
	      "  --namespace NS    the ConfigMap's namespace (overrides status.namespace)\n"
	      "  --name NAME       the ConfigMap's name (overrides status.name)\n"
	      "  --nodes           why nodes stay: the ConfigMap's summary (counts by state,\n"
	      "                    the most common reasons), as of the last explanation pass\n"
	      "                    (intervals.explain)\n"
	      "  --url URL         with --nodes: every node, from the daemon's /debug/nodes\n"
	      "                    at URL (its server.listen, e.g. after kubectl port-forward)\n"
	      "\n"
	      "exit status: 0 printed, 2 the ConfigMap (or the URL) is missing or cannot be read.\n",
	      f);
}

/* ---- --nodes: tables ---- */

/* The length of 's' escaped as the log escapes it (log_escape), at most 'max'. */
static int esc_len(const char *s, int max)
{
	size_t n = strlen(s), cap = 4 * n + 1, len;
	char *o = malloc(cap);

	if (!o)
		return max;
	len = log_escape(s, n, o, cap);
	free(o);
	return len > (size_t)max ? max : (int)len;
}

/* Prints 's' escaped (no terminal escapes, one line), padded to 'width'. */
static void cell(const char *s, int width)
{
	int n = esc_len(s, 1 << 20);

	log_fwrite_escaped(stdout, s, strlen(s));
	for (; n < width; n++)
		fputc(' ', stdout);
}

static const char *str_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double num_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* "1m", "90s": an interval for people. */
static void every(double seconds, char *out, size_t len)
{
	long long s = (long long)seconds;

	if (s > 0 && s % 3600 == 0)
		snprintf(out, len, "%lldh", s / 3600);
	else if (s > 0 && s % 60 == 0)
		snprintf(out, len, "%lldm", s / 60);
	else
		snprintf(out, len, "%gs", seconds);
}

/* The summary under status.json's "nodes" ('what' names where it came
 * from). 0 printed, -1 with why on stderr. */
static int print_summary(const cJSON *n, const char *what)
{
	const cJSON *reasons = cJSON_GetObjectItemCaseSensitive(n, "reasons"), *r;
	const char *time = str_of(n, "time");
	char ev[32];
	int wx = 7, ws = 9;

	if (!cJSON_IsObject(n) || !cJSON_IsArray(reasons)) {
		fprintf(stderr, "luascale status: %s: \"nodes\" is not a node summary\n", what);
		return -1;
	}
	every(num_of(n, "intervalSeconds"), ev, sizeof(ev));
	if (num_of(n, "intervalSeconds") <= 0) {
		printf("node explanations are off (intervals.explain is 0)\n");
		return 0;
	}
	if (!time) {
		printf("no node explanations yet: they come every %s, the first with the first round\n", ev);
		return 0;
	}
	printf("nodes explained at %s (every %s): %.0f nodes: %.0f kept, %.0f candidate, %.0f removing\n",
	       time, ev, num_of(n, "total"), num_of(n, "kept"), num_of(n, "candidate"),
	       num_of(n, "removing"));
	if (!cJSON_GetArraySize(reasons))
		return 0;
	cJSON_ArrayForEach(r, reasons)
		if (str_of(r, "example"))
			wx = esc_len(str_of(r, "example"), 64) > wx ? esc_len(str_of(r, "example"), 64) : wx;
	printf("\n%5s  %-*s  %-*s  %s\n", "COUNT", ws, "STATE", wx, "EXAMPLE", "REASON (numbers as #)");
	cJSON_ArrayForEach(r, reasons) {
		printf("%5.0f  ", num_of(r, "count"));
		cell(str_of(r, "state") ? str_of(r, "state") : "?", ws);
		fputs("  ", stdout);
		cell(str_of(r, "example") ? str_of(r, "example") : "", wx);
		fputs("  ", stdout);
		cell(str_of(r, "reason") ? str_of(r, "reason") : "", 0);
		fputc('\n', stdout);
	}
	if (num_of(n, "moreReasons") > 0)
		printf("(%.0f more reasons; every node: luascale status --nodes --url "
		       "http://HOST:PORT, the daemon's /debug/nodes)\n", num_of(n, "moreReasons"));
	return 0;
}

/* Every node of /debug/nodes' answer. 0 printed, -1 with why on stderr. */
static int print_nodes(const cJSON *j, const char *what)
{
	const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(j, "nodes"), *n;
	const cJSON *counts = cJSON_GetObjectItemCaseSensitive(j, "counts");
	const cJSON *perr = cJSON_GetObjectItemCaseSensitive(j, "policyError");
	int wn = 4, wg = 5, ws = 9, k;
	char ev[32];

	if (!cJSON_IsArray(nodes) || !str_of(j, "time")) {
		fprintf(stderr, "luascale status: %s: not an answer of /debug/nodes (no \"time\" "
			"and \"nodes\")\n", what);
		return -1;
	}
	every(num_of(j, "intervalSeconds"), ev, sizeof(ev));
	printf("nodes explained at %s (every %s): %d nodes: %.0f kept, %.0f candidate, %.0f removing\n",
	       str_of(j, "time"), ev, cJSON_GetArraySize(nodes), num_of(counts, "kept"),
	       num_of(counts, "candidate"), num_of(counts, "removing"));
	if (cJSON_IsObject(perr) && str_of(perr, "message")) {
		fputs("the policy failed in the last explaining round (these are from before): ", stdout);
		cell(str_of(perr, "message"), 0);
		fputc('\n', stdout);
	}
	cJSON_ArrayForEach(n, nodes) {
		if ((k = esc_len(str_of(n, "name") ? str_of(n, "name") : "", 253)) > wn)
			wn = k;
		if ((k = esc_len(str_of(n, "group") ? str_of(n, "group") : "-", 64)) > wg)
			wg = k;
	}
	printf("\n%-*s  %-*s  %-*s  %-20s  %s\n", wn, "NAME", wg, "GROUP", ws, "STATE", "SINCE",
	       "REASON");
	cJSON_ArrayForEach(n, nodes) {
		cell(str_of(n, "name") ? str_of(n, "name") : "", wn);
		fputs("  ", stdout);
		cell(str_of(n, "group") ? str_of(n, "group") : "-", wg);
		fputs("  ", stdout);
		cell(str_of(n, "state") ? str_of(n, "state") : "?", ws);
		fputs("  ", stdout);
		cell(str_of(n, "since") ? str_of(n, "since") : "", 20);
		fputs("  ", stdout);
		cell(str_of(n, "reason") ? str_of(n, "reason") : "", 0);
		fputc('\n', stdout);
	}
	return 0;
}

static size_t body_write(char *data, size_t size, size_t n, void *ctx)
{
	struct buf *b = ctx;

	if (b->len + size * n > NODES_BODY_MAX || buf_append(b, data, size * n) < 0)
		return 0; /* curl stops: CURLE_WRITE_ERROR */
	return size * n;
}

/*
 * GET 'base' + "/debug/nodes" ('base' as given when it ends in
 * /debug/nodes) and prints it: raw with 'json', else as a table.
 * Returns an exit status; errors name the URL and what went wrong.
 */
static int nodes_from_url(const char *base, bool json)
{
	struct buf url = BUF_INIT, body = BUF_INIT;
	char curl_err[CURL_ERROR_SIZE] = "";
	size_t n = strlen(base);
	long code = 0;
	int rc = EXIT_INPUT;
	CURLcode res;
	cJSON *j = NULL;
	CURL *h;

	if (strncmp(base, "http://", 7) != 0 && strncmp(base, "https://", 8) != 0) {
		fprintf(stderr, "luascale status: --url: expected http://HOST:PORT (the daemon's "
			"server.listen), got \"%s\"\n", base);
		return EXIT_USAGE;
	}
	while (n > 0 && base[n - 1] == '/')
		n--;
	buf_append(&url, base, n);
	if (n < 12 || strncmp(base + n - 12, "/debug/nodes", 12) != 0)
		buf_puts(&url, "/debug/nodes");
	h = curl_easy_init();
	if (!h || url.oom) {
		fprintf(stderr, "luascale status: cannot start an HTTP request\n");
		goto out;
	}
	curl_easy_setopt(h, CURLOPT_URL, url.data);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, body_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, NODES_TIMEOUT_S);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	res = curl_easy_perform(h);
	if (res != CURLE_OK) {
		fprintf(stderr, "luascale status: GET %s: %s\n", url.data,
			res == CURLE_WRITE_ERROR && body.len >= NODES_BODY_MAX
				? "the answer is too large"
				: curl_err[0] ? curl_err : curl_easy_strerror(res));
		goto out;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	j = body.data ? cJSON_ParseWithLength(body.data, body.len) : NULL;
	if (code != 200) {
		const char *why = j ? str_of(j, "error") : NULL;

		fprintf(stderr, "luascale status: GET %s: HTTP %ld: ", url.data, code);
		if (why)
			log_fwrite_escaped(stderr, why, strlen(why));
		else
			fputs(code == 404 ? "not found (a luascale older than /debug/nodes?)"
					  : "no node explanations", stderr);
		fputc('\n', stderr);
		goto out;
	}
	if (!j) {
		fprintf(stderr, "luascale status: GET %s: the answer is not JSON\n", url.data);
		goto out;
	}
	if (json) {
		fwrite(body.data, 1, body.len, stdout);
		rc = EXIT_OK;
	} else if (print_nodes(j, url.data) == 0) {
		rc = EXIT_OK;
	}
out:
	cJSON_Delete(j);
	if (h)
		curl_easy_cleanup(h);
	buf_free(&url);
	buf_free(&body);
	return rc;
}

/* The node summary of status.json's text 'text' from ConfigMap 'where'. */
static int nodes_from_status(const char *text, const char *where, bool json)
{
	cJSON *j = cJSON_Parse(text);
	const cJSON *n = j ? cJSON_GetObjectItemCaseSensitive(j, "nodes") : NULL;
	int rc = EXIT_INPUT;
	char *out;

	if (!j) {
		fprintf(stderr, "luascale status: ConfigMap %s: key %s is not JSON\n", where,
			STATUS_KEY_JSON);
	} else if (!n) {
		fprintf(stderr, "luascale status: ConfigMap %s has no node summary (\"nodes\" in %s): "
			"the luascale that writes it does not explain nodes (a version without "
			"intervals.explain)\n", where, STATUS_KEY_JSON);
	} else if (json) {
		out = cJSON_PrintUnformatted(n);
		if (out) {
			printf("%s\n", out);
			rc = EXIT_OK;
		}
		free(out);
	} else if (print_summary(n, where) == 0) {
		rc = EXIT_OK;
	}
	cJSON_Delete(j);
	return rc;
}

int cli_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"context", required_argument, NULL, 'x'},
		{"json", no_argument, NULL, 'j'},
		{"namespace", required_argument, NULL, 'n'},
		{"name", required_argument, NULL, 'N'},
		{"nodes", no_argument, NULL, 'o'},
		{"url", required_argument, NULL, 'u'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *config_path = getenv("LUASCALE_CONFIG"), *context = NULL;
	const char *ns = NULL, *name = NULL, *url = NULL;
	bool json = false, nodes = false;
	char where[512];
	struct config *c = NULL;
	struct kube_config *kc = NULL;
	struct kube_client *client = NULL;
	struct kube_client_opts copts;
	struct errbuf err;
	char *text = NULL;
	int opt, rc = EXIT_INPUT;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "c:x:jn:N:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'c': config_path = optarg; break;
		case 'x': context = optarg; break;
		case 'j': json = true; break;
		case 'n': ns = optarg; break;
		case 'N': name = optarg; break;
		case 'o': nodes = true; break;
		case 'u': url = optarg; break;
		case 'h': status_usage(stdout); return EXIT_OK;
		default: status_usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "luascale status: unexpected argument \"%s\"\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (url && !nodes) {
		fprintf(stderr, "luascale status: --url goes with --nodes (it reads the daemon's "
			"/debug/nodes)\n");
		return EXIT_USAGE;
	}
	if (url)
		return nodes_from_url(url, json);
	if (!config_path || !*config_path) {
		fprintf(stderr, "luascale status: --config FILE is required\n");
		return EXIT_USAGE;
	}
	c = config_load_flags(config_path, CONFIG_OFFLINE, &err);
	if (!c) {
		fprintf(stderr, "luascale: %s\n", err.msg);
		return EXIT_INPUT;
	}
	if (c->in_cluster) {
		struct kube_incluster_env env;

		memset(&env, 0, sizeof(env));
		if (kube_config_incluster(&env, &kc, &err) < 0) {
			fprintf(stderr, "luascale: in-cluster config: %s\n", err.msg);
			goto out;
		}
	} else if (!c->kubeconfig[0]) {
		fprintf(stderr, "luascale: %s: cluster.kubeconfig (or cluster.in_cluster) is required "
			"to read the status\n", config_path);
		goto out;
	} else if (kubeconfig_load(c->kubeconfig, context ? context : c->context, &kc, &err) < 0) {
		fprintf(stderr, "luascale: %s\n", err.msg);
		goto out;
	}
	memset(&copts, 0, sizeof(copts));
	client = kube_client_new(kc, &copts, &err);
	if (!client) {
		fprintf(stderr, "luascale: %s\n", err.msg);
		goto out;
	}
	if (kube_configmap_get_key(client, ns ? ns : c->status_namespace,
				   name ? name : c->status_name,
				   json || nodes ? STATUS_KEY_JSON : STATUS_KEY_TEXT, &text, &err) != 0) {
		fprintf(stderr, "luascale status: %s\n", err.msg);
		goto out;
	}
	if (nodes) {
		snprintf(where, sizeof(where), "%s/%s", ns ? ns : c->status_namespace,
			 name ? name : c->status_name);
		rc = nodes_from_status(text, where, json);
		goto out;
	}
	fputs(text, stdout);
	if (!*text || text[strlen(text) - 1] != '\n')
		fputc('\n', stdout);
	rc = EXIT_OK;
out:
	free(text);
	kube_client_free(client);
	kube_config_free(kc);
	config_free(c);
	return rc;
}
