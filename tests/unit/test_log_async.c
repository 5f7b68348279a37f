/*
 * Tests for log.c's asynchronous sink: a sink nobody drains (a pipe never
 * read) never blocks a log call; what does not fit is dropped and counted,
 * and once the sink drains a "N lines dropped" line stands where the
 * lines went missing; what is buffered is written at the end, within a
 * bound even when the sink stays blocked. The daemon's logger
 * (log_for_format) goes through such a sink on stderr.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"

/* How long a read waits for the writer thread before the test fails
 * (real time; a bound for a broken writer, never a measurement). */
#define GENEROUS_MS 20000
#define LINES 100000

/* The watchdog: a log call that blocks ends the test with where it was. */
static volatile sig_atomic_t logged;
static int report_fd = 1;

static void on_alarm(int sig)
{
	char msg[96];
	int n = snprintf(msg, sizeof(msg), "\nFAIL: a log call blocked: %d lines logged\n", (int)logged);

	(void)sig;
	if (n > 0 && write(report_fd, msg, (size_t)n) < 0)
		_exit(2);
	_exit(1);
}

static void watchdog(int seconds)
{
	signal(SIGALRM, on_alarm);
	alarm((unsigned)seconds);
}

/* A pipe whose buffer is 64 KiB. */
static void small_pipe(int p[2])
{
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	fcntl(p[1], F_SETPIPE_SZ, 65536);
}

/* What a reader of the sink saw: whole lines, and the dropped counts the
 * notices gave. */
struct seen {
	struct buf partial;
	uint64_t lines, notices, dropped, last_n;
	char first_notice[512];
	int bad;
	char bad_line[256];
};

static void take_line(struct seen *s, const char *ln)
{
	const char *d = strstr(ln, "lines dropped");
	unsigned long long n;

	if (d) {
		const char *p = d;

		while (p > ln && p[-1] == ' ')
			p--;
		while (p > ln && p[-1] >= '0' && p[-1] <= '9')
			p--;
		if (sscanf(p, "%llu lines dropped", &n) != 1) {
			s->bad++;
			snprintf(s->bad_line, sizeof(s->bad_line), "%s", ln);
			return;
		}
		if (!s->notices++)
			snprintf(s->first_notice, sizeof(s->first_notice), "%s", ln);
		s->dropped += n;
		return;
	}
	if (!strstr(ln, "line ") || !strstr(ln, " end")) {
		/* a line cut or merged with another */
		s->bad++;
		snprintf(s->bad_line, sizeof(s->bad_line), "%s", ln);
		return;
	}
	s->lines++;
}

/* Reads 'fd' until lines + dropped reach 'want'; fails with what it saw
 * when nothing comes for GENEROUS_MS. */
static void read_until(int fd, struct seen *s, uint64_t want)
{
	while (s->lines + s->dropped < want) {
		struct pollfd p = {fd, POLLIN, 0};
		char chunk[65536];
		ssize_t n;
		char *start, *nl;

		if (poll(&p, 1, GENEROUS_MS) <= 0)
			fail_msg("the sink got %llu lines and notices of %llu dropped, of %llu",
				 (unsigned long long)s->lines, (unsigned long long)s->dropped,
				 (unsigned long long)want);
		n = read(fd, chunk, sizeof(chunk));
		if (n <= 0)
			fail_msg("the sink's pipe ended after %llu lines", (unsigned long long)s->lines);
		buf_append(&s->partial, chunk, (size_t)n);
		start = s->partial.data;
		while ((nl = memchr(start, '\n', s->partial.len - (size_t)(start - s->partial.data)))) {
			*nl = '\0';
			take_line(s, start);
			start = nl + 1;
		}
		s->partial.len -= (size_t)(start - s->partial.data);
		memmove(s->partial.data, start, s->partial.len);
	}
}

/* 100,000 lines into a 64 KiB pipe nobody reads: every call returns, the
 * excess is counted; once the pipe is read, every line is either there
 * whole or counted by a notice. */
