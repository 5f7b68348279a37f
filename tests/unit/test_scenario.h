/*
 * test_scenario.h: a scenario loaded from a file or parsed from text, for
 * the simulator's unit tests; a scenario that does not load fails the test
 * with its error. Header-only (static inline); include after <cmocka.h>.
 */
#ifndef LUASCALE_TEST_SCENARIO_H
#define LUASCALE_TEST_SCENARIO_H

#include <string.h>

#include "errbuf.h"
#include "sim/world/scenario.h"

static inline struct sim_scenario *load(const char *path)
{
	struct errbuf err;
	struct sim_scenario *sc = sim_scenario_load(path, &err);

	if (!sc)
		fail_msg("%s", err.msg);
	return sc;
}

static inline struct sim_scenario *parse(const char *text)
{
	struct errbuf err;
	struct sim_scenario *sc = sim_scenario_parse(text, strlen(text), "test.yaml", &err);

	if (!sc)
		fail_msg("%s", err.msg);
	return sc;
}

#endif
