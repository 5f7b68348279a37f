/*
 * fuzz_quantity: quantity_parse() on arbitrary text in both units, and the
 * round trip quantity_format() -> quantity_parse() that must give back the
 * same value — both for what parsed and for the input's first 8 bytes read
 * as an int64.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "quantity.h"

/* Formats 'v' and parses it back; aborts when the value changes. */
static void round_trip(int64_t v, enum quantity_unit unit, const char *from)
{
	char text[64];
	struct errbuf err = {{0}};
	int64_t back = 0;

	quantity_format(v, unit, text, sizeof(text));
	if (quantity_parse(text, unit, &back, &err) != 0) {
		fprintf(stderr, "format(%lld) = \"%s\" (from \"%s\") does not parse: %s\n",
			(long long)v, text, from, err.msg);
		abort();
	}
	if (back != v) {
		fprintf(stderr, "format(%lld) = \"%s\" (from \"%s\") parses as %lld\n",
			(long long)v, text, from, (long long)back);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum quantity_unit units[] = {QUANTITY_MILLI, QUANTITY_UNIT};
	char *text = malloc(size + 1);
	struct errbuf err = {{0}};
	size_t u;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (u = 0; u < 2; u++) {
		int64_t v;

		err.msg[0] = '\0';
		if (quantity_parse(text, units[u], &v, &err) == 0)
			round_trip(v, units[u], text);
		else if (strlen(err.msg) == 0)
			abort(); /* a failure must say why */
	}
	if (size >= 8) {
		uint64_t raw;

		memcpy(&raw, data, 8);
		round_trip((int64_t)raw, QUANTITY_MILLI, "raw bytes");
		round_trip((int64_t)raw, QUANTITY_UNIT, "raw bytes");
	}
	free(text);
	return 0;
}
