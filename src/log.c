/*
 * log: formatting of log lines and the stderr sink. Every line is one line:
 * control characters and bytes that are not UTF-8 in a message (a node
 * name, a policy's reason or print output) are escaped here, so nothing a
 * message carries can start a forged line or drive the terminal.
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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
	struct logger l = {stderr_write, NULL, min_level};

	return l;
}

void log_at(const struct logger *l, enum log_level level, int64_t wall, const char *fmt, ...)
{
	char msg[1024], line[4 * sizeof(msg)];
	va_list ap;
	int n;

	if (!l || !l->write || level < l->min_level)
		return;
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	log_escape(msg, strnlen(msg, sizeof(msg)), line, sizeof(line));
	l->write(l->ctx, level, wall, line);
}
