/*
 * buf: growable byte buffer with printf and JSON-string helpers.
 */
#include "buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int buf_grow(struct buf *b, size_t extra)
{
	size_t need, cap;
	char *d;

	if (b->oom)
		return -1;
	if (extra > (size_t)-1 - b->len - 1)
		goto fail;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > ((size_t)-1) / 2 ? need : cap * 2;
	d = realloc(b->data, cap);
	if (!d)
		goto fail;
	b->data = d;
	b->cap = cap;
	return 0;
fail:
	b->oom = 1;
	return -1;
}

int buf_append(struct buf *b, const void *data, size_t n)
{
	if (buf_grow(b, n) < 0)
		return -1;
	if (n)
		memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || buf_grow(b, (size_t)n) < 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

int buf_json_string(struct buf *b, const char *s)
{
	const unsigned char *p;

	buf_append(b, "\"", 1);
	for (p = (const unsigned char *)(s ? s : ""); *p; p++) {
		switch (*p) {
		case '"': buf_append(b, "\\\"", 2); break;
		case '\\': buf_append(b, "\\\\", 2); break;
		case '\n': buf_append(b, "\\n", 2); break;
		case '\r': buf_append(b, "\\r", 2); break;
		case '\t': buf_append(b, "\\t", 2); break;
		default:
			if (*p < 0x20)
				buf_printf(b, "\\u%04x", *p);
			else
				buf_append(b, p, 1);
		}
	}
	return buf_append(b, "\"", 1);
}

char *buf_take(struct buf *b)
{
	char *d;

	if (b->oom) {
		buf_free(b);
		return NULL;
	}
	d = b->data ? b->data : strdup("");
	b->data = NULL;
	b->len = b->cap = 0;
	return d;
}

void buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	b->oom = 0;
}

int buf_read_file(struct buf *b, const char *path, size_t max, struct errbuf *err)
{
	size_t start = b->len, n;
	char chunk[16384];
	FILE *f = fopen(path, "rb");
	int rc = -1;

	if (!f)
		return errbuf_set(err, "cannot read %s: %s", path, strerror(errno));
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (b->len - start + n > max) {
			errbuf_set(err, "%s: larger than %zu bytes", path, max);
			goto out;
		}
		if (buf_append(b, chunk, n) < 0) {
			errbuf_set(err, "cannot read %s: out of memory", path);
			goto out;
		}
	}
	if (ferror(f)) {
		errbuf_set(err, "cannot read %s: %s", path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	fclose(f);
	if (rc < 0 && !b->oom) {
		b->len = start;
		if (b->data)
			b->data[start] = '\0';
	}
	return rc;
}
