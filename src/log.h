/*
 * log: where the runtime's log lines go. A logger is passed to whoever
 * logs (no global sink); the default writes one line per message to
 * stderr with a UTC timestamp and the level; log_json() writes one JSON
 * object a line instead, with an action's fields as keys of their own.
 * Messages never carry secrets and are never cut, whatever their length.
 * A text message is always one line: log_at() escapes control characters
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

/* One field of a structured line: "node", "group", "action", "reason",
 * "where"... Both borrowed for the call; a NULL or "" value is left out. */
struct log_field {
	const char *key;
	const char *value;
};

/* What a structured sink gets: the message as formatted (raw bytes, not
 * escaped: the sink escapes for its format) and the fields. */
struct log_record {
	enum log_level level;
	int64_t wall;                  /* unix seconds, from the caller's clock */
	const char *msg;
	size_t msg_len;
	const struct log_field *fields;
	size_t n_fields;
};

struct logger {
	/* 'msg' is one line without a trailing newline; 'wall' unix seconds.
	 * Gets the message only (the text format: fields are in the message). */
	void (*write)(void *ctx, enum log_level level, int64_t wall, const char *msg);
	void *ctx;
	enum log_level min_level;
	/* When set it takes every line instead of 'write', fields included. */
	void (*write_record)(void *ctx, const struct log_record *r);
};

/* A logger writing to stderr ("2026-11-30T10:00:00Z info  message"). */
struct logger log_stderr(enum log_level min_level);

/* The log formats: LOG_FORMAT_TEXT (log_stderr) or LOG_FORMAT_JSON. */
enum log_format {
	LOG_FORMAT_TEXT,
	LOG_FORMAT_JSON,
};

/* "text" or "json" into *out: 0, or -1 for anything else. */
int log_format_parse(const char *s, enum log_format *out);

/*
 * A logger writing one JSON object a line to 'f' (stderr when NULL):
 * {"time":"2026-11-30T10:00:00.123Z","level":"info","msg":"...", and one
 * key per field}. The milliseconds are the real clock's when it is within
 * the second stamped (else .000). Strings are valid JSON whatever the
 * bytes: control characters escaped, bytes that are not UTF-8 as U+FFFD.
 * A field named like a fixed key (time, level, msg) is written as
 * "field.<key>".
 */
struct logger log_json(enum log_level min_level, FILE *f);

/* The logger for 'format' (log_stderr or log_json on stderr). */
struct logger log_for_format(enum log_format format, enum log_level min_level);

/* Writes one record as the JSON sink does, to 'b' (no newline). 0 or -1 (OOM). */
struct buf;
int log_json_format(struct buf *b, const struct log_record *r, int64_t real_ms);

/* Formats and hands one line to 'l' (NULL: dropped), escaped as above.
 * 'wall' is the time to stamp it with (from the caller's clock, real or
 * virtual). */
void log_at(const struct logger *l, enum log_level level, int64_t wall, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * log_at() with fields: a structured sink (log_json) gets them as keys of
 * their own; the text sink gets the message alone, as log_at() writes it
 * (so the message should name the node, group and reason for people).
 * 'fields' may be NULL when 'n_fields' is 0.
 */
void log_fields(const struct logger *l, enum log_level level, int64_t wall,
		const struct log_field *fields, size_t n_fields, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

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
