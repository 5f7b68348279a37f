/*
 * log: formatting of log lines and the stderr sink.
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>

#include "model.h"

const char *log_level_str(enum log_level level)
{
	switch (level) {
	case LOG_DEBUG: return "debug";
	case LOG_INFO: return "info";
	case LOG_WARN: return "warn";
	case LOG_ERROR: return "error";
	}
	return "?";
}

static void stderr_write(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	char ts[32];

	(void)ctx;
	model_format_time(wall, ts, sizeof(ts));
	fprintf(stderr, "%s %-5s %s\n", ts, log_level_str(level), msg);
}

struct logger log_stderr(enum log_level min_level)
{
	struct logger l = {stderr_write, NULL, min_level};

	return l;
}

void log_at(const struct logger *l, enum log_level level, int64_t wall, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!l || !l->write || level < l->min_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	l->write(l->ctx, level, wall, msg);
}
