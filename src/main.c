/*
 * main: the luascale command line — dispatches to a subcommand in src/cli/.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "runtime/memtune.h"

static void usage(FILE *f)
{
	fputs("usage: luascale COMMAND [OPTIONS]\n"
	      "\n"
	      "commands:\n"
	      "  demo    [--report DIR]                replay a classroom day with two policies\n"
	      "                                        and write an HTML report (start here)\n"
	      "  run     --config FILE [--dry-run] [--once]   the autoscaler\n"
	      "  status  --config FILE [--json]        print the running autoscaler's status\n"
	      "  check   --config FILE                 validate a config and its policy\n"
	      "  decide  --config FILE --state FILE    show what the policy would do to a\n"
	      "          [--policy FILE] [--output text|json] [--now TIME]   recorded cluster\n"
	      "  test    [PATH...]                     run busted policy specs through the engine\n"
	      "  simulate --scenario FILE --policy FILE...  replay a scenario in virtual time\n"
	      "          [--seed N] [--report DIR]     and compare policies\n"
	      "  sim     --listen 127.0.0.1:PORT --scenario FILE   serve a simulated cluster\n"
	      "          [--kubeconfig-out FILE] [--fault SPEC]...  to kubectl, in real time\n"
	      "  aws-sign --request FILE --region R --service S [--time T]   print the\n"
	      "          SigV4 canonical request, string to sign and Authorization\n"
	      "          header of a raw HTTP request (credentials from AWS_* variables)\n"
	      "  version                               print the version\n"
	      "\n"
	      "Run 'luascale COMMAND --help' for a command's options.\n",
	      f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	memtune_keep_freed();
	if (strcmp(argv[1], "check") == 0)
		return cli_check(argc - 1, argv + 1);
	if (strcmp(argv[1], "decide") == 0)
		return cli_decide(argc - 1, argv + 1);
	if (strcmp(argv[1], "test") == 0)
		return cli_test(argc - 1, argv + 1);
	if (strcmp(argv[1], "sim") == 0)
		return cli_sim(argc - 1, argv + 1);
	if (strcmp(argv[1], "run") == 0)
		return cli_run(argc - 1, argv + 1);
	if (strcmp(argv[1], "status") == 0)
		return cli_status(argc - 1, argv + 1);
	if (strcmp(argv[1], "demo") == 0)
		return cli_demo(argc - 1, argv + 1);
	if (strcmp(argv[1], "simulate") == 0)
		return cli_simulate(argc - 1, argv + 1);
	if (strcmp(argv[1], "aws-sign") == 0)
		return cli_aws_sign(argc - 1, argv + 1);
	if (strcmp(argv[1], "gce-jwt") == 0)
		return cli_gce_jwt(argc - 1, argv + 1);
	if (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0) {
		printf("luascale %s\n", LUASCALE_VERSION);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	fprintf(stderr, "luascale: unknown command \"%s\"\n\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