static void test_blocked_sink_never_blocks(void **state)
{
	int p[2];
	struct errbuf err = {""};
	struct log_async *a;
	struct logger l;
	struct seen s;
	uint64_t dropped, notices;

	(void)state;
	small_pipe(p);
	a = log_async_new(p[1], 256 << 10, &err);
	assert_non_null(a);
	l = log_async_logger(a, LOG_FORMAT_TEXT, LOG_INFO);
	watchdog(120);
	for (logged = 0; logged < LINES; logged++)
		log_at(&l, LOG_INFO, 1764496800, "line %d of the reconcile loop, padded to a usual length end",
		       (int)logged);
	alarm(0);
	dropped = log_async_dropped(a);
	if (dropped == 0 || dropped >= LINES)
		fail_msg("%llu of %d lines dropped with a 64 KiB pipe and a 256 KiB buffer",
			 (unsigned long long)dropped, LINES);
	/* at most the buffer and the pipe were taken (a line is > 80 bytes) */
	assert_true(LINES - dropped <= ((256 << 10) + 65536 + 65536) / 80);

	memset(&s, 0, sizeof(s));
	read_until(p[0], &s, LINES);
	if (s.bad || s.lines + s.dropped != LINES || s.dropped != dropped || !s.notices)
		fail_msg("read %llu lines, %llu notices of %llu dropped (counter %llu), %d bad (\"%s\")",
			 (unsigned long long)s.lines, (unsigned long long)s.notices,
			 (unsigned long long)s.dropped, (unsigned long long)dropped, s.bad, s.bad_line);
	assert_non_null(strstr(s.first_notice, " warn  log: "));
	/* drained: a new line goes through, with no new notice */
	notices = s.notices;
	log_at(&l, LOG_INFO, 1764496800, "line after end");
	read_until(p[0], &s, LINES + 1);
	assert_int_equal(s.notices, notices);
	assert_int_equal(log_async_dropped(a), dropped);
	log_async_free(a, GENEROUS_MS);
	buf_free(&s.partial);
	close(p[0]);
	close(p[1]);
}

/* The notice in the JSON format is a JSON line of its own. */
static void test_json_notice(void **state)
{
	int p[2];
	struct errbuf err = {""};
	struct log_async *a;
	struct logger l;
	struct seen s;
	cJSON *j;
	uint64_t dropped;

	(void)state;
	small_pipe(p);
	a = log_async_new(p[1], 16 << 10, &err);
	assert_non_null(a);
	l = log_async_logger(a, LOG_FORMAT_JSON, LOG_INFO);
	watchdog(120);
	for (logged = 0; logged < 20000; logged++)
		log_at(&l, LOG_WARN, 1764496800, "line %d end", (int)logged);
	alarm(0);
	dropped = log_async_dropped(a);
	assert_true(dropped > 0);
	memset(&s, 0, sizeof(s));
	read_until(p[0], &s, 20000);
	assert_true(s.notices >= 1);
	j = cJSON_Parse(s.first_notice);
	if (!j)
		fail_msg("the notice is not JSON: %s", s.first_notice);
	assert_string_equal(cJSON_GetObjectItem(j, "level")->valuestring, "warn");
	assert_non_null(strstr(cJSON_GetObjectItem(j, "msg")->valuestring, "lines dropped"));
	assert_non_null(cJSON_GetObjectItem(j, "dropped"));
	cJSON_Delete(j);
	log_async_free(a, GENEROUS_MS);
	buf_free(&s.partial);
	close(p[0]);
	close(p[1]);
}

/* What is buffered when the sink is freed is written (the sink drains). */
static void test_flush_at_free(void **state)
{
	int p[2];
	struct errbuf err = {""};
	struct log_async *a;
	struct logger l;
	struct seen s;

	(void)state;
	small_pipe(p);
	a = log_async_new(p[1], 1 << 20, &err);
	assert_non_null(a);
	l = log_async_logger(a, LOG_FORMAT_TEXT, LOG_INFO);
	for (int i = 0; i < 50; i++)
		log_at(&l, LOG_INFO, 1764496800, "line %d end", i);
	assert_int_equal(log_async_flush(a, GENEROUS_MS), 0);
	log_at(&l, LOG_INFO, 1764496800, "line last end");
	log_async_free(a, GENEROUS_MS);
	close(p[1]);
	memset(&s, 0, sizeof(s));
	read_until(p[0], &s, 51);
	assert_int_equal(s.lines, 51);
	assert_int_equal(s.bad, 0);
	buf_free(&s.partial);
	close(p[0]);
}

