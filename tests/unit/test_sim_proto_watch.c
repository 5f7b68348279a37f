/*
 * Tests for the protobuf watch framing of sim/apiserver/apiserver_proto.c: a frame
 * is read back by hand (the 4-byte length, the WatchEvent's two fields)
 * and its object by libprotobuf-c's own unpacker (an independent reader of
 * the envelope and the events.k8s.io Event); and which Accept headers get
 * protobuf frames for a watch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "k8s/events.pb-c.h"
#include "k8s/runtime.pb-c.h"
#include "sim/apiserver/apiserver_proto.h"

/* Reads a varint at *p (bounded by end). */
static uint64_t varint(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	int shift = 0;

	while (*p < end) {
		uint8_t c = *(*p)++;

		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
		shift += 7;
	}
	fail_msg("varint past the end");
	return 0;
}

/* A length-delimited field with number 'want' at *p: its bytes. */
static const uint8_t *field(const uint8_t **p, const uint8_t *end, unsigned want, size_t *len)
{
	uint64_t tag = varint(p, end);
	const uint8_t *at;

	assert_int_equal(tag >> 3, want);
	assert_int_equal(tag & 7, 2);
	*len = (size_t)varint(p, end);
	assert_true(*p + *len <= end);
	at = *p;
	*p += *len;
	return at;
}

static void test_a_frame_holds_a_watch_event_with_the_enveloped_object(void **state)
{
	const char *json =
		"{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\","
		"\"metadata\":{\"name\":\"web-1.1a\",\"namespace\":\"default\",\"resourceVersion\":\"12\"},"
		"\"eventTime\":\"2026-01-01T00:00:05.000000Z\",\"reportingController\":\"default-scheduler\","
		"\"reportingInstance\":\"s-1\",\"action\":\"Scheduling\",\"reason\":\"FailedScheduling\","
		"\"regarding\":{\"kind\":\"Pod\",\"name\":\"web-1\",\"namespace\":\"default\"},"
		"\"note\":\"0/2 nodes are available\",\"type\":\"Warning\","
		"\"series\":{\"count\":3,\"lastObservedTime\":\"2026-01-01T00:01:00.000000Z\"}}";
	cJSON *o = cJSON_Parse(json);
	struct buf b = BUF_INIT;
	struct errbuf err;
	const uint8_t *p, *end, *type, *obj, *raw;
	size_t flen, tlen, olen, rlen;
	K8s__Io__Apimachinery__Pkg__Runtime__Unknown *u;
	K8s__Io__Api__Events__V1__Event *ev;

	(void)state;
	assert_int_equal(apiserver_proto_watch_frame(&b, "MODIFIED", o, &err), 0);
	cJSON_Delete(o);
	p = (const uint8_t *)b.data;
	assert_true(b.len > 4);
	flen = (size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
	assert_int_equal(flen, b.len - 4);
	p += 4;
	end = p + flen;
	/* WatchEvent: type = 1, object = 2 (RawExtension: raw = 1); no envelope */
	type = field(&p, end, 1, &tlen);
	assert_int_equal(tlen, 8);
	assert_memory_equal(type, "MODIFIED", 8);
	obj = field(&p, end, 2, &olen);
	assert_true(p == end);
	p = obj;
	raw = field(&p, obj + olen, 1, &rlen);
	assert_memory_equal(raw, "k8s\0", 4);
	u = k8s__io__apimachinery__pkg__runtime__unknown__unpack(NULL, rlen - 4, raw + 4);
	assert_non_null(u);
	assert_string_equal(u->typemeta->apiversion, "events.k8s.io/v1");
	assert_string_equal(u->typemeta->kind, "Event");
	ev = k8s__io__api__events__v1__event__unpack(NULL, u->raw.len, u->raw.data);
	assert_non_null(ev);
	assert_string_equal(ev->metadata->name, "web-1.1a");
	assert_string_equal(ev->metadata->resourceversion, "12");
	assert_string_equal(ev->reason, "FailedScheduling");
	assert_string_equal(ev->reportingcontroller, "default-scheduler");
	assert_string_equal(ev->regarding->name, "web-1");
	assert_string_equal(ev->note, "0/2 nodes are available");
	assert_int_equal(ev->series->count, 3);
	assert_non_null(ev->eventtime);
	assert_int_equal(ev->eventtime->seconds, 1767225605);
	k8s__io__api__events__v1__event__free_unpacked(ev, NULL);
	k8s__io__apimachinery__pkg__runtime__unknown__free_unpacked(u, NULL);
	buf_free(&b);
}

static void test_an_object_outside_the_description_is_no_frame(void **state)
{
	cJSON *o = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w\"}}");
	struct buf b = BUF_INIT;
	struct errbuf err;

	(void)state;
	assert_int_equal(apiserver_proto_watch_frame(&b, "ADDED", o, &err), -1);
	assert_int_equal(b.len, 0);
	assert_non_null(strstr(err.msg, "Widget"));
	cJSON_Delete(o);
	buf_free(&b);
}

static void test_which_accept_gets_protobuf_frames(void **state)
{
	(void)state;
	/* client-go's watch, and what kubectl events -w sends */
	assert_int_equal(apiserver_proto_watch_accept("application/vnd.kubernetes.protobuf;stream=watch"), -1);
	assert_int_equal(apiserver_proto_watch_accept("application/vnd.kubernetes.protobuf,application/json"), 1);
	assert_int_equal(apiserver_proto_watch_accept("application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"), 0);
	assert_int_equal(apiserver_proto_watch_accept("application/json, application/vnd.kubernetes.protobuf;q=0.5"), 0);
	assert_int_equal(apiserver_proto_watch_accept("application/vnd.kubernetes.protobuf;stream=watch;q=0.9, */*;q=0.1"), 1);
	assert_int_equal(apiserver_proto_watch_accept(NULL), 0);
	/* a Table is never protobuf */
	assert_int_equal(apiserver_proto_watch_accept("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io"), 0);
	/* for a body (not a watch) stream= is not a protobuf body */
	assert_int_equal(apiserver_proto_accept("application/vnd.kubernetes.protobuf;stream=watch"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_frame_holds_a_watch_event_with_the_enveloped_object),
		cmocka_unit_test(test_an_object_outside_the_description_is_no_frame),
		cmocka_unit_test(test_which_accept_gets_protobuf_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
