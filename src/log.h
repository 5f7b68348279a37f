/*
 * log: where the runtime's log lines go. A logger is passed to whoever
 * logs (no global sink); the default writes one line per message to
 * stderr with a UTC timestamp and the level. Messages never carry secrets.
 */
#ifndef LUASCALE_LOG_H
#define LUASCALE_LOG_H

#include <stdint.h>

enum log_level {
	LOG_DEBUG,
	LOG_INFO,
	LOG_WARN,
	LOG_ERROR,
};

struct logger {
	/* 'msg' is one line without a trailing newline; 'wall' unix seconds. */
	void (*write)(void *ctx, enum log_level level, int64_t wall, const char *msg);
	void *ctx;
	enum log_level min_level;
};

/* A logger writing to stderr ("2026-11-30T10:00:00Z info  message"). */
struct logger log_stderr(enum log_level min_level);

/* Formats and hands one line to 'l' (NULL: dropped). 'wall' is the time to
 * stamp it with (from the caller's clock, real or virtual). */
void log_at(const struct logger *l, enum log_level level, int64_t wall, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

const char *log_level_str(enum log_level level);

#endif
