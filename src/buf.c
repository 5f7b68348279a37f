/*
 * buf: growable byte buffer with printf and JSON-string helpers, and the
 * one capped reader of the files luascale is given (configs, scenarios,
 * policies, state files): regular files only.
 */
#include "buf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Length of the well-formed UTF-8 sequence at 'p' (1-4), or 0 when the
 * bytes there are not one (stray continuation, overlong, surrogate, past
 * U+10FFFF, truncated). */
static size_t utf8_seq(const unsigned char *p)
{
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		return (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (p[0] >= 0xe0 && p[0] <= 0xef) {
		if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] > 0x9f))
			return 0;
		return 3;
	}
	if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
			return 0;
		if ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] > 0x8f))
			return 0;
		return 4;
	}
	return 0;
}

size_t buf_utf8_seq(const char *s)
{
	return utf8_seq((const unsigned char *)s);
}

int buf_json_string(struct buf *b, const char *s)
{
	const unsigned char *p;
	size_t n;

	buf_append(b, "\"", 1);
	for (p = (const unsigned char *)(s ? s : ""); *p; p += n) {
		n = 1;
		switch (*p) {
		case '"': buf_append(b, "\\\"", 2); break;
		case '\\': buf_append(b, "\\\\", 2); break;
		case '\n': buf_append(b, "\\n", 2); break;
		case '\r': buf_append(b, "\\r", 2); break;
		case '\t': buf_append(b, "\\t", 2); break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				buf_printf(b, "\\u%04x", *p);
			} else if ((n = utf8_seq(p)) == 0) {
				/* not UTF-8: JSON text must be, so the byte becomes U+FFFD */
				buf_append(b, "\\ufffd", 6);
				n = 1;
			} else {
				buf_append(b, p, n);
			}
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

FILE *buf_fopen_regular(const char *path, struct errbuf *err)
{
	struct stat st;
	FILE *f;
	int fd, flags;

	/* O_NONBLOCK: opening a FIFO without a writer must not wait for one */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		errbuf_set(err, "cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		errbuf_set(err, "cannot read %s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		errbuf_set(err, "cannot read %s: %s, not a regular file; give the path of a file",
			   path, S_ISDIR(st.st_mode) ? "a directory" :
			   S_ISFIFO(st.st_mode) ? "a pipe or FIFO" :
			   S_ISCHR(st.st_mode) ? "a character device" :
			   S_ISSOCK(st.st_mode) ? "a socket" :
			   S_ISBLK(st.st_mode) ? "a block device" : "something else");
		goto fail;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		errbuf_set(err, "cannot read %s: %s", path, strerror(errno));
		goto fail;
	}
	f = fdopen(fd, "rb");
	if (!f) {
		errbuf_set(err, "cannot read %s: %s", path, strerror(errno));
		goto fail;
	}
	return f;
fail:
	close(fd);
	return NULL;
}

int buf_read_file(struct buf *b, const char *path, size_t max, struct errbuf *err)
{
	size_t start = b->len, n;
	char chunk[16384];
	FILE *f = buf_fopen_regular(path, err);
	int rc = -1;

	if (!f)
		return -1;
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

int buf_percent_encode(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_' || ch == '~') {
			buf_append(b, s, 1);
		} else {
			char e[3] = {'%', hex[ch >> 4], hex[ch & 15]};

			buf_append(b, e, 3);
		}
	}
	if (!b->data)
		buf_append(b, "", 0);
	return b->oom ? -1 : 0;
}
