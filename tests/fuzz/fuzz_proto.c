/*
 * fuzz_proto: the simulated API server's protobuf reader on arbitrary
 * bytes (after the "k8s\0" magic, so the fuzzer works on the envelope and
 * the object), and for what it reads, the round trip through the writer
 * and the reader again that must give back the same JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fuzz.h"
#include "sim/apiserver/apiserver_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *body = malloc(size + 4);
	struct errbuf err = {{0}};
	struct buf b = BUF_INIT;
	cJSON *o, *again;
	int code = 0;

	if (!body)
		return 0;
	memcpy(body, "k8s", 4);
	memcpy(body + 4, data, size);
	o = apiserver_proto_decode(body, size + 4, &code, &err);
	free(body);
	if (!o) {
		if (!err.msg[0] || (code != 400 && code != 415 && code != 500))
			abort(); /* a failure says why, with a real server's status */
		return 0;
	}
	if (apiserver_proto_encode(o, &b, &err) != 0) {
		fprintf(stderr, "what was read does not write back: %s\n", err.msg);
		abort();
	}
	again = apiserver_proto_decode(b.data, b.len, &code, &err);
	if (!again || !cJSON_Compare(o, again, true)) {
		char *t = cJSON_PrintUnformatted(o);

		fprintf(stderr, "round trip changed %s (%s)\n", t ? t : "?", again ? "" : err.msg);
		free(t);
		abort();
	}
	cJSON_Delete(again);
	cJSON_Delete(o);
	buf_free(&b);
	return 0;
}
