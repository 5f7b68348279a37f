/*
 * fuzz_scenario: sim_scenario_parse() on arbitrary YAML; what parses is
 * built into a world on a virtual executor and run for one simulated
 * minute (arrivals, boots, scheduling), then torn down. Inputs that name
 * a config file are skipped: they would read the machine's files.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/world/scenario.h"

static int contains(const uint8_t *data, size_t size, const char *word)
{
	size_t n = strlen(word), i;

	for (i = 0; i + n <= size; i++)
		if (memcmp(data + i, word, n) == 0)
			return 1;
	return 0;
}

/* Keeps a run small: a scenario may ask for a lot of pods or nodes. */
static int too_big(const struct sim_scenario *sc)
{
	long total = 0;
	size_t i;

	for (i = 0; i < sc->n_initial; i++)
		total += sc->initial[i].count;
	for (i = 0; i < sc->n_workloads; i++)
		total += sc->workloads[i].count;
	return total > 2000;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sim_scenario *sc;
	struct errbuf err;
	struct clock *clock;
	struct executor *ex;
	struct sim_world *w;

	if (contains(data, size, "config"))
		return 0;
	err.msg[0] = '\0';
	sc = sim_scenario_parse((const char *)data, size, "fuzz.yaml", &err);
	if (!sc) {
		if (!err.msg[0])
			abort(); /* a failure must say why */
		return 0;
	}
	if (too_big(sc)) {
		sim_scenario_free(sc);
		return 0;
	}
	clock = vclock_new(sc->start_wall);
	ex = clock ? executor_new_virtual(clock) : NULL;
	w = ex ? sim_world_new(sc, ex, &err) : NULL;
	if (ex && !w && !err.msg[0])
		abort();
	if (w)
		executor_run_until(ex, clock_now(clock) + 60 * CLOCK_NS_PER_S);
	if (ex)
		executor_shutdown(ex, clock_now(clock));
	sim_world_free(w);
	if (clock)
		vclock_free(clock);
	sim_scenario_free(sc);
	return 0;
}
