/*
 * Stress test for the simulator's lock order (cloud, then store, then the
 * server's own mutex): a real-time simulated world served on 127.0.0.1:0,
 * and one thread per kind of write that takes both the cloud's and the
 * store's locks — Events about nodes, cordons and uncordons, label
 * patches, pod creates and deletes, node deletes with launches — all at
 * once, for LUASCALE_STRESS_SECONDS (15 by default; CI's ThreadSanitizer
 * run sets 60). A watchdog fails the test, naming what each thread was
 * doing, when no request has finished for 20 s: a deadlock shows as a
 * failure with its cause, never as a hang.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <pthread.h>

#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/apiserver/apiserver.h"
#include "sim/world/scenario.h"

#define STALL_NS (20 * CLOCK_NS_PER_S)

static const char scenario[] =
	"seed: 5\n"
	"duration: 1h\n"
	"node_groups:\n"
	"  - name: workers\n"
	"    min: 0\n"
	"    max: 12\n"
	"    template:\n"
	"      allocatable: {cpu: 4, memory: 16Gi, pods: 110}\n"
	"cloud: {boot_delay: 50ms, boot_jitter: 0s, launch_latency: 0s, shutdown_delay: 50ms}\n"
	"cluster: {register_delay: 50ms, scheduler_interval: 50ms}\n"
	"initial_nodes:\n"
	"  - {group: workers, count: 4}\n"
	"workloads:\n"
	"  - name: web\n"
	"    controller: replicaset\n"
	"    count: 6\n"
	"    requests: {cpu: 500m, memory: 1Gi}\n"
	"    labels: {app: web}\n"
	"    grace: 0s\n";

enum { T_EVENTS, T_CORDON, T_LABELS, T_PODS, T_NODES, T_READS, N_THREADS };

static const char *const thread_names[N_THREADS] = {
	"node Events", "cordons", "label patches", "pod creates and deletes",
	"node deletes and launches", "lists",
};

struct stress {
	char base[64];
	int64_t until_ns;
	atomic_llong progress_ns;          /* when a request last finished */
	atomic_long done[N_THREADS];
	atomic_long failed[N_THREADS];     /* transport errors (not HTTP codes) */
	char doing[N_THREADS][160];        /* written by its thread only */
	pthread_mutex_t doing_mu;
};

struct worker {
	struct stress *s;
	int kind;
};

static int64_t now_ns(void)
{
	return clock_now(clock_real());
}

static size_t discard(char *p, size_t size, size_t n, void *ud)
{
	(void)p;
	(void)ud;
	return size * n;
}

/* One request; the HTTP status, or 0 on a transport error. */
static long request(struct stress *s, int kind, const char *method, const char *path,
		    const char *ctype, const char *body)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	char url[512], hdr[128];
	long code = 0;

	if (!c)
		return 0;
	pthread_mutex_lock(&s->doing_mu);
	snprintf(s->doing[kind], sizeof(s->doing[kind]), "%s %s", method, path);
	pthread_mutex_unlock(&s->doing_mu);
	snprintf(url, sizeof(url), "%s%s", s->base, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		snprintf(hdr, sizeof(hdr), "Content-Type: %s", ctype ? ctype : "application/json");
		h = curl_slist_append(h, hdr);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	}
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	else
		atomic_fetch_add(&s->failed[kind], 1);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	pthread_mutex_lock(&s->doing_mu);
	snprintf(s->doing[kind], sizeof(s->doing[kind]), "between requests");
	pthread_mutex_unlock(&s->doing_mu);
	atomic_store(&s->progress_ns, now_ns());
	atomic_fetch_add(&s->done[kind], 1);
	return code;
}

/* One step of a worker's kind; i counts its steps. */
static void step(struct stress *s, int kind, long i)
{
	char path[256], body[512];
	int node = (int)(i % 4) + 1;

	switch (kind) {
	case T_EVENTS:
		snprintf(body, sizeof(body),
			 "{\"metadata\":{\"generateName\":\"workers-%d.\",\"namespace\":\"default\"},"
			 "\"involvedObject\":{\"kind\":\"Node\",\"name\":\"workers-%d\"},"
			 "\"reason\":\"Stress\",\"message\":\"event %ld\",\"type\":\"Normal\","
			 "\"source\":{\"component\":\"test\"}}",
			 node, node, i);
		request(s, kind, "POST", "/api/v1/namespaces/default/events", NULL, body);
		break;
	case T_CORDON:
		snprintf(path, sizeof(path), "/api/v1/nodes/workers-%d", node);
		snprintf(body, sizeof(body), "{\"spec\":{\"unschedulable\":%s}}",
			 (i / 4) % 2 ? "false" : "true");
		request(s, kind, "PATCH", path, "application/strategic-merge-patch+json", body);
		break;
	case T_LABELS:
		snprintf(path, sizeof(path), "/api/v1/nodes/workers-%d", node);
		snprintf(body, sizeof(body),
			 "{\"metadata\":{\"labels\":{\"stress\":\"v%ld\"},\"annotations\":{\"a\":\"%ld\"}}}",
			 i % 7, i);
		request(s, kind, "PATCH", path, "application/merge-patch+json", body);
		break;
	case T_PODS:
		if (i % 2 == 0) {
			snprintf(body, sizeof(body),
				 "{\"metadata\":{\"name\":\"p-%ld\",\"namespace\":\"default\",\"labels\":{\"app\":\"p\"}},"
				 "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\","
				 "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"}}}]}}",
				 i / 2);
			request(s, kind, "POST", "/api/v1/namespaces/default/pods", NULL, body);
		} else {
			snprintf(path, sizeof(path),
				 "/api/v1/namespaces/default/pods/p-%ld?gracePeriodSeconds=0", i / 2);
			request(s, kind, "DELETE", path, NULL, NULL);
		}
		break;
	case T_NODES:
		if (i % 2 == 0) {
			request(s, kind, "POST", "/apis/sim.luascale.io/v1/launch", NULL,
				"{\"group\":\"workers\",\"count\":1}");
		} else {
			/* the newest nodes come and go; workers-1..4 stay for the others */
			snprintf(path, sizeof(path), "/api/v1/nodes/workers-%ld", 5 + (i / 2) % 6);
			request(s, kind, "DELETE", path, NULL, NULL);
		}
		break;
	default:
		request(s, kind, "GET", i % 2 ? "/api/v1/nodes" : "/api/v1/pods", NULL, NULL);
		break;
	}
}

