/*
 * log: where the runtime's log lines go. A logger is passed to whoever
 * logs (no global sink); the default writes one line per message to
 * stderr with a UTC timestamp and the level; log_json() writes one JSON
 * object a line instead, with an action's fields as keys of their own.
 * Messages never carry secrets and are never cut, whatever their length.
 * A text message is always one line: log_at() escapes control characters
 * ("\n", "\x1b") and bytes that are not UTF-8 ("\xff") before any sink sees it.
 * The daemon's logger (log_for_format) never blocks its caller: lines go
 * into a bounded buffer that a thread of its own writes to stderr; what
 * does not fit is dropped, counted, and said in a line once there is room.
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

/*
 * The daemon's logger for 'format': the text or JSON lines of log_stderr
 * and log_json, through the process's asynchronous sink on stderr (fd 2,
 * started on the first call, 1 MiB buffered; see log_async_new). At exit
 * what is buffered is written for at most 2 s. When the sink cannot be
 * started (no memory, no thread) the synchronous log_stderr or log_json.
 */
struct logger log_for_format(enum log_format format, enum log_level min_level);

/*
 * One line ('len' bytes, its newline included) for stderr from a writer
 * that has no logger (a policy's print): through the process's sink when
 * log_for_format started it (never blocking; dropped and counted as a
 * logger's lines are), else written to stderr at once.
 */
void log_stderr_put(const char *line, size_t len);

/* Lines the process's stderr sink (log_for_format) dropped since it
 * started, its buffer full or the write failing; 0 before it starts.
 * Any thread. For the metric luascale_log_lines_dropped_total. */
uint64_t log_dropped_lines(void);

/*
 * An asynchronous sink: log calls copy their line into a buffer of
 * 'capacity' bytes and return; a thread of the sink's own writes the
 * buffer to 'fd' (borrowed, never closed; writes may block that thread,
 * never a caller). A line that does not fit whole is dropped and counted;
 * the next line that fits (or the writer, once the buffer is empty) is
 * preceded by "log: N lines dropped ..." (a warn line in the format of
 * the last log_async_logger()), so the gap shows where it was. A write
 * that fails (EPIPE, EBADF) drops its lines too. Returns the sink or NULL
 * with a message.
 */
struct errbuf;
struct log_async;
struct log_async *log_async_new(int fd, size_t capacity, struct errbuf *err);

/* A logger writing 'format' lines into 'a' (borrowed: it must outlive the
 * logger's use). */
struct logger log_async_logger(struct log_async *a, enum log_format format,
			       enum log_level min_level);

/* The lines 'a' dropped so far. Any thread. */
uint64_t log_async_dropped(struct log_async *a);

/* Waits until what 'a' holds is written, at most 'max_ms' real
 * milliseconds: 0 when written, -1 when the sink is still behind. */
int log_async_flush(struct log_async *a, int max_ms);

/* Writes what 'a' holds for at most 'max_ms', then stops its thread (what
 * is left then is lost) and frees. No logger of 'a' may be used after.
 * NULL is a no-op. */
void log_async_free(struct log_async *a, int max_ms);

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

/* Appends the 'len' bytes at 's' to 'b', escaped as log_escape() does.
 * 0, or -1 (out of memory). */
int log_buf_escaped(struct buf *b, const char *s, size_t len);

/* Writes the 'len' bytes at 's' to 'f', escaped as log_escape() does. */
void log_fwrite_escaped(FILE *f, const char *s, size_t len);

#endif
