/*
 * textparse: the few character-level pieces every wire format's parser
 * needs (hex digits, fixed-width decimals, calendar days), so that the
 * time stamps of Kubernetes, HTTP, SigV4 and snapshots read the same way.
 * No allocation, no locale.
 */
#ifndef LUASCALE_TEXTPARSE_H
#define LUASCALE_TEXTPARSE_H

#include <stdint.h>

/* The value of hex digit 'c' (0-15), or -1. */
int textparse_hexval(char c);

/* Reads exactly 'n' decimal digits at 's' into *out (no sign, no blanks).
 * Returns 0, or -1 when one of them is not a digit (*out untouched). */
int textparse_digits(const char *s, int n, int *out);

/* Days from 1970-01-01 to year 'y', month 'm' (1-12), day 'd' of the
 * proleptic Gregorian calendar (negative before 1970). */
int64_t textparse_days_from_civil(int64_t y, int m, int d);

#endif
