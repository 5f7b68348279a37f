/*
 * cli/simulate: `luascale simulate` and `luascale demo` — replay a scenario
 * in virtual time once per policy (sim/replay), show progress, print the
 * comparison table and the invariant checks, and write the HTML report
 * (sim/report). The demo is simulate with the classroom day and two
 * bundled policies.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "log.h"
#include "model.h"
#include "sim/runs/replay.h"
#include "sim/runs/report.h"
#include "sim/world/scenario.h"

#define MAX_POLICIES 8
#define DEMO_REPORT_DIR "luascale-report"

struct progress {
	bool tty;
	const char *label;
	int last;  /* percent shown last */
};

static void show_progress(void *ud, double frac, const struct sim_counts *c)
{
	struct progress *p = ud;
	int pct = (int)(frac * 100.0);

	if (pct > 100)
		pct = 100;
	if (p->tty) {
		int i, bar = pct / 4;

		if (pct == p->last)
			return;
		fprintf(stderr, "\r%-20.20s [", p->label);
		for (i = 0; i < 25; i++)
			fputc(i < bar ? '#' : '.', stderr);
		fprintf(stderr, "] %3d%%  %4d nodes  %5d pods pending ", pct, c->nodes, c->pods_pending);
		if (pct == 100)
			fputc('\n', stderr);
	} else if (pct / 10 != p->last / 10) {
		fprintf(stderr, "%s: %d%% (%d nodes, %d pods pending)\n", p->label, pct, c->nodes,
			c->pods_pending);
	}
	p->last = pct;
}

/* A run's log: every line into the --log file (when there is one), and
 * the first few errors on stderr, so a policy failing every round does not
 * flood the terminal. Lines carry the simulated time and the policy. */
struct run_log {
	FILE *f;
	const char *label;
	bool tty;            /* stderr shows a progress bar: start a new line */
	int errors_shown;
};

#define ERRORS_SHOWN_MAX 5

static void run_log_write(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct run_log *rl = ctx;
	char ts[32];

	model_format_time(wall, ts, sizeof(ts));
	if (rl->f)
		fprintf(rl->f, "%s %-5s [%s] %s\n", ts, log_level_str(level), rl->label, msg);
	if (level < LOG_ERROR || rl->errors_shown > ERRORS_SHOWN_MAX)
		return;
	if (rl->tty)
		fputc('\n', stderr);
	if (rl->errors_shown++ < ERRORS_SHOWN_MAX)
		fprintf(stderr, "%s error [%s] %s\n", ts, rl->label, msg);
	else
		fprintf(stderr, "[%s] more errors not shown%s\n", rl->label,
			rl->f ? "; the log file has them all" : "; --log FILE keeps them all");
}

/*
 * The policy file and params of each run: "key=value", one run a
 * paragraph, lines wrapped at PARAMS_WIDTH; a param the config set shows
 * the policy's default after it ("unneeded_for=5m (default 10m)").
 */
#define PARAMS_WIDTH 100

static void print_params(const struct sim_result *res, size_t n)
{
	char label[64];
	size_t i, j;

	printf("\nparams:\n");
	for (i = 0; i < n; i++) {
		const struct sim_result *r = &res[i];
		int col;

		sim_report_label(res, i, label, sizeof(label));
		printf("%s: %s", label, r->policy);
		if (r->params_from[0])
			printf(", policy.params from %s\n", r->params_from);
		else
			printf(", the policy's defaults\n");
		if (!r->n_params) {
			printf("  (none)\n");
			continue;
		}
		col = 0;
		for (j = 0; j < r->n_params; j++) {
			const struct sim_param *p = &r->params[j];
			char item[PARAMS_WIDTH * 4];
			int len;

			if (p->from_config)
				len = snprintf(item, sizeof(item), "%s=%s (default %s)", p->key, p->value,
					       p->dflt ? p->dflt : "none");
			else
				len = snprintf(item, sizeof(item), "%s=%s", p->key, p->value);
			if (len < 0)
				continue;
			if (col > 0 && col + 2 + len > PARAMS_WIDTH) {
				printf(",\n");
				col = 0;
			} else if (col > 0) {
				printf(", ");
				col += 2;
			}
			if (col == 0) {
				printf("  ");
				col = 2;
			}
			printf("%s", item);
			col += len;
		}
		printf("\n");
	}
}

