/*
 * cli: the luascale subcommands. Each takes the arguments after its name
 * and returns the process exit status: 0 ok, 1 usage, 2 bad input (config,
 * state), 3 policy failure, 4 a simulated run broke a safety invariant.
 */
#ifndef LUASCALE_CLI_H
#define LUASCALE_CLI_H

#include <stdint.h>

#include "config.h"
#include "engine/safety.h"
#include "sched.h"

enum cli_exit {
	EXIT_OK = 0,
	EXIT_USAGE = 1,
	EXIT_INPUT = 2,
	EXIT_POLICY = 3,
	EXIT_INVARIANT = 4,
};

int cli_check(int argc, char **argv);
int cli_decide(int argc, char **argv);
int cli_test(int argc, char **argv);
int cli_sim(int argc, char **argv);
int cli_run(int argc, char **argv);
int cli_simulate(int argc, char **argv);
int cli_demo(int argc, char **argv);

/* Reads --now: RFC 3339 or unix seconds. 0 or -1. */
int cli_parse_now(const char *text, int64_t *out);

#endif
