/*
 * log: where the runtime's log lines go. A logger is passed to whoever
 * logs (no global sink); the default writes one line per message to
 * stderr with a UTC timestamp and the level. Messages never carry secrets.
 * A message is always one line: log_at() escapes control characters
 * ("\n", "\x1b") and bytes that are not UTF-8 ("\xff") before any sink sees it.
 */
#ifndef LUASCALE_LOG_H
#define LUASCALE_LOG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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

/* Formats and hands one line to 'l' (NULL: dropped), escaped as above.
 * 'wall' is the time to stamp it with (from the caller's clock, real or
 * virtual). */
void log_at(const struct logger *l, enum log_level level, int64_t wall, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

const char *log_level_str(enum log_level level);

/* Writes the 'len' bytes at 'in' to 'out' (NUL-terminated, at most
 * 'outlen' bytes with the NUL), escaped: \n \r \t, "\xHH" for other
 * control characters, DEL, C1 controls and bytes that are not UTF-8;
 * backslashes stay as they are. Stops before an escape that does not fit.
 * Returns the length written. An output of 4 * len + 1 bytes always fits. */
size_t log_escape(const char *in, size_t len, char *out, size_t outlen);

/* Writes the 'len' bytes at 's' to 'f', escaped as log_escape() does. */
void log_fwrite_escaped(FILE *f, const char *s, size_t len);

#endif