static void print_table(const struct sim_result *res, size_t n)
{
	char label[64];
	int w = 20;
	size_t i;

	for (i = 0; i < n; i++) {
		sim_report_label(res, i, label, sizeof(label));
		if ((int)strlen(label) > w)
			w = (int)strlen(label);
	}
	printf("\n%-*s %10s %9s %8s %8s %8s %5s %8s %6s %7s %9s %6s %5s %9s %8s\n", w, "policy",
	       "node-hours", "cost", "wait p50", "wait p95", "wait max", "peak", "launches",
	       "unused", "removed", "evictions", "killed", "lost", "protected", "rejected");
	for (i = 0; i < n; i++) {
		const struct sim_result *r = &res[i];
		char p50[48], p95[48], mx[48];

		sim_report_label(res, i, label, sizeof(label));
		sim_report_format_wait(p50, sizeof(p50), r->wait_p50);
		sim_report_format_wait(p95, sizeof(p95), r->wait_p95);
		sim_report_format_wait(mx, sizeof(mx), r->wait_max);
		printf("%-*s %10.1f %9.2f %8s %8s %8s %5d %8llu %6llu %7llu %9llu %6llu %5llu %9llu %8llu\n",
		       w, label, r->node_hours, r->cost, p50, p95, mx, r->peak_nodes,
		       (unsigned long long)r->launches, (unsigned long long)r->unused,
		       (unsigned long long)r->removed,
		       (unsigned long long)r->evictions, (unsigned long long)r->killed,
		       (unsigned long long)r->lost, (unsigned long long)r->protected_killed,
		       (unsigned long long)r->rejected);
	}
	printf("\n");
	for (i = 0; i < n; i++) {
		const struct sim_result *r = &res[i];
		uint64_t v = sim_violations_total(&r->v);

		if (r->policy_failures || r->rejected)
			printf("%s: the policy failed in %llu round(s); the safety checks refused %llu action(s)\n",
			       r->policy, (unsigned long long)r->policy_failures,
			       (unsigned long long)r->rejected);
		if (v)
			printf("%s: %llu invariant violation(s); the first %s\n", r->policy,
			       (unsigned long long)v, r->v.first);
		if (r->replaces)
			printf("%s: replaces: %llu started, %llu done (the old node removed once its new node was Ready), "
			       "%llu failed (the old node left as it was)\n", r->policy,
			       (unsigned long long)r->replaces, (unsigned long long)r->replaced,
			       (unsigned long long)r->replace_failed);
		if (r->interrupted || r->moved || r->died)
			printf("%s: interruptions: %llu node(s) reclaimed after a notice; %llu pod(s) moved "
			       "off them before they went, %llu died with them\n", r->policy,
			       (unsigned long long)r->interrupted, (unsigned long long)r->moved,
			       (unsigned long long)r->died);
	}
	printf("node-hours and cost: instances from launch until gone, times the group's price.\n"
	       "wait: how long pods waited for a node (still waiting at the end: so far).\n"
	       "unused: launched nodes removed without having run a pod (bought for nothing).\n"
	       "killed: pods that died without an eviction; lost: evicted or killed pods that\n"
	       "nothing recreates (a user's session); protected: protected pods disrupted.\n"
	       "rejected: actions of the policy's plans that the safety checks refused.\n");
	print_params(res, n);
}

/*
 * Loads the scenario, runs it once per policy, prints the table and writes
 * the report when 'report_dir' is set. Returns an exit status.
 */
