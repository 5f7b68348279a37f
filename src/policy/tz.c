/*
 * tz: local time in named zones from the system's TZif files (RFC 8536),
 * parsed here so that no policy call reads or changes the process's TZ
 * (tzset and localtime are process-wide). Owns the file and footer rule
 * parsers, the lookup and a bounded cache of parsed zones.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

#include "policy/sandbox.h"
#include "policy/tz.h"

#define DAY 86400
#define ZONE_NAME_MAX 255
#define CACHE_MAX 64

/* One local time type: a UTC offset, a daylight flag, an abbreviation. */
struct tz_type {
	int32_t utoff;
	bool isdst;
	char abbr[TZ_ABBR_MAX];
};

/* A day rule of the footer: Jn (1..365, no leap day), n (0..365) or Mm.w.d. */
struct tz_day {
	char kind; /* 'J', 'D', 'M' */
	int n, m, w, d;
	int32_t secs; /* local time of day of the change, may be < 0 or > 24h */
};

/* The footer's POSIX TZ rule: standard time, and optionally daylight
 * time between two days of each year. */
struct tz_rule {
	struct tz_type std, dst;
	bool has_dst;
	struct tz_day start, end;
};

struct tz_zone {
	size_t n_trans;
	int64_t *trans;   /* ascending unix times */
	uint8_t *idx;     /* type in effect from trans[i] */
	size_t n_types;
	struct tz_type *types;
	bool has_rule;
	struct tz_rule rule;
};

/* ---- calendar (proleptic Gregorian, integer days from 1970-01-01) ---- */

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	if (m <= 2)
		y--;
	era = floor_div(y, 400);
	yoe = y - era * 400;
	doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = floor_div(z, 146097);
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static bool is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int month_days(int64_t y, int m)
{
	static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	return m == 2 && is_leap(y) ? 29 : days[m - 1];
}

/* ---- names ---- */

int tz_name_check(const char *name, struct errbuf *err)
{
	size_t i, n = strlen(name);

	if (n == 0)
		return errbuf_set(err, "empty time zone name (expected e.g. \"Europe/Berlin\")");
	if (n > ZONE_NAME_MAX)
		return errbuf_set(err, "time zone name longer than %d characters", ZONE_NAME_MAX);
	for (i = 0; i < n; i++) {
		char c = name[i];
		bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '+' || c == '-' || c == '/';

		if (!ok || (c == '/' && (i == 0 || i == n - 1 || name[i + 1] == '/')))
			return errbuf_set(err, "bad time zone name \"%.*s\" (expected a zoneinfo "
					  "name such as \"Europe/Berlin\": letters, digits, _ + - "
					  "and / between parts)", (int)(n > 64 ? 64 : n), name);
	}
	return 0;
}

/* ---- the footer: a POSIX TZ string ---- */

/* "CET" or "<+1030>": an abbreviation, at most TZ_ABBR_MAX - 1 characters. */
static const char *parse_abbr(const char *p, char *out)
{
	size_t n = 0;

	if (*p == '<') {
		p++;
		while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		       (*p >= '0' && *p <= '9') || *p == '+' || *p == '-') {
			if (n + 1 >= TZ_ABBR_MAX)
				return NULL;
			out[n++] = *p++;
		}
		if (*p != '>' || n < 3)
			return NULL;
		p++;
	} else {
		while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')) {
			if (n + 1 >= TZ_ABBR_MAX)
				return NULL;
			out[n++] = *p++;
		}
		if (n < 3)
			return NULL;
	}
	out[n] = '\0';
	return p;
}

/* [+-]hh[:mm[:ss]] with hh at most 'max_h', into seconds. */
static const char *parse_hms(const char *p, int max_h, int32_t *out)
{
	int sign = 1, h = 0, m = 0, s = 0, digits = 0;

	if (*p == '+' || *p == '-')
		sign = *p++ == '-' ? -1 : 1;
	while (*p >= '0' && *p <= '9' && digits < 3) {
		h = h * 10 + (*p++ - '0');
		digits++;
	}
	if (digits == 0 || h > max_h)
		return NULL;
	if (*p == ':') {
		if (p[1] < '0' || p[1] > '5' || p[2] < '0' || p[2] > '9')
			return NULL;
		m = (p[1] - '0') * 10 + (p[2] - '0');
		p += 3;
		if (*p == ':') {
			if (p[1] < '0' || p[1] > '5' || p[2] < '0' || p[2] > '9')
				return NULL;
			s = (p[1] - '0') * 10 + (p[2] - '0');
			p += 3;
		}
	}
	*out = sign * (h * 3600 + m * 60 + s);
	return p;
}

