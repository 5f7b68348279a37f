/*
 * fuzz_aws_event: aws_interrupt_parse() on arbitrary bytes (an SQS message
 * body as anyone who may send to the interruption queue might write it).
 * Checks: a verdict of the three, interruptions only with OK and never
 * more than the room given, every one a valid instance id and a known
 * kind, a spot deadline two minutes after its time, and a reason for
 * anything refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "providers/aws/aws_interrupt.h"

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "aws event invariant broken: %s\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct provider_interruption out[8];
	size_t cap = size % 8 + 1, n = 99, i;
	char why[128] = "";
	enum aws_event_verdict v = aws_interrupt_parse((const char *)data, size, out, cap, &n, why,
						       sizeof(why));

	check(v == AWS_EVENT_OK || v == AWS_EVENT_IGNORED || v == AWS_EVENT_MALFORMED, "a verdict");
	check(n <= cap, "no more interruptions than room");
	check(v == AWS_EVENT_OK ? n >= 1 : n == 0, "interruptions only with OK");
	if (v != AWS_EVENT_OK)
		check(why[0] && strcmp(why, "?") != 0 && strlen(why) < sizeof(why), "a refusal says why");
	for (i = 0; i < n; i++) {
		const char *id = out[i].instance_id;

		check(!strncmp(id, "i-", 2) && strspn(id + 2, "0123456789abcdef") == strlen(id + 2) &&
		      strlen(id) >= 10 && strlen(id) <= 19, "a valid instance id");
		check(out[i].kind <= PROVIDER_INTERRUPT_TERMINATED, "a known kind");
		check(!out[i].group[0] && !out[i].provider_id[0], "no group or providerID from the parser");
		if (out[i].kind == PROVIDER_INTERRUPT_SPOT_INTERRUPTION)
			check(out[i].deadline_wall == out[i].received_wall + 120, "spot: two minutes");
		if (out[i].kind == PROVIDER_INTERRUPT_REBALANCE || out[i].kind >= PROVIDER_INTERRUPT_STOPPING)
			check(out[i].deadline_wall == 0, "no deadline");
	}
	return 0;
}
