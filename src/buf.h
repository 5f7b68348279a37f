/*
 * buf: a growable byte buffer for building text (JSON, reports, messages).
 * Owns its memory; buf_take() hands it to the caller.
 */
#ifndef LUASCALE_BUF_H
#define LUASCALE_BUF_H

#include <stddef.h>
#include <stdio.h>

#include "errbuf.h"

struct buf {
	char *data; /* always NUL-terminated when len > 0 or after any append */
	size_t len;
	size_t cap;
	int oom;    /* set once an allocation failed; further appends are no-ops */
};

#define BUF_INIT {NULL, 0, 0, 0}

/* Appends 'n' bytes. Returns 0, or -1 when out of memory (sticky in oom). */
int buf_append(struct buf *b, const void *data, size_t n);

/* Appends a NUL-terminated string. */
int buf_puts(struct buf *b, const char *s);

/* Appends printf-formatted text. */
int buf_printf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Appends 's' as a JSON string literal, quotes included. The result is
 * always valid JSON: control characters are escaped, and a byte that is
 * not part of well-formed UTF-8 becomes U+FFFD. */
int buf_json_string(struct buf *b, const char *s);

/* Length (1-4) of the well-formed UTF-8 sequence 's' starts with, or 0
 * when it starts with a byte that is not one. 's' is NUL-terminated. */
size_t buf_utf8_seq(const char *s);

/* Returns the contents ("" when empty; never NULL unless out of memory) and
 * leaves 'b' empty. The caller frees the result. */
char *buf_take(struct buf *b);

/*
 * Opens 'path' for reading when it is a regular file. Anything else (a
 * FIFO, which would block for a writer, a device, a directory, a socket) is
 * refused without blocking. Returns the stream (fclose it) or NULL with
 * "cannot read PATH: why" in 'err'.
 */
FILE *buf_fopen_regular(const char *path, struct errbuf *err);

/*
 * Appends the whole regular file at 'path' (see buf_fopen_regular), at most
 * 'max' bytes: more is an error, so a runaway file cannot take the memory.
 * Returns 0, or -1 with "cannot read PATH: why" or "PATH: larger than N
 * bytes" in 'err'; 'b' then holds what it held before.
 */
int buf_read_file(struct buf *b, const char *path, size_t max, struct errbuf *err);

/* Frees the contents and resets 'b'. */
/* Appends 's' (NULL: nothing) percent-encoded: every byte but the
 * unreserved A-Z a-z 0-9 - . _ ~ becomes %XX (space is %20), as URLs,
 * SigV4 and form bodies want it. Leaves b->data non-NULL. 0, or -1 (OOM). */
int buf_percent_encode(struct buf *b, const char *s);

void buf_free(struct buf *b);

#endif
