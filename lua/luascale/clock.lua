-- luascale.clock: calendar arithmetic on unix seconds, for policies that
-- act on office hours, class times or weekly windows.
--
--   local clock = require "luascale.clock"
--   local t = clock.local_time(cluster.now, "+01:00")   -- t.wday: 1 = Monday
--   if clock.in_window(cluster.now, { days = "Mon-Fri", from = "08:45", to = "17:00" },
--                      "+01:00") then ... end
--
-- Everything is integer arithmetic from unix seconds and a fixed UTC
-- offset; nothing reads the time zone of the machine the daemon runs on
-- (os.date would). Daylight saving time is not modelled: an operator whose
-- clocks change twice a year changes the offset param twice a year.
-- Bad input (an unknown day name, "25:00", "+1:0x") raises an error that
-- names the value and the policy line that passed it, so a policy fails
-- loudly instead of guessing.

local M = {}

local DAY = 86400

-- ---- calendar ---------------------------------------------------------

-- Days from 1970-01-01 to the proleptic Gregorian date y-m-d (may be
-- negative). Counts in 400-year eras of 146097 days, with the year taken
-- to start on March 1 so that the leap day falls at its end.
function M.days_from_civil(y, m, d)
  if m <= 2 then y = y - 1 end
  local era = y // 400
  local yoe = y - era * 400                                  -- 0..399
  local mp = (m + 9) % 12                                    -- March = 0
  local doy = (153 * mp + 2) // 5 + d - 1                    -- 0..365
  local doe = yoe * 365 + yoe // 4 - yoe // 100 + doy        -- 0..146096
  return era * 146097 + doe - 719468
end

