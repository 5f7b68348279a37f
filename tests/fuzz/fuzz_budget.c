/*
 * fuzz_budget: budget_parse() on "NODES\nSCHEDULE\nDURATION" after 8 bytes
 * that pick a time within 200 years of 1970; what parses is checked with
 * budget_active() at that time against a scan of every minute of the
 * window with the C library's calendar (gmtime_r), and budget_nodes() and
 * budget_describe() run on it.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/budget.h"
#include "fuzz.h"

/* Whether cron 'c' fires at 't', by gmtime_r (not budget.c's calendar). */
static int fires_at(const struct budget_cron *c, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	int dom, dow;

	if (t % 60 || !gmtime_r(&tt, &tm))
		return 0;
	dom = c->doms >> tm.tm_mday & 1;
	dow = c->dows >> tm.tm_wday & 1;
	return (c->minutes >> tm.tm_min & 1) && (c->hours >> tm.tm_hour & 1) &&
	       (c->months >> (tm.tm_mon + 1) & 1) &&
	       (c->dom_star || c->dow_star ? dom && dow : dom || dow);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const int64_t scan_max = 3 * 86400; /* longer windows: only "a fire seen means active" */
	struct budget_spec spec = {0};
	struct disruption_budget b;
	struct errbuf err = {{0}};
	char *text, *nl, desc[256];
	uint64_t u = 0;
	int64_t now, t, lim;
	int got, want = 0;
	size_t i;

	if (size < 8 || size > 1024)
		return 0;
	for (i = 0; i < 8; i++)
		u = u << 8 | data[i];
	now = (int64_t)(u % (400ULL * 365 * 86400)) - 200LL * 365 * 86400;
	text = malloc(size - 8 + 1);
	if (!text)
		return 0;
	memcpy(text, data + 8, size - 8);
	text[size - 8] = '\0';
	spec.nodes = text;
	if ((nl = strchr(text, '\n'))) {
		*nl = '\0';
		spec.schedule = nl + 1;
		if ((nl = strchr(nl + 1, '\n'))) {
			*nl = '\0';
			spec.duration = nl + 1;
		}
	}
	if (budget_parse(&spec, &b, &err) < 0) {
		if (!err.msg[0])
			abort(); /* a failure must say why */
		free(text);
		return 0;
	}
	got = budget_active(&b, now);
	if (b.scheduled) {
		lim = b.duration_s < scan_max ? b.duration_s : scan_max;
		for (t = now - (now % 60 + 60) % 60; t > now - lim && !want; t -= 60)
			want = fires_at(&b.cron, t);
		if ((b.duration_s <= scan_max && got != want) || (want && !got))
			abort();
	} else if (!got) {
		abort(); /* no schedule: always active */
	}
	if (budget_nodes(&b, 1000) < 0 || budget_nodes(&b, 1000) > (b.percent ? 1000 : b.nodes))
		abort();
	budget_describe(&b, desc, sizeof(desc));
	free(text);
	return 0;
}