static const char *parse_num(const char *p, int lo, int hi, int *out)
{
	int v = 0, digits = 0;

	while (*p >= '0' && *p <= '9' && digits < 4) {
		v = v * 10 + (*p++ - '0');
		digits++;
	}
	if (digits == 0 || v < lo || v > hi)
		return NULL;
	*out = v;
	return p;
}

/* ",Mm.w.d[/time]", ",Jn[/time]" or ",n[/time]". */
static const char *parse_day(const char *p, struct tz_day *d)
{
	if (*p++ != ',')
		return NULL;
	memset(d, 0, sizeof(*d));
	if (*p == 'M') {
		d->kind = 'M';
		p = parse_num(p + 1, 1, 12, &d->m);
		if (!p || *p != '.' || !(p = parse_num(p + 1, 1, 5, &d->w)) || *p != '.' ||
		    !(p = parse_num(p + 1, 0, 6, &d->d)))
			return NULL;
	} else if (*p == 'J') {
		d->kind = 'J';
		if (!(p = parse_num(p + 1, 1, 365, &d->n)))
			return NULL;
	} else {
		d->kind = 'D';
		if (!(p = parse_num(p, 0, 365, &d->n)))
			return NULL;
	}
	d->secs = 2 * 3600;
	if (*p == '/')
		p = parse_hms(p + 1, 167, &d->secs);
	return p;
}

/* Parses a footer such as "CET-1CEST,M3.5.0,M10.5.0/3" (POSIX offsets are
 * west of UTC, ours east). Returns 0, or -1 with 'err' set. */
static int parse_rule(const char *s, struct tz_rule *r, struct errbuf *err)
{
	const char *p = s;
	int32_t off;

	memset(r, 0, sizeof(*r));
	if (!(p = parse_abbr(p, r->std.abbr)) || !(p = parse_hms(p, 24, &off)))
		goto bad;
	r->std.utoff = -off;
	if (*p == '\0')
		return 0;
	if (!(p = parse_abbr(p, r->dst.abbr)))
		goto bad;
	r->has_dst = true;
	r->dst.isdst = true;
	r->dst.utoff = r->std.utoff + 3600;
	if (*p != ',' && *p != '\0') {
		if (!(p = parse_hms(p, 24, &off)))
			goto bad;
		r->dst.utoff = -off;
	}
	if (*p == '\0')
		return errbuf_set(err, "footer rule \"%s\" has daylight time but no dates", s);
	if (!(p = parse_day(p, &r->start)) || !(p = parse_day(p, &r->end)) || *p != '\0')
		goto bad;
	return 0;
bad:
	return errbuf_set(err, "bad footer rule \"%s\" (a POSIX TZ string such as "
			  "\"CET-1CEST,M3.5.0,M10.5.0/3\")", s);
}

/* The unix time at which the rule day 'd' of year 'y' begins, read on a
 * clock 'utoff' seconds east of UTC. */
static int64_t rule_time(const struct tz_day *d, int64_t y, int32_t utoff)
{
	int64_t day;

	if (d->kind == 'J') {
		day = days_from_civil(y, 1, 1) + d->n - 1 + (is_leap(y) && d->n >= 60);
	} else if (d->kind == 'D') {
		day = days_from_civil(y, 1, 1) + d->n;
	} else {
		int64_t first = days_from_civil(y, d->m, 1);
		int wd = (int)((first % 7 + 7 + 4) % 7); /* 0 = Sunday; 1970-01-01 a Thursday */
		int off = (d->d - wd + 7) % 7 + (d->w - 1) * 7;

		while (off >= month_days(y, d->m))
			off -= 7;
		day = first + off;
	}
	return day * DAY + d->secs - utoff;
}

static const struct tz_type *rule_type(const struct tz_rule *r, int64_t t)
{
	int64_t y, start, end;
	int m, d;

	if (!r->has_dst)
		return &r->std;
	civil_from_days(floor_div(t + r->std.utoff, DAY), &y, &m, &d);
	start = rule_time(&r->start, y, r->std.utoff);
	end = rule_time(&r->end, y, r->dst.utoff);
	if (start < end)
		return t >= start && t < end ? &r->dst : &r->std;
	return t >= end && t < start ? &r->std : &r->dst;
}