static int simulate(const char *scenario, const char *const *policies, size_t n,
		    bool have_seed, uint64_t seed, const char *report_dir, const char *log_path,
		    const char *prog)
{
	struct sim_result res[MAX_POLICIES];
	struct sim_scenario *sc;
	FILE *logf = NULL;
	struct errbuf err;
	size_t i, done = 0;
	int rc = EXIT_OK;

	sc = sim_scenario_load(scenario, &err);
	if (!sc) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		return EXIT_INPUT;
	}
	if (have_seed)
		sc->seed = seed;
	if (log_path && !(logf = fopen(log_path, "w"))) {
		fprintf(stderr, "%s: cannot write the log to %s: %s\n", prog, log_path, strerror(errno));
		sim_scenario_free(sc);
		return EXIT_INPUT;
	}
	fprintf(stderr, "%s: %s (seed %llu), %zu polic%s\n", prog,
		sc->title ? sc->title : scenario, (unsigned long long)sc->seed, n,
		n == 1 ? "y" : "ies");
	for (i = 0; i < n; i++, done++) {
		char label[64];
		struct progress pg = {isatty(STDERR_FILENO), label, -1};
		struct run_log rl = {logf, pg.label, pg.tty, 0};
		struct logger lg = {run_log_write, &rl, logf ? LOG_INFO : LOG_ERROR, NULL};
		struct sim_replay_opts o;

		/* the name the table and the report give the run */
		snprintf(res[i].policy, sizeof(res[i].policy), "%s", policies[i]);
		sim_report_label(res, i, label, sizeof(label));
		memset(&o, 0, sizeof(o));
		o.sc = sc;
		o.log = &lg;
		o.policy_path = policies[i];
		o.progress = show_progress;
		o.progress_ud = &pg;
		if (sim_replay(&o, &res[i], &err) < 0) {
			fprintf(stderr, "%s: %s: %s\n", prog, policies[i], err.msg);
			rc = EXIT_INPUT;
			goto out;
		}
	}
	print_table(res, n);
	for (i = 0; i < n; i++)
		if (sim_violations_total(&res[i].v))
			rc = EXIT_INVARIANT;
	if (report_dir) {
		char abs[PATH_MAX];

		if (sim_report_write(report_dir, sc, res, n, &err) < 0) {
			fprintf(stderr, "%s: %s\n", prog, err.msg);
			rc = EXIT_INPUT;
			goto out;
		}
		printf("report: %s/index.html\n", realpath(report_dir, abs) ? abs : report_dir);
	}
out:
	if (logf && fclose(logf) != 0 && rc == EXIT_OK) {
		fprintf(stderr, "%s: writing the log to %s: %s\n", prog, log_path, strerror(errno));
		rc = EXIT_INPUT;
	}
	for (i = 0; i < done; i++)
		sim_result_free(&res[i]);
	sim_scenario_free(sc);
	return rc;
}

static int parse_seed(const char *prog, const char *text, uint64_t *out)
{
	char *endp;

	*out = strtoull(text, &endp, 10);
	if (!*text || *endp || *text == '-') {
		fprintf(stderr, "%s: --seed must be a number, not \"%s\"\n", prog, text);
		return -1;
	}
	return 0;
}

static void simulate_usage(FILE *f)
{
	fputs("usage: luascale simulate --scenario FILE --policy FILE [--policy FILE ...]\n"
	      "                         [--seed N] [--report DIR] [--log FILE]\n"
	      "\n"
	      "Replays the scenario in virtual time (a day in seconds) through the engine,\n"
	      "the actuator and the simulated cloud and cluster, once per policy, and\n"
	      "prints a comparison: node-hours and cost, pod wait (p50, p95, max), peak\n"
	      "nodes, scale actions, evictions, pods killed and lost, protected pods\n"
	      "disrupted, actions the safety checks refused, any safety invariant a run\n"
	      "broke, and the params each policy ran with. --report DIR writes\n"
	      "DIR/index.html (the pods' wait curves, charts side by side per policy\n"
	      "with scale-up and removal markers, cost by group, params) and\n"
	      "DIR/series.csv.\n"
	      "--log FILE writes every run's engine log (plans, reasons, rejections,\n"
	      "launches, drains) stamped with the simulated time.\n"
	      "The same seed gives the same run. Scenarios: examples/scenarios/.\n"
	      "Exit status: 0, 1 usage, 2 bad scenario or policy, 4 an invariant broke.\n",
	      f);
}

