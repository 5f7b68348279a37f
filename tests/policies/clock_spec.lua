-- Spec for lua/luascale/clock.lua: local time from unix seconds and a
-- fixed UTC offset, weekly windows.
local clock = require "luascale.clock"
local t = require "luascale.testing"

local MON = t.time("2026-11-30T10:00:00Z") -- a Monday

describe("luascale.clock", function()
  describe("local_time", function()
    it("reads a UTC time", function()
      local lt = clock.local_time(MON)
      assert.are.same({ year = 2026, month = 11, day = 30, hour = 10, min = 0, sec = 0, wday = 1,
                        yday = 334, day_name = "Mon", offset = 0 }, lt)
    end)

    it("agrees with the C library's UTC calendar from 1901 to 2100", function()
      for u = -2145916800, 4102444799, 86400 * 37 + 3607 do
        local lt, ref = clock.local_time(u), os.date("!*t", u)
        assert.are.same({ ref.year, ref.month, ref.day, ref.hour, ref.min, ref.sec, ref.yday },
          { lt.year, lt.month, lt.day, lt.hour, lt.min, lt.sec, lt.yday })
        assert.are.equal((ref.wday + 5) % 7 + 1, lt.wday) -- os.date: 1 = Sunday
        assert.are.equal(u, clock.to_unix(lt))
      end
    end)

    it("handles leap days and times before 1970", function()
      local lt = clock.local_time(t.time("2024-02-29T23:59:59Z"))
      assert.are.same({ 2024, 2, 29, 60, 4 }, { lt.year, lt.month, lt.day, lt.yday, lt.wday })
      lt = clock.local_time(t.time("2000-03-01T00:00:00Z"))
      assert.are.same({ 2000, 3, 1, 61 }, { lt.year, lt.month, lt.day, lt.yday })
      lt = clock.local_time(-1)
      assert.are.same({ 1969, 12, 31, 23, 59, 59, 3 },
        { lt.year, lt.month, lt.day, lt.hour, lt.min, lt.sec, lt.wday })
    end)

    it("shifts by the offset, across midnight and the year", function()
      local lt = clock.local_time(MON, "+14:00")
      assert.are.same({ 2026, 12, 1, 0, 2 }, { lt.year, lt.month, lt.day, lt.hour, lt.wday })
      lt = clock.local_time(t.time("2027-01-01T03:00:00Z"), "-05:30")
      assert.are.same({ 2026, 12, 31, 21, 30, 365 },
        { lt.year, lt.month, lt.day, lt.hour, lt.min, lt.yday })
      assert.are.equal(t.time("2027-01-01T03:00:00Z"), clock.to_unix(lt, "-05:30"))
    end)

    it("formats for reasons", function()
      assert.are.equal("Mon 2026-11-30 11:00 +01:00", clock.format(MON, "+01:00"))
      assert.are.equal("Mon 2026-11-30 04:30 -05:30", clock.format(MON, "-05:30"))
    end)
  end)

  describe("parse_offset", function()
    it("reads the usual spellings", function()
      assert.are.equal(0, clock.parse_offset("Z"))
      assert.are.equal(0, clock.parse_offset("UTC"))
      assert.are.equal(0, clock.parse_offset("+00:00"))
      assert.are.equal(3600, clock.parse_offset("+01:00"))
      assert.are.equal(3600, clock.parse_offset("UTC+1"))
      assert.are.equal(-19800, clock.parse_offset("-05:30"))
      assert.are.equal(20700, clock.parse_offset("+0545"))
      assert.are.equal(7200, clock.parse_offset(7200))
    end)

    it("refuses what it cannot read, at the caller's line", function()
      for _, bad in ipairs({ "+1:0x", "01:00", "+19:00", "+01:60", "CET", "" }) do
        local ok, err = pcall(clock.parse_offset, bad)
        assert.is_false(ok)
        assert.matches("clock: ", err)
      end
      local ok, err = pcall(function()
        local lt = clock.local_time(0, "Europe/Paris")
        return lt
      end)
      assert.is_false(ok)
      assert.matches("clock_spec.lua:%d+: clock: bad UTC offset \"Europe/Paris\"", err)
    end)
  end)

  describe("parse_days", function()
    local function days(spec)
      local out = {}
      for d = 1, 7 do if clock.parse_days(spec)[d] then out[#out + 1] = d end end
      return out
    end

    it("reads names, ranges and lists", function()
      assert.are.same({ 1, 2, 3, 4, 5 }, days("Mon-Fri"))
      assert.are.same({ 1, 2, 3, 4, 5, 7 }, days("Mon-Fri,Sun"))
      assert.are.same({ 1, 5, 6, 7 }, days("Fri-Mon"))
      assert.are.same({ 3 }, days("wednesday"))
      assert.are.same({ 2, 4 }, days("Tues, thu"))
      assert.are.same({ 1, 2, 3, 4, 5, 6, 7 }, days("daily"))
    end)

    it("refuses unknown days", function()
      for _, bad in ipairs({ "Mon-Fry", "Mo", "", "Mon,,Tue", "Mon-" }) do
        assert.has_error(function() clock.parse_days(bad) end)
      end
    end)
  end)

  describe("in_window", function()
    local office = { days = "Mon-Fri", from = "08:45", to = "17:00" }

    it("includes from and excludes to", function()
      assert.is_false(clock.in_window(t.time("2026-11-30T08:44:59Z"), office))
      assert.is_true(clock.in_window(t.time("2026-11-30T08:45:00Z"), office))
      assert.is_true(clock.in_window(t.time("2026-11-30T16:59:59Z"), office))
      assert.is_false(clock.in_window(t.time("2026-11-30T17:00:00Z"), office))
      assert.is_false(clock.in_window(t.time("2026-11-29T10:00:00Z"), office)) -- Sunday
    end)

    it("reads the window in local time", function()
      -- Friday 23:30 UTC is Saturday 00:30 in +01:00 and Friday 18:30 in -05:00
      local fri = t.time("2026-12-04T23:30:00Z")
      local late = { days = "Fri", from = "18:00", to = "24:00" }
      assert.is_true(clock.in_window(fri, late))
      assert.is_false(clock.in_window(fri, late, "+01:00"))
      assert.is_true(clock.in_window(fri, late, "-05:00"))
      -- Friday 21:00 UTC is 16:00 in -05:00, still office hours
      local evening = t.time("2026-12-04T21:00:00Z")
      assert.is_false(clock.in_window(evening, office))
      assert.is_true(clock.in_window(evening, office, "-05:00"))
      assert.is_false(clock.in_window(evening, office, "+01:00"))
    end)

    it("runs an overnight window into the next day", function()
      local night = { days = "Fri", from = "22:00", to = "06:00" }
      assert.is_true(clock.in_window(t.time("2026-12-04T23:00:00Z"), night))  -- Fri
      assert.is_true(clock.in_window(t.time("2026-12-05T05:59:00Z"), night))  -- Sat
      assert.is_false(clock.in_window(t.time("2026-12-05T06:00:00Z"), night))
      assert.is_false(clock.in_window(t.time("2026-12-05T23:00:00Z"), night)) -- Sat night
      assert.is_false(clock.in_window(t.time("2026-12-04T05:00:00Z"), night)) -- Fri morning
    end)

    it("refuses a window it cannot read", function()
      assert.has_error(function() clock.in_window(0, { days = "Mon", from = "8h", to = "17:00" }) end)
      assert.has_error(function() clock.in_window(0, { days = "Mon", from = "25:00", to = "26:00" }) end)
      assert.has_error(function() clock.in_window(0, { days = "Mon", from = "09:00", to = "09:00" }) end)
      assert.has_error(function() clock.in_window(0, { from = "09:00", to = "10:00" }) end)
    end)
  end)
end)