/* ---- TZif ---- */

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t rd64(const unsigned char *p)
{
	return (int64_t)((uint64_t)rd32(p) << 32 | rd32(p + 4));
}

struct header {
	char version;
	uint32_t isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt;
};

/* Reads the header at 'p' and the size of the block it announces with
 * 'tsize'-byte times. */
static int read_header(const unsigned char *p, size_t left, int tsize, struct header *h,
		       size_t *block, const char *what, struct errbuf *err)
{
	uint64_t n;

	if (memcmp(p, "TZif", left < 4 ? left : 4) != 0)
		return errbuf_set(err, "%s: not a TZif file", what);
	if (left < 44)
		return errbuf_set(err, "%s: truncated TZif file (header)", what);
	h->version = (char)p[4];
	h->isutcnt = rd32(p + 20);
	h->isstdcnt = rd32(p + 24);
	h->leapcnt = rd32(p + 28);
	h->timecnt = rd32(p + 32);
	h->typecnt = rd32(p + 36);
	h->charcnt = rd32(p + 40);
	if (h->version != 0 && (h->version < '2' || h->version > '9'))
		return errbuf_set(err, "%s: unknown TZif version 0x%02x", what, p[4]);
	if (h->typecnt == 0 || h->typecnt > 256 || h->charcnt == 0)
		return errbuf_set(err, "%s: TZif file with no local time types", what);
	n = (uint64_t)h->timecnt * (tsize + 1) + (uint64_t)h->typecnt * 6 + h->charcnt +
	    (uint64_t)h->leapcnt * (tsize + 4) + h->isstdcnt + h->isutcnt;
	if (n > left - 44)
		return errbuf_set(err, "%s: truncated TZif file (data)", what);
	if ((h->isutcnt && h->isutcnt != h->typecnt) || (h->isstdcnt && h->isstdcnt != h->typecnt))
		return errbuf_set(err, "%s: corrupt TZif file (indicator counts)", what);
	if (h->leapcnt)
		return errbuf_set(err, "%s: TZif files with leap seconds (\"right/\" zones) are "
				  "not supported", what);
	*block = 44 + (size_t)n;
	return 0;
}

/* Builds the zone from the data block after the header 'h' at 'p'. */
static int read_block(struct tz_zone *z, const unsigned char *p, const struct header *h,
		      int tsize, const char *what, struct errbuf *err)
{
	const unsigned char *times = p, *idx = times + (size_t)h->timecnt * tsize;
	const unsigned char *types = idx + h->timecnt, *chars = types + (size_t)h->typecnt * 6;
	size_t i;

	z->n_trans = h->timecnt;
	z->n_types = h->typecnt;
	z->trans = calloc(h->timecnt ? h->timecnt : 1, sizeof(*z->trans));
	z->idx = calloc(h->timecnt ? h->timecnt : 1, 1);
	z->types = calloc(h->typecnt, sizeof(*z->types));
	if (!z->trans || !z->idx || !z->types)
		return errbuf_set(err, "%s: out of memory", what);
	for (i = 0; i < h->timecnt; i++) {
		z->trans[i] = tsize == 8 ? rd64(times + i * 8) : (int32_t)rd32(times + i * 4);
		z->idx[i] = idx[i];
		if (idx[i] >= h->typecnt)
			return errbuf_set(err, "%s: corrupt TZif file (type %u of %u)", what,
					  idx[i], h->typecnt);
		if (i > 0 && z->trans[i] <= z->trans[i - 1])
			return errbuf_set(err, "%s: corrupt TZif file (transitions out of order)", what);
	}
	for (i = 0; i < h->typecnt; i++) {
		const unsigned char *t = types + i * 6;
		int32_t utoff = (int32_t)rd32(t);
		size_t at = t[5], len;

		if (utoff < -25 * 3600 || utoff > 26 * 3600 || t[4] > 1 || at >= h->charcnt)
			return errbuf_set(err, "%s: corrupt TZif file (local time type %zu)", what, i);
		len = strnlen((const char *)chars + at, h->charcnt - at);
		if (len == h->charcnt - at || len >= TZ_ABBR_MAX)
			return errbuf_set(err, "%s: corrupt TZif file (abbreviation of type %zu)",
					  what, i);
		z->types[i].utoff = utoff;
		z->types[i].isdst = t[4];
		memcpy(z->types[i].abbr, chars + at, len + 1);
	}
	return 0;
}

