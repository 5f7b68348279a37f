/*
 * providers/aws: one call of the provider's — an AWS action sent through
 * its mutating or read bucket (awsapi.c signs and retries it), counted per
 * action, refused once luascale is stopping — and the waits between
 * calls. Every other file of the provider calls through here; this file
 * calls none of them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "providers/aws/aws.h"
#include "providers/aws/aws_internal.h"

void aws_status(struct provider_status *st, enum provider_error code, const char *fmt, ...)
{
	va_list ap;

	st->code = code;
	va_start(ap, fmt);
	vsnprintf(st->message, sizeof(st->message), fmt, ap);
	va_end(ap);
}

void aws_count_call(struct aws_prov *ap, const char *action)
{
	size_t i;

	pthread_mutex_lock(&ap->mu);
	for (i = 0; i < sizeof(ap->counts) / sizeof(ap->counts[0]); i++) {
		if (!ap->counts[i].action[0])
			snprintf(ap->counts[i].action, sizeof(ap->counts[i].action), "%s", action);
		if (!strcmp(ap->counts[i].action, action)) {
			ap->counts[i].n++;
			break;
		}
	}
	pthread_mutex_unlock(&ap->mu);
}

uint64_t aws_provider_calls(const struct provider *p, const char *action)
{
	struct aws_prov *ap = AWS_PROV(p);
	uint64_t n = 0;
	size_t i;

	pthread_mutex_lock(&ap->mu);
	for (i = 0; i < sizeof(ap->counts) / sizeof(ap->counts[0]); i++)
		if (!strcmp(ap->counts[i].action, action))
			n = ap->counts[i].n;
	pthread_mutex_unlock(&ap->mu);
	return n;
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
		aws_status(st, PROVIDER_CANCELLED, "%s not sent: luascale is stopping", action);
		*doc = NULL;
		return -1;
	}
	/* aws_call names the action in its messages (after the cloud's code) */
	return aws_call(&ap->api, svc, mutating ? p->mutating : p->reads, f, doc, st) < 0 ? -1 : 0;
}

int aws_wait(struct aws_prov *ap, int64_t ns)
{
	int64_t end = clock_now(ap->clock) + ns;

	while (clock_now(ap->clock) < end) {
		int64_t step = end - clock_now(ap->clock);

		if (ap->cancel && atomic_load(ap->cancel))
			return -1;
		if (step > 200 * CLOCK_NS_PER_MS)
			step = 200 * CLOCK_NS_PER_MS;
		if (ap->clock->ops->sleep_until(ap->clock, clock_now(ap->clock) + step) != 0)
			return -1;
	}
	return ap->cancel && atomic_load(ap->cancel) ? -1 : 0;
}
