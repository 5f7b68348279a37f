/*
 * providers/aws: one call of the provider's — an AWS action sent through
 * its mutating or read bucket (awsapi.c signs and retries it), counted per
 * action, refused once luascale is stopping — and the waits between
 * calls, over cloudcall (the status, the counts, the waits). Every other
 * file of the provider calls through here; this file calls none of them.
 */
#include <stdio.h>
#include <string.h>

#include "providers/aws/aws.h"
#include "providers/aws/aws_internal.h"

void aws_count_call(struct aws_prov *ap, const char *action)
{
	cloudcall_counts_add(&ap->calls, action);
}

uint64_t aws_provider_calls(const struct provider *p, const char *action)
{
	return cloudcall_counts_get(&AWS_PROV(p)->calls, action);
}

/* The action of a form: its first parameter's value. */
static void form_action(const struct aws_query *f, char *out, size_t len)
{
	const char *s = f->b.data ? f->b.data : "", *amp;

	if (strncmp(s, "Action=", 7)) {
		snprintf(out, len, "?");
		return;
	}
	s += 7;
	amp = strchr(s, '&');
	snprintf(out, len, "%.*s", amp ? (int)(amp - s) : (int)strlen(s), s);
}

int aws_do(struct provider *p, enum aws_service svc, bool mutating, struct aws_query *f,
	   struct xmltree_doc **doc, struct provider_status *st)
{
	struct aws_prov *ap = AWS_PROV(p);
	char action[48];

	form_action(f, action, sizeof(action));
	aws_count_call(ap, action);
	if (ap->cancel && atomic_load(ap->cancel)) {
		cloudcall_status(st, PROVIDER_CANCELLED, "%s not sent: luascale is stopping", action);
		*doc = NULL;
		return -1;
	}
	/* aws_call names the action in its messages (after the cloud's code) */
	return aws_call(&ap->api, svc, mutating ? p->mutating : p->reads, f, doc, st) < 0 ? -1 : 0;
}

int aws_wait(struct aws_prov *ap, int64_t ns)
{
	/* cancelled during the last step still counts as cancelled */
	if (cloudcall_wait_until(ap->clock, ap->cancel, clock_now(ap->clock) + ns) < 0)
		return -1;
	return ap->cancel && atomic_load(ap->cancel) ? -1 : 0;
}
