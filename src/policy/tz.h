/*
 * tz: local time in a named time zone ("Europe/Berlin"), read from the
 * system's compiled zoneinfo (TZif files) without touching the process's
 * TZ, tzset or localtime. Owns the TZif and POSIX TZ rule parsers and a
 * small process-wide cache of parsed zones; not the calendar of fixed
 * offsets (lua/luascale/clock.lua).
 */
#ifndef LUASCALE_POLICY_TZ_H
#define LUASCALE_POLICY_TZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"

struct lua_State;
struct tz_zone;

/* The largest TZif file read (real ones are a few KiB). */
#define TZ_FILE_MAX (256 * 1024)
#define TZ_ABBR_MAX 16

/* The wall-clock time of one instant in one zone. */
struct tz_local {
	int64_t year;
	int month, day;     /* 1..12, 1..31 */
	int hour, min, sec;
	int wday;           /* 1 = Monday .. 7 = Sunday */
	int yday;           /* 1 .. 366 */
	int32_t offset;     /* seconds east of UTC */
	bool isdst;
	char abbr[TZ_ABBR_MAX]; /* "CEST", "+1030" */
};

/* 0 if 'name' may name a zone: 1..255 characters of [A-Za-z0-9_+-/],
 * no leading, trailing or doubled '/', so it cannot leave the zoneinfo
 * directory. Otherwise -1 with the reason in 'err'. */
int tz_name_check(const char *name, struct errbuf *err);

/* Parses a TZif file (versions 1 to 4) of 'len' bytes; 'what' names it in
 * errors. Returns a zone the caller frees with tz_free, or NULL with the
 * reason in 'err' (truncated, corrupt, leap-second files, a footer rule
 * that does not parse). */
struct tz_zone *tz_parse(const unsigned char *data, size_t len, const char *what,
			 struct errbuf *err);
void tz_free(struct tz_zone *z);

/* Fills 'out' with the local time at unix time 't' (seconds) in 'z':
 * from the transitions, past the last one from the footer's rule. */
void tz_lookup(const struct tz_zone *z, int64_t t, struct tz_local *out);

/* The zone 'name' read from 'dir' (NULL: $TZDIR, else /usr/share/zoneinfo),
 * parsed once and kept for the life of the process (thread safe). The
 * result is borrowed. NULL with a message naming the zone and the file
 * when the name is invalid, the zone unknown or its file corrupt. */
const struct tz_zone *tz_get(const char *dir, const char *name, struct errbuf *err);

/* Lua: local_time(t, zone) -> { year, month, day, hour, min, sec, wday,
 * yday, day_name, offset, abbr, isdst, zone }; raises on a bad zone. */
int tz_lua_local_time(struct lua_State *L);

#endif
