/*
 * errbuf: the caller-provided error message every fallible function fills.
 * Owns nothing but a fixed buffer; messages are meant for a person to act on.
 */
#ifndef LUASCALE_ERRBUF_H
#define LUASCALE_ERRBUF_H

#include <stddef.h>

#define ERRBUF_MAX 512

struct errbuf {
	char msg[ERRBUF_MAX];
};

/* Sets the message (printf format). 'e' may be NULL. Always returns -1 so
 * callers can write `return errbuf_set(e, ...);`. */
int errbuf_set(struct errbuf *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Prepends "<prefix>: " to the existing message. 'e' may be NULL. Returns -1. */
int errbuf_prefix(struct errbuf *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