struct tz_zone *tz_parse(const unsigned char *data, size_t len, const char *what,
			 struct errbuf *err)
{
	struct tz_zone *z = calloc(1, sizeof(*z));
	struct header h;
	size_t block, off;
	int tsize = 4;

	if (!z) {
		errbuf_set(err, "%s: out of memory", what);
		return NULL;
	}
	if (read_header(data, len, 4, &h, &block, what, err) < 0)
		goto fail;
	off = 0;
	if (h.version != 0) {
		/* v2+: skip the 32-bit block, read the 64-bit one and the footer */
		off = block;
		tsize = 8;
		if (read_header(data + off, len - off, 8, &h, &block, what, err) < 0)
			goto fail;
	}
	if (read_block(z, data + off + 44, &h, tsize, what, err) < 0)
		goto fail;
	off += block;
	if (h.version != 0) {
		const unsigned char *nl;
		char footer[128];
		size_t n;

		if (off >= len || data[off] != '\n' ||
		    !(nl = memchr(data + off + 1, '\n', len - off - 1))) {
			errbuf_set(err, "%s: truncated TZif file (footer)", what);
			goto fail;
		}
		n = (size_t)(nl - (data + off + 1));
		if (n >= sizeof(footer) || memchr(data + off + 1, '\0', n)) {
			errbuf_set(err, "%s: corrupt TZif file (footer)", what);
			goto fail;
		}
		memcpy(footer, data + off + 1, n);
		footer[n] = '\0';
		if (n > 0) {
			if (parse_rule(footer, &z->rule, err) < 0) {
				errbuf_prefix(err, "%s", what);
				goto fail;
			}
			z->has_rule = true;
		}
	}
	return z;
fail:
	tz_free(z);
	return NULL;
}

void tz_free(struct tz_zone *z)
{
	if (!z)
		return;
	free(z->trans);
	free(z->idx);
	free(z->types);
	free(z);
}

void tz_lookup(const struct tz_zone *z, int64_t t, struct tz_local *out)
{
	const struct tz_type *ty;
	int64_t local, days, secs;
	int m, d;

	if (z->has_rule && (z->n_trans == 0 || t >= z->trans[z->n_trans - 1])) {
		ty = rule_type(&z->rule, t);
	} else if (z->n_trans == 0 || t < z->trans[0]) {
		ty = &z->types[0];
	} else {
		size_t lo = 0, hi = z->n_trans; /* the last transition at or before t */

		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;

			if (z->trans[mid] <= t)
				lo = mid;
			else
				hi = mid;
		}
		ty = &z->types[z->idx[lo]];
	}
	local = t + ty->utoff;
	days = floor_div(local, DAY);
	secs = local - days * DAY;
	civil_from_days(days, &out->year, &m, &d);
	out->month = m;
	out->day = d;
	out->hour = (int)(secs / 3600);
	out->min = (int)(secs % 3600 / 60);
	out->sec = (int)(secs % 60);
	out->wday = (int)((days % 7 + 7 + 3) % 7) + 1;
	out->yday = (int)(days - days_from_civil(out->year, 1, 1)) + 1;
	out->offset = ty->utoff;
	out->isdst = ty->isdst;
	memcpy(out->abbr, ty->abbr, sizeof(out->abbr));
}

/* ---- files and the cache ---- */

