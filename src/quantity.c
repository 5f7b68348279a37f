/*
 * quantity: parsing and canonical formatting of Kubernetes resource
 * quantities with exact integer arithmetic (no floating point). Which
 * resource a quantity belongs to is the caller's business.
 */
#include "quantity.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Exponents beyond this magnitude behave alike: any non-zero value
 * overflows (positive) or rounds up to one unit (negative). */
#define EXP_CLAMP 1000000

/* Decimal places an int64 can hold before it must overflow (10^19 > 2^63). */
#define MAX_INT_DIGITS 19

/* Copies at most 64 characters of 'text' for a message, control
 * characters replaced so the message stays on one line. */
static const char *shown(const char *text, char *out, size_t outlen)
{
	size_t i, n = strlen(text);
	size_t max = outlen - 4;

	for (i = 0; i < n && i < max; i++)
		out[i] = (unsigned char)text[i] < 0x20 ? '?' : text[i];
	if (n > max) {
		memcpy(out + i, "...", 3);
		i += 3;
	}
	out[i] = '\0';
	return out;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Parses what follows the number: sets *exp10 (power of ten) and *bits
 * (power of two). Returns 0, or -1 with a message. */
static int parse_suffix(const char *text, const char *s, long *exp10,
			int *bits, struct errbuf *err)
{
	static const char binary[] = "KMGTPE";
	static const struct {
		char c;
		int exp;
	} decimal[] = {
		{'n', -9}, {'u', -6}, {'m', -3}, {'k', 3}, {'M', 6},
		{'G', 9},  {'T', 12}, {'P', 15}, {'E', 18},
	};
	char t[72], u[72];
	const char *p;
	size_t i;
	long e = 0;
	bool neg = false;

	*exp10 = 0;
	*bits = 0;
	if (s[0] == '\0')
		return 0;
	if (s[1] == 'i' && s[2] == '\0' && s[0] != '\0') {
		const char *b = strchr(binary, s[0]);

		if (b) {
			*bits = 10 * (int)(b - binary + 1);
			return 0;
		}
	}
	if (s[1] == '\0') {
		for (i = 0; i < sizeof(decimal) / sizeof(decimal[0]); i++) {
			if (decimal[i].c == s[0]) {
				*exp10 = decimal[i].exp;
				return 0;
			}
		}
	}
	if ((s[0] != 'e' && s[0] != 'E') ||
	    (s[1] != '+' && s[1] != '-' && !is_digit(s[1]))) {
		/* "1e" alone reads best as a missing exponent */
		if ((s[0] == 'e') && s[1] == '\0')
			goto no_digits;
		return errbuf_set(err, "invalid quantity \"%s\": unknown suffix \"%s\"",
				  shown(text, t, sizeof(t)), shown(s, u, sizeof(u)));
	}
	p = s + 1;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (!is_digit(*p))
		goto no_digits;
	for (; is_digit(*p); p++) {
		e = e * 10 + (*p - '0');
		if (e > EXP_CLAMP)
			e = EXP_CLAMP;
	}
	if (*p != '\0')
		return errbuf_set(err, "invalid quantity \"%s\": invalid exponent \"%s\"",
				  shown(text, t, sizeof(t)), shown(s, u, sizeof(u)));
	*exp10 = neg ? -e : e;
	return 0;
no_digits:
	return errbuf_set(err, "invalid quantity \"%s\": exponent \"%s\" has no digits",
			  shown(text, t, sizeof(t)), shown(s, u, sizeof(u)));
}

int quantity_parse(const char *text, enum quantity_unit unit, int64_t *out,
		   struct errbuf *err)
{
	const char *p, *ip, *fp = NULL;
	size_t nint, nfrac = 0, ndig, first, last, i;
	long long point, start;
	long exp10;
	int bits;
	bool neg = false, inexact = false;
	uint64_t mult, ipart = 0, carry = 0;
	unsigned __int128 total, limit;
	char t[72];

	if (!text || text[0] == '\0')
		return errbuf_set(err, "invalid quantity \"\": empty string");
	p = text;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	ip = p;
	while (is_digit(*p))
		p++;
	nint = (size_t)(p - ip);
	if (*p == '.') {
		fp = ++p;
		while (is_digit(*p))
			p++;
		nfrac = (size_t)(p - fp);
	}
	if (nint + nfrac == 0)
		return errbuf_set(err, "invalid quantity \"%s\": expected a number",
				  shown(text, t, sizeof(t)));
	if (parse_suffix(text, p, &exp10, &bits, err) < 0)
		return -1;
	if (unit == QUANTITY_MILLI)
		exp10 += 3;
	mult = (uint64_t)1 << bits;

	/* The digits, integer and fraction together, read as one string
	 * with the decimal point after 'nint' of them. */
#define DIGIT(k) ((k) < nint ? ip[(k)] - '0' : fp[(k) - nint] - '0')
	ndig = nint + nfrac;
	for (first = 0; first < ndig && DIGIT(first) == 0; first++)
		;
	if (first == ndig) {
		*out = 0;
		return 0;
	}
	for (last = ndig - 1; DIGIT(last) == 0; last--)
		;
	/* position of the point, counted from the first significant digit */
	point = (long long)nint - (long long)first + exp10;
	if (point > MAX_INT_DIGITS)
		goto too_large;

	/* integer part: the first 'point' significant digits, zero-padded */
	for (i = 0; (long long)i < point; i++) {
		size_t k = first + i;

		ipart = ipart * 10 + (k <= last ? (uint64_t)DIGIT(k) : 0);
	}
	/* fraction times 2^bits, by long multiplication from the right; the
	 * carry out of the leftmost digit is its integer part */
	start = point > 0 ? point : 0;
	for (i = last - first + 1; (long long)i > start; i--) {
		uint64_t v = (uint64_t)DIGIT(first + i - 1) * mult + carry;

		inexact |= v % 10 != 0;
		carry = v / 10;
	}
	/* zeros between the point and the first significant digit: once the
	 * carry is spent, more of them change nothing */
	for (long long z = point; z < 0 && carry; z++) {
		inexact |= carry % 10 != 0;
		carry /= 10;
	}
#undef DIGIT

	total = (unsigned __int128)ipart * mult + carry + (inexact ? 1 : 0);
	limit = neg ? (unsigned __int128)INT64_MAX + 1 : (unsigned __int128)INT64_MAX;
	if (total > limit)
		goto too_large;
	if (neg)
		*out = total == (unsigned __int128)INT64_MAX + 1 ?
			INT64_MIN : -(int64_t)total;
	else
		*out = (int64_t)total;
	return 0;
too_large:
	return errbuf_set(err, "quantity \"%s\" is too large%s",
			  shown(text, t, sizeof(t)), neg ? " (negative)" : "");
}

static int digits(uint64_t v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

char *quantity_format(int64_t value, enum quantity_unit unit, char *out,
		      size_t outlen)
{
	static const char *const binary[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
	static const char *const decimal[] = {"k", "M", "G", "T", "P", "E"};
	const char *sign = value < 0 ? "-" : "";
	uint64_t mag = value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value;
	const char *suffix = "";
	int i;

	if (unit == QUANTITY_MILLI) {
		if (mag % 1000 == 0)
			snprintf(out, outlen, "%s%llu", sign,
				 (unsigned long long)(mag / 1000));
		else
			snprintf(out, outlen, "%s%llum", sign,
				 (unsigned long long)mag);
		return out;
	}
	if (mag != 0) {
		uint64_t bmag = mag, dmag = mag;
		const char *bsuf = "", *dsuf = "";

		for (i = 0; i < 6 && bmag % 1024 == 0; i++) {
			bmag /= 1024;
			bsuf = binary[i];
		}
		for (i = 0; i < 6 && dmag % 1000 == 0; i++) {
			dmag /= 1000;
			dsuf = decimal[i];
		}
		/* binary unless the decimal form is strictly shorter: 10^12 is
		 * a multiple of 1024 but reads better as "1T" than "976562500Ki" */
		if (*bsuf && digits(bmag) <= digits(dmag)) {
			mag = bmag;
			suffix = bsuf;
		} else {
			mag = dmag;
			suffix = dsuf;
		}
	}
	snprintf(out, outlen, "%s%llu%s", sign, (unsigned long long)mag, suffix);
	return out;
}
