/*
 * The environment an AWS provider under test reads (struct aws_env's
 * get): static example keys, us-east-1, and no instance metadata, so that
 * the credential chain never leaves the machine. For the loopback tests
 * whose fake needs no other variable.
 */
#ifndef LUASCALE_TEST_AWS_ENV_H
#define LUASCALE_TEST_AWS_ENV_H

#include <string.h>

static inline const char *test_aws_env(void *ud, const char *name)
{
	(void)ud;
	if (!strcmp(name, "AWS_ACCESS_KEY_ID"))
		return "AKIDEXAMPLE";
	if (!strcmp(name, "AWS_SECRET_ACCESS_KEY"))
		return "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
	if (!strcmp(name, "AWS_REGION"))
		return "us-east-1";
	if (!strcmp(name, "AWS_EC2_METADATA_DISABLED"))
		return "true";
	return NULL;
}

#endif