/* A sink that stays blocked: freeing (and flushing) gives up at its bound. */
static void test_free_with_blocked_sink_returns(void **state)
{
	int p[2];
	struct errbuf err = {""};
	struct log_async *a;
	struct logger l;

	(void)state;
	small_pipe(p);
	a = log_async_new(p[1], 1 << 20, &err);
	assert_non_null(a);
	l = log_async_logger(a, LOG_FORMAT_TEXT, LOG_INFO);
	for (int i = 0; i < 5000; i++)
		log_at(&l, LOG_INFO, 1764496800, "line %d of a sink nobody reads, long enough to fill it end", i);
	watchdog(120);
	assert_int_equal(log_async_flush(a, 50), -1);
	log_async_free(a, 50);
	alarm(0);
	close(p[0]);
	close(p[1]);
}

/* A sink that fails (its reader went away) counts what it could not write. */
static void test_broken_sink_counts(void **state)
{
	int p[2];
	struct errbuf err = {""};
	struct log_async *a;
	struct logger l;

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	small_pipe(p);
	close(p[0]);
	a = log_async_new(p[1], 1 << 20, &err);
	assert_non_null(a);
	l = log_async_logger(a, LOG_FORMAT_TEXT, LOG_INFO);
	for (int i = 0; i < 10; i++)
		log_at(&l, LOG_INFO, 1764496800, "line %d end", i);
	log_async_flush(a, GENEROUS_MS);
	assert_int_equal(log_async_dropped(a), 10);
	log_async_free(a, GENEROUS_MS);
	close(p[1]);
}

/* The daemon's logger: stderr a pipe nobody reads, log_for_format's lines
 * and log_stderr_put's (a policy's print) still return, log_dropped_lines()
 * counts what was dropped. */
static void test_daemon_logger_on_stuck_stderr(void **state)
{
	int p[2], saved = dup(2);
	struct logger l;
	struct seen s;
	uint64_t dropped;

	(void)state;
	assert_true(saved >= 0);
	report_fd = saved;
	small_pipe(p);
	assert_int_equal(dup2(p[1], 2), 2);
	l = log_for_format(LOG_FORMAT_TEXT, LOG_INFO);
	watchdog(120);
	for (logged = 0; logged < LINES; logged++) {
		char ln[64];

		if (logged % 2) {
			log_at(&l, LOG_INFO, 1764496800, "line %d of the daemon end", (int)logged);
		} else {
			int n = snprintf(ln, sizeof(ln), "policy: line %d printed end\n", (int)logged);

			log_stderr_put(ln, (size_t)n);
		}
	}
	alarm(0);
	dropped = log_dropped_lines();
	memset(&s, 0, sizeof(s));
	read_until(p[0], &s, LINES);
	dup2(saved, 2);
	close(saved);
	report_fd = 1;
	if (dropped == 0 || s.lines + s.dropped != LINES || s.bad)
		fail_msg("stderr a stuck pipe: %llu dropped, read %llu lines and %llu in notices, %d bad",
			 (unsigned long long)dropped, (unsigned long long)s.lines,
			 (unsigned long long)s.dropped, s.bad);
	buf_free(&s.partial);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blocked_sink_never_blocks),
		cmocka_unit_test(test_json_notice),
		cmocka_unit_test(test_flush_at_free),
		cmocka_unit_test(test_free_with_blocked_sink_returns),
		cmocka_unit_test(test_broken_sink_counts),
		cmocka_unit_test(test_daemon_logger_on_stuck_stderr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
