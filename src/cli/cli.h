/*
 * cli: the luascale subcommands. Each takes the arguments after its name
 * and returns the process exit status: 0 ok, 1 usage, 2 bad input (config,
 * state), 3 policy failure, 4 a simulated run broke a safety invariant,
 * 5 `run --once` could not read the cloud.
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
	EXIT_CLOUD = 5,
};

int cli_check(int argc, char **argv);
int cli_decide(int argc, char **argv);
int cli_test(int argc, char **argv);
int cli_sim(int argc, char **argv);
int cli_run(int argc, char **argv);
/* `luascale status`: prints the status ConfigMap the running autoscaler writes. */
int cli_status(int argc, char **argv);
int cli_simulate(int argc, char **argv);
int cli_demo(int argc, char **argv);
/* `luascale aws-sign`: SigV4-signs (or --verify) a raw HTTP request file. */
int cli_aws_sign(int argc, char **argv);
/* `luascale gce-jwt` (hidden): prints the JWT assertion of a GCE service-account key. */
int cli_gce_jwt(int argc, char **argv);

/* The latest --now: 9999-12-31T23:59:59Z, the last second a timestamp can
 * print as RFC 3339. */
#define CLI_NOW_MAX 253402300799LL

/* Reads --now: RFC 3339 or unix seconds (digits only), from 1970 to year
 * 9999. Returns 0, -1 when it is neither form, -2 when out of range. */
int cli_parse_now(const char *text, int64_t *out);

#endif
