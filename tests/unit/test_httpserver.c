/*
 * Tests for runtime/httpserver under hostile clients: slow requests
 * (slowloris) are cut at an absolute deadline however often they send a
 * byte, one address holds at most its share of connections, a full pool
 * still answers /healthz, and an answer nobody reads is cut too. Time is
 * a virtual clock moved by the test; httpserver_sync() waits for the
 * server's thread to have seen it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "buf.h"
#include "runtime/clock.h"
#include "runtime/httpserver.h"

/* How long a test waits for the server before it fails (real time; only a
 * bound for a broken server, never what a test measures). */
#define GENEROUS_MS 20000

static int page(void *ctx, struct buf *body)
{
	buf_puts(body, ctx);
	return 200;
}

/* A body much larger than the socket buffers of a client that never reads. */
static int big_page(void *ctx, struct buf *body)
{
	static char chunk[4096];

	(void)ctx;
	memset(chunk, 'x', sizeof(chunk));
	for (int i = 0; i < 4096; i++)
		buf_append(body, chunk, sizeof(chunk));
	return 200;
}

/* A TCP connection to 127.0.0.1:port from the loopback address 127.0.0.'src'
 * (the kernel answers any 127/8 address, so each 'src' is a client address
 * of its own). 'rcvbuf' > 0 shrinks the receive buffer. */
static int dial(int port, int src, int rcvbuf)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	if (rcvbuf > 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(0x7f000000u | (uint32_t)src);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)port);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		fail_msg("connect to port %d from 127.0.0.%d: %s", port, src, strerror(errno));
	return fd;
}

