/*
 * test_sim_cloud.h: the setup the simulator's cloud flavour tests
 * (test_sim_aws.c, test_sim_gce.c, test_sim_azure.c) share — two node
 * groups, a scenario whose cloud section must be refused with a message,
 * and a world run on a virtual clock from a scenario's text. Include it
 * after <cmocka.h>; the assertions stay in each test.
 */
#ifndef LUASCALE_TEST_SIM_CLOUD_H
#define LUASCALE_TEST_SIM_CLOUD_H

#include <stdio.h>
#include <string.h>

#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/world/scenario.h"

/* Two node groups: workers (min 1, max 'workers_max', a string) and gpu (max 2). */
#define SIM_TEST_GROUPS(workers_max)                                              \
	"node_groups:\n"                                                          \
	"  - name: workers\n"                                                     \
	"    min: 1\n"                                                            \
	"    max: " workers_max "\n"                                              \
	"    template: {allocatable: {cpu: 2, memory: 8Gi}}\n"                    \
	"  - name: gpu\n"                                                         \
	"    max: 2\n"                                                            \
	"    template: {allocatable: {cpu: 2, memory: 8Gi}}\n"

/* 'groups' then "<section>:\n<body>" must fail to parse with 'want' in the message. */
static inline void sim_test_expect_error(const char *groups, const char *section,
					 const char *body, const char *want)
{
	char text[2048];
	struct errbuf err;
	struct sim_scenario *sc;

	snprintf(text, sizeof(text), "%s%s:\n%s", groups, section, body);
	sc = sim_scenario_parse(text, strlen(text), "t.yaml", &err);
	if (sc) {
		sim_scenario_free(sc);
		fail_msg("parsed, expected \"%s\":\n%s", want, body);
	}
	if (!strstr(err.msg, want))
		fail_msg("got \"%s\", expected \"%s\"", err.msg, want);
}

/* A simulated world on a virtual clock. */
struct run {
	struct clock *clk;
	struct executor *ex;
	struct sim_scenario *sc;
	struct sim_world *w;
};

/* The world of scenario 'text' (it must parse and build). */
static inline void sim_test_run_text(struct run *r, const char *text)
{
	struct errbuf err;

	memset(r, 0, sizeof(*r));
	r->sc = sim_scenario_parse(text, strlen(text), "t.yaml", &err);
	if (!r->sc)
		fail_msg("%s", err.msg);
	r->clk = vclock_new(r->sc->start_wall);
	r->ex = executor_new_virtual(r->clk);
	r->w = sim_world_new(r->sc, r->ex, &err);
	if (!r->w)
		fail_msg("%s", err.msg);
}

static inline void run_end(struct run *r)
{
	executor_shutdown(r->ex, clock_now(r->clk));
	sim_world_free(r->w);
	vclock_free(r->clk);
	sim_scenario_free(r->sc);
}

#endif