-- The date of a day count from 1970-01-01: year, month (1..12), day (1..31).
function M.civil_from_days(z)
  z = z + 719468
  local era = z // 146097
  local doe = z - era * 146097                                          -- 0..146096
  local yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365 -- 0..399
  local doy = doe - (365 * yoe + yoe // 4 - yoe // 100)                 -- 0..365
  local mp = (5 * doy + 2) // 153                                       -- March = 0
  local d = doy - (153 * mp + 2) // 5 + 1
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return y, m, d
end

-- ---- offsets ----------------------------------------------------------

-- A UTC offset in seconds. Accepts a number of seconds, "Z", "UTC",
-- "+01:00", "-05:30", "+0100", "+01", optionally after "UTC" ("UTC+01:00").
function M.parse_offset(offset)
  if offset == nil then return 0 end
  if type(offset) == "number" then
    local s = math.tointeger(offset)
    if not s or s < -18 * 3600 or s > 18 * 3600 then
      error("clock: a UTC offset in seconds must be an integer within 18 hours, got " ..
        tostring(offset), 0)
    end
    return s
  end
  if type(offset) ~= "string" then
    error("clock: a UTC offset must be a string like \"+01:00\", got " .. type(offset), 0)
  end
  local text = offset:gsub("^%s+", ""):gsub("%s+$", "")
  if text == "Z" or text == "UTC" or text == "GMT" then return 0 end
  text = text:gsub("^UTC", ""):gsub("^GMT", "")
  local sign, hh, mm = text:match("^([+-])(%d%d?):(%d%d)$")
  if not sign then sign, hh, mm = text:match("^([+-])(%d%d)(%d%d)$") end
  if not sign then sign, hh = text:match("^([+-])(%d%d?)$"); mm = "0" end
  if not sign then
    error(string.format("clock: bad UTC offset %q (expected \"+HH:MM\" or \"-HH:MM\")", offset), 0)
  end
  local h, m = tonumber(hh), tonumber(mm)
  if m >= 60 or h * 60 + m > 18 * 60 then
    error(string.format("clock: UTC offset %q is out of range (at most 18:00)", offset), 0)
  end
  local s = (h * 60 + m) * 60
  return sign == "-" and -s or s
end

-- "+01:00" for 3600.
function M.format_offset(seconds)
  local sign = seconds < 0 and "-" or "+"
  local a = math.abs(seconds)
  return string.format("%s%02d:%02d", sign, a // 3600, (a % 3600) // 60)
end

-- ---- local time -------------------------------------------------------

local DAY_NAMES = { "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun" }
M.day_names = DAY_NAMES

-- The wall-clock time at 'unix' (seconds) in a zone 'utc_offset' from UTC:
-- { year, month, day, hour, min, sec, wday = 1 (Monday) .. 7 (Sunday),
--   yday = 1 .. 366, day_name = "Mon", offset = seconds }.
function M.local_time(unix, utc_offset)
  local offset = M.parse_offset(utc_offset)
  local t = math.floor(unix) + offset
  local days, secs = t // DAY, t % DAY
  local y, m, d = M.civil_from_days(days)
  local wday = (days + 3) % 7 + 1 -- 1970-01-01 was a Thursday
  return { year = y, month = m, day = d,
           hour = secs // 3600, min = (secs % 3600) // 60, sec = secs % 60,
           wday = wday, yday = days - M.days_from_civil(y, 1, 1) + 1,
           day_name = DAY_NAMES[wday], offset = offset }
end

-- The unix time of a wall-clock time { year, month, day, hour, min, sec }
-- in a zone 'utc_offset' from UTC (the inverse of local_time).
function M.to_unix(t, utc_offset)
  local offset = M.parse_offset(utc_offset)
  return M.days_from_civil(t.year, t.month, t.day) * DAY
    + (t.hour or 0) * 3600 + (t.min or 0) * 60 + (t.sec or 0) - offset
end

-- "Mon 2026-11-30 08:45 +01:00", for reasons and logs.
function M.format(unix, utc_offset)
  local t = M.local_time(unix, utc_offset)
  return string.format("%s %04d-%02d-%02d %02d:%02d %s", t.day_name, t.year, t.month, t.day,
    t.hour, t.min, M.format_offset(t.offset))
end

-- ---- days and times of day --------------------------------------------

local DAY_NUMBER = { mon = 1, tue = 2, wed = 3, thu = 4, fri = 5, sat = 6, sun = 7 }

local function day_number(word, spec)
  local w = word:lower()
  local n = DAY_NUMBER[w:sub(1, 3)]
  -- "Mon", "monday", "Tues" — a prefix of the full English name
  local full = ({ "monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                  "sunday" })[n or 0]
  if not n or #w < 3 or full:sub(1, #w) ~= w then
    error(string.format("clock: unknown day %q in %q (use Mon, Tue, Wed, Thu, Fri, Sat, Sun)",
      word, spec), 0)
  end
  return n
end

-- The set of weekdays in "Mon-Fri,Sun": { [1] = true, ..., [5] = true,
-- [7] = true }. A range may wrap around the week ("Fri-Mon"); "daily" or
-- "*" is every day.
function M.parse_days(spec)
  if type(spec) == "table" then return spec end -- already a set
  if type(spec) ~= "string" then
    error("clock: days must be a string like \"Mon-Fri\", got " .. type(spec), 0)
  end
  local set = {}
  local text = spec:gsub("%s+", "")
  if text == "*" or text:lower() == "daily" then
    for d = 1, 7 do set[d] = true end
    return set
  end
  if text == "" then error("clock: empty list of days", 0) end
  for item in (text .. ","):gmatch("([^,]*),") do
    if item == "" then error(string.format("clock: empty item in days %q", spec), 0) end
    local a, b = item:match("^(%a+)%-(%a+)$")
    if a then
      local from, to = day_number(a, spec), day_number(b, spec)
      local d = from
      while true do
        set[d] = true
        if d == to then break end
        d = d % 7 + 1
      end
    else
      set[day_number(item, spec)] = true
    end
  end
  return set
end

-- Seconds since midnight of "08:45" or "08:45:30"; "24:00" is the end of
-- the day.
function M.parse_time_of_day(text)
  if type(text) ~= "string" then
    error("clock: a time of day must be a string like \"08:45\", got " .. type(text), 0)
  end
  local h, m, s = text:match("^%s*(%d%d?):(%d%d):(%d%d)%s*$")
  if not h then h, m = text:match("^%s*(%d%d?):(%d%d)%s*$"); s = "0" end
  if not h then
    error(string.format("clock: bad time of day %q (expected \"HH:MM\")", text), 0)
  end
  h, m, s = tonumber(h), tonumber(m), tonumber(s)
  local secs = h * 3600 + m * 60 + s
  if m >= 60 or s >= 60 or secs > DAY then
    error(string.format("clock: time of day %q is out of range (00:00 to 24:00)", text), 0)
  end
  return secs
end

-- A window { days = "Mon-Fri", from = "08:45", to = "17:00" } checked and
-- turned into { days = set, from = seconds, to = seconds, text = "..." }.
function M.parse_window(window)
  if type(window) ~= "table" then
    error("clock: a window must be a table { days = ..., from = ..., to = ... }", 0)
  end
  if window.days == nil or window.from == nil or window.to == nil then
    error("clock: a window needs days, from and to (e.g. days = \"Mon-Fri\", from = \"08:45\", to = \"17:00\")", 0)
  end
  local w = { days = M.parse_days(window.days), from = M.parse_time_of_day(window.from),
              to = M.parse_time_of_day(window.to) }
  if w.from == w.to then
    error(string.format("clock: window %s-%s is empty (use \"00:00\" to \"24:00\" for a whole day)",
      window.from, window.to), 0)
  end
  w.text = string.format("%s %s-%s", type(window.days) == "string" and window.days or "days",
    window.from, window.to)
  return w
end

-- Is 'unix' inside the weekly window, read in the zone 'utc_offset'?
-- The window runs from 'from' (included) to 'to' (excluded) on each of its
-- days; when 'to' is earlier than 'from' it ends the next day ("Fri
-- 22:00-06:00" runs Friday night into Saturday morning).
function M.in_window(unix, window, utc_offset)
  local w = window.text and window or M.parse_window(window)
  local t = M.local_time(unix, utc_offset)
  local tod = t.hour * 3600 + t.min * 60 + t.sec
  if w.from < w.to then
    return w.days[t.wday] == true and tod >= w.from and tod < w.to
  end
  local yesterday = (t.wday + 5) % 7 + 1
  return (w.days[t.wday] == true and tod >= w.from) or (w.days[yesterday] == true and tod < w.to)
end

-- The functions above raise "clock: ..." without a position; the exported
-- ones report it at their caller's line (the policy's), not inside this
-- module. Other errors pass through untouched.
local function at_caller(f)
  return function(...)
    local r = table.pack(pcall(f, ...))
    if r[1] then return table.unpack(r, 2, r.n) end
    local msg = r[2]
    if type(msg) == "string" and msg:sub(1, 7) == "clock: " then error(msg, 2) end
    error(msg, 0)
  end
end

local exported = {}
for name, v in pairs(M) do
  exported[name] = type(v) == "function" and at_caller(v) or v
end
return exported