static void send_all(int fd, const char *s)
{
	size_t n = strlen(s);

	assert_int_equal(send(fd, s, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* 1 when the server closed 'fd' (EOF or reset), 0 when it is open with
 * nothing to read, waiting up to 'ms' for one or the other. */
static int closed_within(int fd, int ms)
{
	struct pollfd p = {fd, POLLIN, 0};
	char c[64];
	ssize_t n;

	if (poll(&p, 1, ms) <= 0)
		return 0;
	n = recv(fd, c, sizeof(c), MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno == ECONNRESET))
		return 1;
	if (n > 0)
		fail_msg("the server answered a slow request: \"%.*s\"", (int)n, c);
	return 0;
}

/* Sends 'req' from 127.0.0.'src' and reads the whole answer into 'out'
 * (the server closes after answering); fails with what it read when no
 * answer ends within GENEROUS_MS. */
static void ask(int port, int src, const char *req, struct buf *out)
{
	int fd = dial(port, src, 0);

	out->len = 0;
	send_all(fd, req);
	for (;;) {
		struct pollfd p = {fd, POLLIN, 0};
		char chunk[4096];
		ssize_t n;

		if (poll(&p, 1, GENEROUS_MS) <= 0)
			fail_msg("no answer to \"%s\" from 127.0.0.%d; read so far: \"%s\"", req, src,
				 out->data ? out->data : "");
		n = recv(fd, chunk, sizeof(chunk), 0);
		if (n <= 0)
			break;
		buf_append(out, chunk, (size_t)n);
	}
	close(fd);
	buf_append(out, "", 0);
}

static void sync_until_accepted(struct httpserver *s, uint64_t want)
{
	struct httpserver_stats st;

	for (int i = 0; i < 100; i++) {
		assert_int_equal(httpserver_sync(s, GENEROUS_MS), 0);
		httpserver_stats(s, &st);
		if (st.accepted >= want)
			return;
	}
	fail_msg("the server accepted %llu connections, %llu were made",
		 (unsigned long long)st.accepted, (unsigned long long)want);
}

static struct httpserver *start(struct clock *clk, int max_conns, int per_ip)
{
	static struct httpserver_route r[] = {
		{"/metrics", "text/plain", page, "x_total 1\n"},
		{"/healthz", "text/plain", page, "ok\n"},
		{"/big", "text/plain", big_page, NULL},
	};
	struct httpserver_opts o;
	struct errbuf err = {""};
	struct httpserver *s;

	httpserver_opts_default(&o);
	o.clock = clk;
	o.max_conns = max_conns;
	o.max_conns_per_ip = per_ip;
	o.request_timeout_ns = 5 * CLOCK_NS_PER_S;
	o.response_timeout_ns = 10 * CLOCK_NS_PER_S;
	s = httpserver_start_opts("127.0.0.1:0", r, 3, &o, &err);
	if (!s)
		fail_msg("httpserver_start_opts: %s", err.msg);
	return s;
}

#define SLOW 40

/* 40 slowloris connections from 10 addresses against a pool of 16 (4 an
 * address): /healthz is answered all along, and a connection still sending
 * its headers is closed at the deadline even though it sent a line just
 * before. */
static void test_slowloris_cut_and_health_answers(void **state)
{
	struct clock *clk = vclock_new(1700000000);
	struct httpserver *s = start(clk, 16, 4);
	int port = httpserver_port(s), fds[SLOW], open_before = 0, cut = 0;
	struct httpserver_stats st;
	struct buf b = BUF_INIT;

	(void)state;
	for (int i = 0; i < SLOW; i++) {
		fds[i] = dial(port, 2 + i % 10, 0);
		send_all(fds[i], "GET /metrics HTTP/1.1\r\nHost: x\r\n");
	}
	sync_until_accepted(s, SLOW);
	httpserver_stats(s, &st);
	assert_int_equal(st.open, 16);
	assert_int_equal(st.evicted, SLOW - 16);

	/* the pool is full of slow requests: a probe is answered anyway */
	ask(port, 1, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", &b);
	if (!strstr(b.data, "HTTP/1.1 200 ") || !strstr(b.data, "\r\n\r\nok\n"))
		fail_msg("/healthz with a full pool: \"%s\"", b.data);

	/* 4 s in, every slow one sends a header line: none is cut yet */
	vclock_set(clk, 4 * CLOCK_NS_PER_S);
	for (int i = 0; i < SLOW; i++) {
		if (closed_within(fds[i], 0)) {
			close(fds[i]);
			fds[i] = -1;
			continue;
		}
		send(fds[i], "X-Slow: 1\r\n", 11, MSG_NOSIGNAL);
		open_before++;
	}
	assert_int_equal(httpserver_sync(s, GENEROUS_MS), 0);
	httpserver_stats(s, &st);
	assert_int_equal(st.timed_out, 0);
	assert_int_equal(open_before, 15); /* 16, less the one the probe took */

	/* past the deadline: all of them are closed, activity or not */
	vclock_set(clk, 5 * CLOCK_NS_PER_S + 1);
	assert_int_equal(httpserver_sync(s, GENEROUS_MS), 0);
	for (int i = 0; i < SLOW; i++) {
		if (fds[i] < 0)
			continue;
		cut += closed_within(fds[i], GENEROUS_MS);
		close(fds[i]);
	}
	httpserver_stats(s, &st);
	if (cut != open_before || st.timed_out != (uint64_t)open_before || st.open != 0)
		fail_msg("after the deadline: %d of %d slow connections closed, timed_out %llu, open %d",
			 cut, open_before, (unsigned long long)st.timed_out, st.open);
	ask(port, 1, "GET /healthz HTTP/1.1\r\n\r\n", &b);
	assert_non_null(strstr(b.data, "HTTP/1.1 200 "));
	buf_free(&b);
	httpserver_stop(s);
	vclock_free(clk);
}

/* One address cannot hold more than its share: its oldest connection
 * gives way, so the same address still gets its probe answered. */
static void test_per_ip_limit(void **state)
{
	struct clock *clk = vclock_new(1700000000);
	struct httpserver *s = start(clk, 64, 4);
	int port = httpserver_port(s), fds[10], cut = 0;
	struct httpserver_stats st;
	struct buf b = BUF_INIT;

	(void)state;
	for (int i = 0; i < 10; i++) {
		fds[i] = dial(port, 7, 0);
		send_all(fds[i], "GET /");
	}
	sync_until_accepted(s, 10);
	httpserver_stats(s, &st);
	assert_int_equal(st.open, 4);
	assert_int_equal(st.evicted, 6);
	/* the oldest six went */
	for (int i = 0; i < 6; i++)
		cut += closed_within(fds[i], GENEROUS_MS);
	assert_int_equal(cut, 6);
	for (int i = 6; i < 10; i++)
		assert_int_equal(closed_within(fds[i], 0), 0);
	ask(port, 7, "GET /healthz HTTP/1.0\r\n\r\n", &b);
	assert_non_null(strstr(b.data, "HTTP/1.1 200 "));
	/* another address is not affected */
	ask(port, 8, "GET /metrics HTTP/1.1\r\n\r\n", &b);
	assert_non_null(strstr(b.data, "x_total 1\n"));
	for (int i = 0; i < 10; i++)
		close(fds[i]);
	buf_free(&b);
	httpserver_stop(s);
	vclock_free(clk);
}

/* An answer the client does not read is cut at the response deadline. */
static void test_unread_answer_is_cut(void **state)
{
	struct clock *clk = vclock_new(1700000000);
	struct httpserver *s = start(clk, 16, 4);
	int port = httpserver_port(s), fd;
	struct httpserver_stats st;

	(void)state;
	fd = dial(port, 3, 4096);
	send_all(fd, "GET /big HTTP/1.1\r\n\r\n");
	sync_until_accepted(s, 1);
	assert_int_equal(httpserver_sync(s, GENEROUS_MS), 0);
	httpserver_stats(s, &st);
	assert_int_equal(st.open, 1); /* 16 MiB do not fit in the buffers */
	vclock_set(clk, 10 * CLOCK_NS_PER_S + 1);
	assert_int_equal(httpserver_sync(s, GENEROUS_MS), 0);
	httpserver_stats(s, &st);
	if (st.open != 0 || st.timed_out != 1)
		fail_msg("an unread answer past its deadline: open %d, timed_out %llu", st.open,
			 (unsigned long long)st.timed_out);
	close(fd);
	httpserver_stop(s);
	vclock_free(clk);
}

/* What a request must look like; a bad one gets a 4xx and the connection
 * closes, never a wait. */
static void test_malformed_requests(void **state)
{
	struct clock *clk = vclock_new(1700000000);
	struct httpserver *s = start(clk, 16, 4);
	int port = httpserver_port(s);
	struct buf b = BUF_INIT, big = BUF_INIT;
	static const struct {
		const char *req;
		const char *want;
	} cases[] = {
		{"GET /metrics?x=1 HTTP/1.1\r\n\r\n", "HTTP/1.1 200 "},
		{"HEAD /metrics HTTP/1.1\r\n\r\n", "Content-Length: 10\r\n"},
		{"GET /metrics HTTP/1.1\nHost: x\n\n", "HTTP/1.1 200 "},
		{"POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", "HTTP/1.1 405 "},
		{"GET /nope HTTP/1.1\r\n\r\n", "HTTP/1.1 404 "},
		{"GET metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 400 "},
		{"GET /metrics\r\n\r\n", "HTTP/1.1 400 "},
		{"GET /metrics HTTP/2.0\r\n\r\n", "HTTP/1.1 505 "},
		{"G\x01T /metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 400 "},
		{"GET /metrics HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", "HTTP/1.1 400 "},
		{"GET /metrics HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", "HTTP/1.1 400 "},
		{"GET /metrics HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n", "HTTP/1.1 413 "},
		{"GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "HTTP/1.1 411 "},
		{"GET /metrics HTTP/1.1\r\nContent-Length: 2\r\n\r\nab", "x_total 1\n"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ask(port, 1, cases[i].req, &b);
		if (!strstr(b.data, cases[i].want))
			fail_msg("\"%s\": want \"%s\" in \"%s\"", cases[i].req, cases[i].want, b.data);
		assert_non_null(strstr(b.data, "Connection: close\r\n"));
	}
	/* a HEAD answer has no body */
	ask(port, 1, "HEAD /metrics HTTP/1.1\r\n\r\n", &b);
	assert_true(b.len > 4 && strcmp(b.data + b.len - 4, "\r\n\r\n") == 0);
	/* headers larger than the limit */
	buf_puts(&big, "GET /metrics HTTP/1.1\r\nX-Big: ");
	for (int i = 0; i < 9000; i++)
		buf_append(&big, "a", 1);
	buf_puts(&big, "\r\n\r\n");
	ask(port, 1, big.data, &b);
	assert_non_null(strstr(b.data, "HTTP/1.1 431 "));
	buf_free(&big);
	buf_free(&b);
	httpserver_stop(s);
	vclock_free(clk);
}

/* The real clock, defaults: a server that is started and stopped with
 * connections open does not wait for them. */
static void test_stop_with_open_connections(void **state)
{
	struct httpserver_route r[] = {{"/healthz", "text/plain", page, "ok\n"}};
	struct errbuf err = {""};
	struct httpserver *s = httpserver_start("127.0.0.1:0", r, 1, &err);
	int fds[5];

	(void)state;
	assert_non_null(s);
	for (int i = 0; i < 5; i++) {
		fds[i] = dial(httpserver_port(s), 1, 0);
		send_all(fds[i], "GET /hea");
	}
	sync_until_accepted(s, 5);
	httpserver_stop(s);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(closed_within(fds[i], GENEROUS_MS), 1);
		close(fds[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slowloris_cut_and_health_answers),
		cmocka_unit_test(test_per_ip_limit),
		cmocka_unit_test(test_unread_answer_is_cut),
		cmocka_unit_test(test_malformed_requests),
		cmocka_unit_test(test_stop_with_open_connections),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