static void *work(void *arg)
{
	struct worker *w = arg;
	long i;

	for (i = 0; now_ns() < w->s->until_ns; i++)
		step(w->s, w->kind, i);
	return NULL;
}

static void test_no_deadlock_under_concurrent_writes(void **state)
{
	struct stress *s = calloc(1, sizeof(*s));
	struct worker workers[N_THREADS];
	pthread_t th[N_THREADS];
	struct sim_scenario *sc;
	struct executor *ex;
	struct sim_world *w;
	struct apiserver *srv;
	struct apiserver_opts o;
	struct errbuf err;
	const char *env = getenv("LUASCALE_STRESS_SECONDS");
	long seconds = env && atol(env) > 0 ? atol(env) : 15;
	int k;

	(void)state;
	assert_non_null(s);
	pthread_mutex_init(&s->doing_mu, NULL);
	sc = sim_scenario_parse(scenario, sizeof(scenario) - 1, "stress.yaml", &err);
	if (!sc)
		fail_msg("%s", err.msg);
	ex = executor_new_pool(2, 4096);
	assert_non_null(ex);
	w = sim_world_new(sc, ex, &err);
	if (!w)
		fail_msg("%s", err.msg);
	apiserver_opts_default(&o);
	srv = apiserver_new(w->cluster, &o, &err);
	if (!srv)
		fail_msg("%s", err.msg);
	snprintf(s->base, sizeof(s->base), "http://127.0.0.1:%d", apiserver_port(srv));
	s->until_ns = now_ns() + seconds * CLOCK_NS_PER_S;
	atomic_store(&s->progress_ns, now_ns());
	for (k = 0; k < N_THREADS; k++) {
		workers[k].s = s;
		workers[k].kind = k;
		snprintf(s->doing[k], sizeof(s->doing[k]), "starting");
		assert_int_equal(pthread_create(&th[k], NULL, work, &workers[k]), 0);
	}
	/* the watchdog: every thread must finish a request now and then */
	for (;;) {
		struct timespec nap = {0, 100 * 1000 * 1000};
		int64_t now = now_ns();

		if (now >= s->until_ns + STALL_NS)
			break;
		if (now - atomic_load(&s->progress_ns) > STALL_NS) {
			pthread_mutex_lock(&s->doing_mu);
			for (k = 0; k < N_THREADS; k++)
				print_error("thread %s: %s\n", thread_names[k], s->doing[k]);
			pthread_mutex_unlock(&s->doing_mu);
			fail_msg("no request finished for 20 s: the simulator is deadlocked");
		}
		if (now >= s->until_ns) {
			bool all_out = true;

			pthread_mutex_lock(&s->doing_mu);
			for (k = 0; k < N_THREADS; k++)
				if (strcmp(s->doing[k], "between requests") != 0)
					all_out = false;
			pthread_mutex_unlock(&s->doing_mu);
			if (all_out)
				break;
		}
		nanosleep(&nap, NULL);
	}
	for (k = 0; k < N_THREADS; k++)
		pthread_join(th[k], NULL);
	for (k = 0; k < N_THREADS; k++) {
		print_message("%-26s %6ld requests, %ld transport errors\n", thread_names[k],
			      atomic_load(&s->done[k]), atomic_load(&s->failed[k]));
		assert_true(atomic_load(&s->done[k]) > 0);
		assert_int_equal(atomic_load(&s->failed[k]), 0);
	}
	apiserver_free(srv);
	executor_shutdown(ex, now_ns() + 5 * CLOCK_NS_PER_S);
	sim_world_free(w);
	sim_scenario_free(sc);
	pthread_mutex_destroy(&s->doing_mu);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_deadlock_under_concurrent_writes),
	};

	curl_global_init(CURL_GLOBAL_DEFAULT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
