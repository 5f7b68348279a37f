/*
 * log: formatting of log lines, the stderr text sink, the JSON sink and
 * the asynchronous sink the daemon logs through (a bounded buffer and a
 * writer thread, so a sink nobody drains never holds a caller). Every
 * line is one line: control characters and bytes that are not UTF-8 in a
 * message (a node name, a policy's reason or print output) are escaped
 * here, so nothing a message carries can start a forged line or drive
 * the terminal.
 */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "errbuf.h"
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

int log_buf_escaped(struct buf *b, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		char esc[8];
		size_t n = classify(p + i, len - i, esc);

		if (n == 0) {
			buf_puts(b, esc);
			i++;
		} else {
			buf_append(b, p + i, n);
			i += n;
		}
	}
	return b->oom ? -1 : 0;
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

/* The text sink's line, newline included. */
static int text_line(struct buf *b, enum log_level level, int64_t wall, const char *msg)
{
	char ts[32];

	model_format_time(wall, ts, sizeof(ts));
	return buf_printf(b, "%s %-5s %s\n", ts, log_level_str(level), msg);
}

static void stderr_write(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct buf b = BUF_INIT;

	(void)ctx;
	/* one write per line: lines of two threads never interleave */
	if (text_line(&b, level, wall, msg) == 0 && !b.oom)
		fwrite(b.data, 1, b.len, stderr);
	buf_free(&b);
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

static int64_t real_ms_now(void)
{
	struct timespec now;

	if (clock_gettime(CLOCK_REALTIME, &now) != 0)
		return -1;
	return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* The JSON sink's line, newline included. */
static int json_line(struct buf *b, const struct log_record *r)
{
	if (log_json_format(b, r, real_ms_now()) < 0)
		return -1;
	return buf_append(b, "\n", 1);
}

static void json_write(void *ctx, const struct log_record *r)
{
	FILE *f = ctx ? ctx : stderr;
	struct buf b = BUF_INIT;

	/* one write per line: lines of two threads never interleave */
	if (json_line(&b, r) == 0 && !b.oom)
		fwrite(b.data, 1, b.len, f);
	buf_free(&b);
}

struct logger log_json(enum log_level min_level, FILE *f)
{
	struct logger l = {NULL, f, min_level, json_write};

	return l;
}

/* ---- the asynchronous sink ---- */

#define ASYNC_CHUNK 65536             /* written in one write() at most */
#define STDERR_CAPACITY ((size_t)1 << 20)
#define EXIT_FLUSH_MS 2000
#define NOTICE_MAX 320

struct log_async {
	int fd;                  /* borrowed */
	pthread_mutex_t mu;
	pthread_cond_t cv;       /* CLOCK_MONOTONIC; lines came, a chunk went, the writer ended */
	char *ring;              /* 'cap' bytes; under mu, as the fields to 'exited' */
	size_t cap, head, used;  /* 'head': the oldest byte */
	size_t in_flight;        /* taken by the writer, not written yet */
	uint64_t pending;        /* dropped since the last notice */
	bool stop, exited;
	atomic_bool give_up;     /* log_async_free's time is up: the writer ends */
	int wake[2];             /* ends the writer's wait on the sink */
	_Atomic uint64_t dropped;
	atomic_int format;       /* of the notice: the last logger's */
	pthread_t thread;
	char chunk[ASYNC_CHUNK]; /* the writer's */
};

/* "log: N lines dropped" as a warn line of the current format. */
static size_t notice(struct log_async *a, uint64_t n, char *out, size_t len)
{
	char ts[40];
	int64_t ms = real_ms_now();
	int w;

	model_format_time(ms >= 0 ? ms / 1000 : (int64_t)time(NULL), ts, sizeof(ts));
	if (atomic_load(&a->format) == LOG_FORMAT_JSON) {
		if (strlen(ts) == 20 && ts[19] == 'Z')
			snprintf(ts + 19, sizeof(ts) - 19, ".%03dZ", ms >= 0 ? (int)(ms % 1000) : 0);
		w = snprintf(out, len, "{\"time\":\"%s\",\"level\":\"warn\",\"msg\":\"log: %llu lines "
			     "dropped (the log sink was not taking them)\",\"dropped\":\"%llu\"}\n", ts,
			     (unsigned long long)n, (unsigned long long)n);
	} else {
		w = snprintf(out, len, "%s %-5s log: %llu lines dropped (the log sink was not taking them)\n",
			     ts, log_level_str(LOG_WARN), (unsigned long long)n);
	}
	return w > 0 && (size_t)w < len ? (size_t)w : 0;
}

/* Appends to the ring (the caller checked the room). Under mu. */
static void ring_put(struct log_async *a, const char *p, size_t n)
{
	size_t tail = (a->head + a->used) % a->cap, first = a->cap - tail < n ? a->cap - tail : n;

	memcpy(a->ring + tail, p, first);
	memcpy(a->ring, p + first, n - first);
	a->used += n;
}

/* Takes up to 'max' bytes from the ring into 'out'. Under mu. */
static size_t ring_take(struct log_async *a, char *out, size_t max)
{
	size_t n = a->used < max ? a->used : max;
	size_t first = a->cap - a->head < n ? a->cap - a->head : n;

	memcpy(out, a->ring + a->head, first);
	memcpy(out + first, a->ring, n - first);
	a->head = (a->head + n) % a->cap;
	a->used -= n;
	return n;
}

/* One line into the buffer, or counted as dropped. Never waits but for
 * the lock, which nobody holds across a write. */
static void async_put(struct log_async *a, const char *line, size_t len)
{
	pthread_mutex_lock(&a->mu);
	if (a->pending) {
		char nb[NOTICE_MAX];
		size_t nl = notice(a, a->pending, nb, sizeof(nb));

		if (nl + len <= a->cap - a->used) {
			ring_put(a, nb, nl);
			a->pending = 0;
		}
	}
	if (!a->pending && len <= a->cap - a->used) {
		ring_put(a, line, len);
		pthread_cond_broadcast(&a->cv);
	} else {
		a->pending++;
		atomic_fetch_add(&a->dropped, 1);
	}
	pthread_mutex_unlock(&a->mu);
}

/* Writes 'n' bytes to the sink; the bytes written. The writer waits in
 * poll() with the wake pipe beside the sink, so log_async_free can end
 * the wait, and writes at most PIPE_BUF bytes once the sink is writable
 * (a pipe then takes them without blocking). The sink's flags are left
 * as they are: the descriptor is shared with whoever else writes to it. */
static size_t write_out(struct log_async *a, const char *p, size_t n)
{
	size_t done = 0;

	while (done < n && !atomic_load(&a->give_up)) {
		struct pollfd pf[2] = {{a->fd, POLLOUT, 0}, {a->wake[0], POLLIN, 0}};
		size_t want = n - done < PIPE_BUF ? n - done : PIPE_BUF;
		ssize_t w;

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents) {
			char drain[64];

			while (read(a->wake[0], drain, sizeof(drain)) > 0)
				;
			continue;
		}
		if (pf[0].revents & POLLNVAL)
			break;
		if (!(pf[0].revents & (POLLOUT | POLLERR | POLLHUP)))
			continue;
		w = write(a->fd, p + done, want);
		if (w > 0)
			done += (size_t)w;
		else if (w < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		else
			break; /* EPIPE, EBADF, ENOSPC: what is left is lost */
	}
	return done;
}

static void *writer_thread(void *arg)
{
	struct log_async *a = arg;

	pthread_mutex_lock(&a->mu);
	for (;;) {
		size_t n, done;

		if (atomic_load(&a->give_up)) {
			break;
		} else if (a->used) {
			n = ring_take(a, a->chunk, sizeof(a->chunk));
		} else if (a->pending) {
			/* drained: the gap is said after what came before it */
			n = notice(a, a->pending, a->chunk, sizeof(a->chunk));
			a->pending = 0;
		} else if (a->stop || atomic_load(&a->give_up)) {
			break;
		} else {
			pthread_cond_wait(&a->cv, &a->mu);
			continue;
		}
		a->in_flight = n;
		pthread_mutex_unlock(&a->mu);
		done = write_out(a, a->chunk, n);
		if (done < n) {
			uint64_t lost = 0;

			for (size_t i = done; i < n; i++)
				lost += a->chunk[i] == '\n';
			atomic_fetch_add(&a->dropped, lost);
		}
		pthread_mutex_lock(&a->mu);
		a->in_flight = 0;
		pthread_cond_broadcast(&a->cv);
	}
	a->exited = true;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

struct log_async *log_async_new(int fd, size_t capacity, struct errbuf *err)
{
	struct log_async *a;
	pthread_condattr_t ca;
	sigset_t all, old;
	int rc;

	if (fd < 0 || capacity < NOTICE_MAX) {
		errbuf_set(err, "log sink: a descriptor and at least %d bytes of buffer", NOTICE_MAX);
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a || !(a->ring = malloc(capacity))) {
		free(a);
		errbuf_set(err, "log sink: out of memory");
		return NULL;
	}
	if (pipe2(a->wake, O_NONBLOCK | O_CLOEXEC) < 0) {
		errbuf_set(err, "log sink: cannot make a pipe: %s", strerror(errno));
		free(a->ring);
		free(a);
		return NULL;
	}
	a->fd = fd;
	a->cap = capacity;
	atomic_init(&a->give_up, false);
	atomic_init(&a->dropped, 0);
	atomic_init(&a->format, LOG_FORMAT_TEXT);
	pthread_mutex_init(&a->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&a->cv, &ca);
	pthread_condattr_destroy(&ca);
	/* the writer takes no signal: they are the process's other threads' */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&a->thread, NULL, writer_thread, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		pthread_cond_destroy(&a->cv);
		pthread_mutex_destroy(&a->mu);
		close(a->wake[0]);
		close(a->wake[1]);
		free(a->ring);
		free(a);
		errbuf_set(err, "log sink: cannot create its thread: %s", strerror(rc));
		return NULL;
	}
	return a;
}

static void async_text_write(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct buf b = BUF_INIT;

	if (text_line(&b, level, wall, msg) == 0 && !b.oom)
		async_put(ctx, b.data, b.len);
	else
		atomic_fetch_add(&((struct log_async *)ctx)->dropped, 1);
	buf_free(&b);
}

static void async_json_write(void *ctx, const struct log_record *r)
{
	struct buf b = BUF_INIT;

	if (json_line(&b, r) == 0 && !b.oom)
		async_put(ctx, b.data, b.len);
	else
		atomic_fetch_add(&((struct log_async *)ctx)->dropped, 1);
	buf_free(&b);
}

struct logger log_async_logger(struct log_async *a, enum log_format format,
			       enum log_level min_level)
{
	struct logger l = {NULL, a, min_level, NULL};

	atomic_store(&a->format, (int)format);
	if (format == LOG_FORMAT_JSON)
		l.write_record = async_json_write;
	else
		l.write = async_text_write;
	return l;
}

uint64_t log_async_dropped(struct log_async *a)
{
	return atomic_load(&a->dropped);
}

/* The CLOCK_MONOTONIC time 'ms' from now. */
static struct timespec after_ms(int ms)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

int log_async_flush(struct log_async *a, int max_ms)
{
	struct timespec until = after_ms(max_ms);
	int rc = 0;

	pthread_mutex_lock(&a->mu);
	while ((a->used || a->in_flight || a->pending) && !a->exited && rc == 0)
		rc = pthread_cond_timedwait(&a->cv, &a->mu, &until);
	rc = a->used || a->in_flight || a->pending ? -1 : 0;
	pthread_mutex_unlock(&a->mu);
	return rc;
}

/* Waits for the writer's end until 'until'; whether it ended. */
static bool wait_exited(struct log_async *a, const struct timespec *until)
{
	int rc = 0;
	bool ended;

	pthread_mutex_lock(&a->mu);
	while (!a->exited && rc == 0)
		rc = pthread_cond_timedwait(&a->cv, &a->mu, until);
	ended = a->exited;
	pthread_mutex_unlock(&a->mu);
	return ended;
}

void log_async_free(struct log_async *a, int max_ms)
{
	struct timespec until;

	if (!a)
		return;
	until = after_ms(max_ms);
	pthread_mutex_lock(&a->mu);
	a->stop = true;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	if (!wait_exited(a, &until)) {
		/* the sink is not taking what is left: it is lost */
		ssize_t w;

		atomic_store(&a->give_up, true);
		do {
			w = write(a->wake[1], "x", 1);
		} while (w < 0 && errno == EINTR);
		until = after_ms(max_ms);
		if (!wait_exited(a, &until)) {
			/* inside a write that does not end (another writer filled
			 * the pipe between poll and write): left to the process's end */
			pthread_detach(a->thread);
			return;
		}
	}
	pthread_join(a->thread, NULL);
	pthread_cond_destroy(&a->cv);
	pthread_mutex_destroy(&a->mu);
	close(a->wake[0]);
	close(a->wake[1]);
	free(a->ring);
	free(a);
}

/* The process's sink on stderr: one, as stderr is one. Set once. */
static _Atomic(struct log_async *) stderr_sink;
static pthread_once_t stderr_once = PTHREAD_ONCE_INIT;

static void stderr_flush_at_exit(void)
{
	struct log_async *a = atomic_load(&stderr_sink);

	if (a)
		log_async_flush(a, EXIT_FLUSH_MS);
}

static void stderr_sink_start(void)
{
	struct log_async *a = log_async_new(STDERR_FILENO, STDERR_CAPACITY, NULL);

	if (a && atexit(stderr_flush_at_exit) == 0)
		atomic_store(&stderr_sink, a);
	else
		log_async_free(a, 0);
}

struct logger log_for_format(enum log_format format, enum log_level min_level)
{
	struct log_async *a;

	pthread_once(&stderr_once, stderr_sink_start);
	a = atomic_load(&stderr_sink);
	if (!a)
		return format == LOG_FORMAT_JSON ? log_json(min_level, NULL) : log_stderr(min_level);
	return log_async_logger(a, format, min_level);
}

void log_stderr_put(const char *line, size_t len)
{
	struct log_async *a = atomic_load(&stderr_sink);

	if (a)
		async_put(a, line, len);
	else
		fwrite(line, 1, len, stderr);
}

uint64_t log_dropped_lines(void)
{
	struct log_async *a = atomic_load(&stderr_sink);

	return a ? log_async_dropped(a) : 0;
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
