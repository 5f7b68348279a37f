/*
 * quantity: Kubernetes resource quantities ("500m", "1.5Gi", "1e3") parsed
 * into exact 64-bit integers, and formatted back to canonical text.
 * No floating point anywhere; knows nothing about which resource is which.
 */
#ifndef LUASCALE_QUANTITY_H
#define LUASCALE_QUANTITY_H

#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"

/* The integer unit a quantity is converted to. */
enum quantity_unit {
	QUANTITY_MILLI, /* thousandths: CPU in millicores ("1" -> 1000) */
	QUANTITY_UNIT,  /* whole units: bytes, pods, extended resources ("1Ki" -> 1024) */
};

/*
 * Parses the full Kubernetes quantity grammar:
 *   [+-] digits [. digits] | [+-] . digits | [+-] digits .
 *   followed by nothing, a binary suffix (Ki Mi Gi Ti Pi Ei), a decimal
 *   suffix (n u m k M G T P E) or an exponent (e|E [+-] digits).
 * The exact value is converted to 'unit'; a fraction below the unit is
 * rounded up (away from zero), as Kubernetes does ("1u" CPU -> 1m).
 * Returns 0 and sets *out, or -1 with a message naming the text on bad
 * syntax or when the value does not fit in int64_t.
 */
int quantity_parse(const char *text, enum quantity_unit unit, int64_t *out,
		   struct errbuf *err);

/*
 * Formats 'value' (in 'unit') canonically into 'out' (at least 32 bytes):
 * QUANTITY_MILLI: "2" when a whole number, else "1500m".
 * QUANTITY_UNIT: the largest binary suffix that divides exactly when the
 * value is a multiple of 1024 ("1536Mi"), else the largest decimal suffix
 * that divides exactly ("1500k" is "1500k", 2000000 is "2M"), else digits.
 * A multiple of 1024 whose decimal form has fewer digits takes the decimal
 * form (10^12 is "1T", not "976562500Ki").
 * Returns 'out'.
 */
char *quantity_format(int64_t value, enum quantity_unit unit, char *out,
		      size_t outlen);

#endif