int cli_simulate(int argc, char **argv)
{
	static const struct option opts[] = {
		{"scenario", required_argument, NULL, 's'},
		{"policy", required_argument, NULL, 'p'},
		{"seed", required_argument, NULL, 'S'},
		{"report", required_argument, NULL, 'r'},
		{"log", required_argument, NULL, 'l'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *scenario = NULL, *report = NULL, *log = NULL, *policies[MAX_POLICIES];
	size_t n = 0;
	bool have_seed = false;
	uint64_t seed = 0;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:p:S:r:l:h", opts, NULL)) != -1) {
		switch (opt) {
		case 's': scenario = optarg; break;
		case 'r': report = optarg; break;
		case 'l': log = optarg; break;
		case 'p':
			if (n == MAX_POLICIES) {
				fprintf(stderr, "luascale simulate: at most %d policies\n", MAX_POLICIES);
				return EXIT_USAGE;
			}
			policies[n++] = optarg;
			break;
		case 'S':
			if (parse_seed("luascale simulate", optarg, &seed) < 0)
				return EXIT_USAGE;
			have_seed = true;
			break;
		case 'h': simulate_usage(stdout); return EXIT_OK;
		default: simulate_usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "luascale simulate: unexpected argument \"%s\"\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (!scenario || n == 0) {
		fprintf(stderr, "luascale simulate: --scenario FILE and at least one --policy FILE are required\n");
		simulate_usage(stderr);
		return EXIT_USAGE;
	}
	return simulate(scenario, policies, n, have_seed, seed, report, log, "luascale simulate");
}

/* Where the bundled scenarios and policies are: LUASCALE_SHARE_DIR, or
 * the source tree the binary was built from. */
static const char *share_dir(void)
{
	const char *env = getenv("LUASCALE_SHARE_DIR");

	return env && *env ? env : LUASCALE_SHARE_DIR;
}

static void demo_usage(FILE *f)
{
	fputs("usage: luascale demo [--report DIR] [--seed N]\n"
	      "\n"
	      "Replays a day of a JupyterHub course — students arriving for a 9:00\n"
	      "lecture and a 14:00 lab, idle servers culled, the hub and proxy critical —\n"
	      "with policies/jupyterhub.lua and with policies/default.lua, prints the\n"
	      "comparison and writes an HTML report with charts (default directory:\n"
	      "./" DEMO_REPORT_DIR "). The same as:\n"
	      "  luascale simulate --scenario examples/scenarios/classroom-day.yaml \\\n"
	      "    --policy policies/jupyterhub.lua --policy policies/default.lua --report DIR\n",
	      f);
}

int cli_demo(int argc, char **argv)
{
	static const struct option opts[] = {
		{"report", required_argument, NULL, 'r'},
		{"seed", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char scenario[PATH_MAX], hub[PATH_MAX], def[PATH_MAX];
	const char *report = DEMO_REPORT_DIR, *policies[2] = {hub, def};
	const char *dir = share_dir();
	bool have_seed = false;
	uint64_t seed = 0;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "r:S:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'r': report = optarg; break;
		case 'S':
			if (parse_seed("luascale demo", optarg, &seed) < 0)
				return EXIT_USAGE;
			have_seed = true;
			break;
		case 'h': demo_usage(stdout); return EXIT_OK;
		default: demo_usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "luascale demo: unexpected argument \"%s\"\n", argv[optind]);
		return EXIT_USAGE;
	}
	snprintf(scenario, sizeof(scenario), "%s/examples/scenarios/classroom-day.yaml", dir);
	snprintf(hub, sizeof(hub), "%s/policies/jupyterhub.lua", dir);
	snprintf(def, sizeof(def), "%s/policies/default.lua", dir);
	if (access(scenario, R_OK) != 0) {
		fprintf(stderr, "luascale demo: cannot read %s (set LUASCALE_SHARE_DIR to the directory "
				"that holds examples/ and policies/)\n", scenario);
		return EXIT_INPUT;
	}
	printf("luascale demo: a classroom day, replayed in virtual time with two policies.\n"
	       "  jupyterhub.lua never evicts a student's server; default.lua drains\n"
	       "  underused nodes. Same day, same seed, same cloud: compare cost and harm.\n\n");
	fflush(stdout);
	return simulate(scenario, policies, 2, have_seed, seed, report, NULL, "luascale demo");
}
