/*
 * log: formatting of log lines, the stderr text sink and the JSON sink. Every line is one line:
 * control characters and bytes that are not UTF-8 in a message (a node
 * name, a policy's reason or print output) are escaped here, so nothing a
 * message carries can start a forged line or drive the terminal.
 */
#include "log.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
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

/* How byte run 'p' (of 'left' bytes, NUL-terminated or not) is written:
 * fills 'esc' with its escape and returns 0, or returns the length of a
 * sequence that passes as it is. */
static size_t classify(const unsigned char *p, size_t left, char esc[8])
{
	size_t n;
	char tmp[5] = {0};

	switch (*p) {
	case '\n': memcpy(esc, "\\n", 3); return 0;
	case '\r': memcpy(esc, "\\r", 3); return 0;
	case '\t': memcpy(esc, "\\t", 3); return 0;
	default: break;
	}
	if (*p < 0x20 || *p == 0x7f) {
		snprintf(esc, 8, "\\x%02x", *p);
		return 0;
	}
	if (*p < 0x80)
		return 1;
	memcpy(tmp, p, left < 4 ? left : 4);
	n = buf_utf8_seq(tmp);
	/* C1 controls (U+0080..U+009F) steer terminals as ESC does */
	if (n == 0 || (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)) {
		snprintf(esc, 8, "\\x%02x", *p);
		return 0;
	}
	return n;
}

size_t log_escape(const char *in, size_t len, char *out, size_t outlen)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t i = 0, o = 0;

	if (!outlen)
		return 0;
	while (i < len) {
		char esc[8];
		size_t n = classify(p + i, len - i, esc);
		const char *src = n ? (const char *)p + i : esc;
		size_t m = n ? n : strlen(esc);

		if (o + m >= outlen)
			break;
		memcpy(out + o, src, m);
		o += m;
		i += n ? n : 1;
	}
	out[o] = '\0';
	return o;
}

void log_fwrite_escaped(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		char esc[8];
		size_t n = classify(p + i, len - i, esc);

		if (n == 0) {
			fputs(esc, f);
			i++;
		} else {
			fwrite(p + i, 1, n, f);
			i += n;
		}
	}
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
	struct logger l = {stderr_write, NULL, min_level, NULL};

	return l;
}

int log_format_parse(const char *s, enum log_format *out)
{
	if (s && strcmp(s, "text") == 0) {
		*out = LOG_FORMAT_TEXT;
		return 0;
	}
	if (s && strcmp(s, "json") == 0) {
		*out = LOG_FORMAT_JSON;
		return 0;
	}
	return -1;
}

/* Whether field key 'k' would clash with a key every line has. */
static bool fixed_key(const char *k)
{
	return strcmp(k, "time") == 0 || strcmp(k, "level") == 0 || strcmp(k, "msg") == 0;
}

int log_json_format(struct buf *b, const struct log_record *r, int64_t real_ms)
{
	char ts[40];
	int ms = 0;
	size_t i;

	/* the milliseconds of the real clock, when it is within the second
	 * the caller stamped (a virtual clock's lines get .000) */
	if (real_ms >= 0 && real_ms / 1000 == r->wall)
		ms = (int)(real_ms % 1000);
	model_format_time(r->wall, ts, sizeof(ts));
	if (strlen(ts) == 20 && ts[19] == 'Z')
		snprintf(ts + 19, sizeof(ts) - 19, ".%03dZ", ms);
	buf_puts(b, "{\"time\":");
	buf_json_string(b, ts);
	buf_puts(b, ",\"level\":");
	buf_json_string(b, log_level_str(r->level));
	buf_puts(b, ",\"msg\":");
	buf_json_string(b, r->msg);
	for (i = 0; i < r->n_fields; i++) {
		const struct log_field *f = &r->fields[i];

		if (!f->key || !f->key[0] || !f->value || !f->value[0])
			continue;
		buf_puts(b, ",");
		if (fixed_key(f->key)) {
			struct buf k = BUF_INIT;

			buf_printf(&k, "field.%s", f->key);
			buf_json_string(b, k.data ? k.data : "field");
			buf_free(&k);
		} else {
			buf_json_string(b, f->key);
		}
		buf_puts(b, ":");
		buf_json_string(b, f->value);
	}
	return buf_puts(b, "}");
}

static void json_write(void *ctx, const struct log_record *r)
{
	FILE *f = ctx ? ctx : stderr;
	struct buf b = BUF_INIT;
	struct timespec now;
	int64_t real_ms = -1;

	if (clock_gettime(CLOCK_REALTIME, &now) == 0)
		real_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
	if (log_json_format(&b, r, real_ms) == 0 && b.data) {
		buf_append(&b, "\n", 1);
		/* one write per line: lines of two threads never interleave */
		if (!b.oom)
			fwrite(b.data, 1, b.len, f);
	}
	buf_free(&b);
}

struct logger log_json(enum log_level min_level, FILE *f)
{
	struct logger l = {NULL, f, min_level, json_write};

	return l;
}

struct logger log_for_format(enum log_format format, enum log_level min_level)
{
	return format == LOG_FORMAT_JSON ? log_json(min_level, NULL) : log_stderr(min_level);
}

static void vlog(const struct logger *l, enum log_level level, int64_t wall,
		 const struct log_field *fields, size_t n_fields, const char *fmt, va_list ap)
{
	char small[1024], *msg = small, *line = NULL;
	va_list ap2;
	int n;

	if (!l || (!l->write && !l->write_record) || level < l->min_level)
		return;
	va_copy(ap2, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n < 0) {
		va_end(ap2);
		return;
	}
	if ((size_t)n >= sizeof(small)) {
		/* a long message (a policy's print, a cloud's error) is kept whole */
		msg = malloc((size_t)n + 1);
		if (!msg) {
			va_end(ap2);
			return;
		}
		vsnprintf(msg, (size_t)n + 1, fmt, ap2);
	}
	va_end(ap2);
	if (l->write_record) {
		struct log_record r = {level, wall, msg, strlen(msg), fields, n_fields};

		l->write_record(l->ctx, &r);
	} else {
		size_t len = strlen(msg);

		line = malloc(4 * len + 1);
		if (line) {
			log_escape(msg, len, line, 4 * len + 1);
			l->write(l->ctx, level, wall, line);
		}
	}
	free(line);
	if (msg != small)
		free(msg);
}

void log_at(const struct logger *l, enum log_level level, int64_t wall, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(l, level, wall, NULL, 0, fmt, ap);
	va_end(ap);
}

void log_fields(const struct logger *l, enum log_level level, int64_t wall,
		const struct log_field *fields, size_t n_fields, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(l, level, wall, fields, n_fields, fmt, ap);
	va_end(ap);
}