static struct tz_zone *load_file(const char *dir, const char *name, struct errbuf *err)
{
	char path[4096 + ZONE_NAME_MAX + 2];
	unsigned char *buf = NULL;
	struct tz_zone *z = NULL;
	struct stat st;
	size_t got = 0;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
		errbuf_set(err, "time zone directory name too long");
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd < 0 && errno != ENOENT && errno != ENOTDIR)
			errbuf_set(err, "time zone \"%s\": cannot read %s: %s", name, path,
				   strerror(errno));
		else
			errbuf_set(err, "unknown time zone \"%s\" (no zone file %s; names are "
				   "like \"Europe/Berlin\", see %s)", name, path, dir);
		goto out;
	}
	if (st.st_size > TZ_FILE_MAX) {
		errbuf_set(err, "time zone \"%s\": %s is larger than %d bytes", name, path,
			   TZ_FILE_MAX);
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		errbuf_set(err, "time zone \"%s\": out of memory", name);
		goto out;
	}
	while (got <= (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size + 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			errbuf_set(err, "time zone \"%s\": cannot read %s: %s", name, path,
				   strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got > (size_t)st.st_size) {
		errbuf_set(err, "time zone \"%s\": %s grew while read", name, path);
		goto out;
	}
	z = tz_parse(buf, got, path, err);
	if (!z)
		errbuf_prefix(err, "time zone \"%s\"", name);
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return z;
}

struct cached {
	char *dir, *name;
	struct tz_zone *zone;
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cached cache[CACHE_MAX];
static size_t n_cached;

const struct tz_zone *tz_get(const char *dir, const char *name, struct errbuf *err)
{
	struct tz_zone *z = NULL;
	size_t i;

	if (!dir) {
		dir = getenv("TZDIR");
		if (!dir || !*dir)
			dir = "/usr/share/zoneinfo";
	}
	if (tz_name_check(name, err) < 0)
		return NULL;
	pthread_mutex_lock(&cache_lock);
	for (i = 0; i < n_cached; i++) {
		if (strcmp(cache[i].name, name) == 0 && strcmp(cache[i].dir, dir) == 0) {
			z = cache[i].zone;
			goto out;
		}
	}
	if (n_cached == CACHE_MAX) {
		errbuf_set(err, "time zone \"%s\": more than %d different zones asked for", name,
			   CACHE_MAX);
		goto out;
	}
	z = load_file(dir, name, err);
	if (z) {
		cache[n_cached].dir = strdup(dir);
		cache[n_cached].name = strdup(name);
		if (!cache[n_cached].dir || !cache[n_cached].name) {
			free(cache[n_cached].dir);
			free(cache[n_cached].name);
			tz_free(z);
			z = NULL;
			errbuf_set(err, "time zone \"%s\": out of memory", name);
			goto out;
		}
		cache[n_cached++].zone = z;
	}
out:
	pthread_mutex_unlock(&cache_lock);
	return z;
}

/* ---- Lua ---- */

static void set_int(lua_State *L, const char *k, lua_Integer v)
{
	lua_pushinteger(L, v);
	lua_setfield(L, -2, k);
}

int tz_lua_local_time(lua_State *L)
{
	static const char *const day_names[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
	struct errbuf err;
	const struct tz_zone *z;
	struct tz_local l;
	const char *zone;
	lua_Number t;

	if (lua_type(L, 1) != LUA_TNUMBER)
		return luaL_error(L, "local_time: the time must be a number of unix seconds, got %s",
				  luaL_typename(L, 1));
	if (lua_type(L, 2) != LUA_TSTRING)
		return luaL_error(L, "local_time: the time zone must be a name such as "
				  "\"Europe/Berlin\", got %s", luaL_typename(L, 2));
	t = lua_tonumber(L, 1);
	zone = lua_tostring(L, 2);
	if (!(t > -1e13 && t < 1e13)) /* about 300000 years either way; also NaN */
		return luaL_error(L, "local_time: time %f is out of range", (double)t);
	sandbox_charge(L, 200);
	z = tz_get(NULL, zone, &err);
	if (!z)
		return luaL_error(L, "local_time: %s", err.msg);
	tz_lookup(z, (int64_t)floor(t), &l);
	lua_createtable(L, 0, 13);
	set_int(L, "year", (lua_Integer)l.year);
	set_int(L, "month", l.month);
	set_int(L, "day", l.day);
	set_int(L, "hour", l.hour);
	set_int(L, "min", l.min);
	set_int(L, "sec", l.sec);
	set_int(L, "wday", l.wday);
	set_int(L, "yday", l.yday);
	lua_pushstring(L, day_names[l.wday - 1]);
	lua_setfield(L, -2, "day_name");
	set_int(L, "offset", l.offset);
	lua_pushstring(L, l.abbr);
	lua_setfield(L, -2, "abbr");
	lua_pushboolean(L, l.isdst);
	lua_setfield(L, -2, "isdst");
	lua_pushstring(L, zone);
	lua_setfield(L, -2, "zone");
	return 1;
}
