/*
 * errbuf: formatting of error messages into a caller's buffer.
 */
#include "errbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int errbuf_set(struct errbuf *e, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return -1;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int errbuf_prefix(struct errbuf *e, const char *fmt, ...)
{
	char prefix[ERRBUF_MAX];
	char old[ERRBUF_MAX];
	va_list ap;

	if (!e)
		return -1;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, e->msg, sizeof(old));
	old[sizeof(old) - 1] = '\0';
	{
		size_t n = strlen(prefix), m = strlen(old);

		/* "<prefix>: <old>", cut at the buffer's end */
		if (n > sizeof(e->msg) - 1)
			n = sizeof(e->msg) - 1;
		memcpy(e->msg, prefix, n);
		if (n + 2 < sizeof(e->msg)) {
			memcpy(e->msg + n, ": ", 2);
			n += 2;
		}
		if (m > sizeof(e->msg) - 1 - n)
			m = sizeof(e->msg) - 1 - n;
		memcpy(e->msg + n, old, m);
		e->msg[n + m] = '\0';
	}
	return -1;
}
