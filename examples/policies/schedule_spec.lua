-- Spec for examples/policies/schedule.lua: copy it next to your own policy
-- and run it with `luascale test examples/policies/schedule_spec.lua`.
-- 2026-11-30 is a Monday; times given to decide() are UTC.
local t = require "luascale.testing"

local POLICY = "schedule.lua"

local function engine(o)
  o = o or {}
  return t.engine{ policy = POLICY, params = o.params,
                   groups = { t.group{ name = "user", min = 1, max = o.max or 20,
                                       target = o.target } } }
end

-- 'n' nodes, each with a pod asking 'cpu' (of 4), plus pending pods.
local function cluster(n, cpu, pending)
  local nodes, pods = {}, {}
  for i = 1, n do
    nodes[i] = t.node{ name = "u-" .. i, group = "user" }
    pods[i] = t.pod{ name = "s-" .. i, node = "u-" .. i, cpu = cpu or "1", memory = "1Gi" }
  end
  for i = 1, pending or 0 do
    pods[#pods + 1] = t.pod{ name = "p-" .. i, cpu = "3", memory = "1Gi", pending = true }
  end
  return t.cluster{ nodes = nodes, pods = pods }
end

describe("schedule example", function()
  it("pre-scales to min_nodes when the window opens on Monday 08:45", function()
    local r = engine():decide(cluster(3), "2026-11-30T08:45:00Z")
    assert.no_error(r)
    assert.scales_up(r, "user", 7)
    assert.matches("Mon 2026%-11%-30 08:45 %+00:00 is in window Mon%-Fri 08:45%-17:00",
      t.find(r, "scale_up", "user")[1].reason)
  end)

  it("does nothing before the window opens", function()
    assert.no_actions(engine():decide(cluster(3), "2026-11-30T08:44:59Z"))
  end)

  it("keeps the floor until the window closes at 17:00", function()
    assert.scales_up(engine():decide(cluster(3), "2026-11-30T16:59:00Z"), "user", 7)
    assert.no_actions(engine():decide(cluster(3), "2026-11-30T17:00:00Z"))
    assert.no_actions(engine():decide(cluster(3), "2026-11-30T17:01:00Z"))
  end)

  it("does nothing on Sunday", function()
    assert.no_actions(engine():decide(cluster(3), "2026-11-29T10:00:00Z"))
  end)

  it("reads the window in the zone of utc_offset", function()
    local e = engine{ params = { utc_offset = "+01:00" } }
    assert.scales_up(e:decide(cluster(3), "2026-11-30T07:45:00Z"), "user", 7) -- 08:45 local
    assert.no_actions(e:decide(cluster(3), "2026-11-30T07:44:00Z"))
    assert.no_actions(e:decide(cluster(3), "2026-11-30T16:01:00Z"))        -- 17:01 local

    -- five hours behind UTC: Saturday 02:00 UTC is still Friday 21:00, out of hours,
    -- and Monday 13:45 UTC is 08:45 there
    e = engine{ params = { utc_offset = "-05:00" } }
    assert.no_actions(e:decide(cluster(3), "2026-12-05T02:00:00Z"))
    assert.no_actions(e:decide(cluster(3), "2026-11-30T08:45:00Z"))
    local r = e:decide(cluster(3), "2026-11-30T13:45:00Z")
    assert.scales_up(r, "user", 7)
    assert.matches("08:45 %-05:00", r.actions[1].reason)
  end)

  it("takes the windows and min_nodes from params", function()
    local params = { min_nodes = 5, windows = {
      { days = "Sat,Sun", from = "10:00", to = "12:00" },
      { days = "Wed", from = "22:00", to = "02:00" },  -- overnight
    } }
    local e = engine{ params = params }
    assert.scales_up(e:decide(cluster(3), "2026-11-29T11:00:00Z"), "user", 2)   -- Sunday
    assert.no_actions(e:decide(cluster(3), "2026-11-30T11:00:00Z"))            -- Monday
    assert.scales_up(e:decide(cluster(3), "2026-12-03T01:00:00Z"), "user", 2)   -- Thu 01:00
    assert.no_actions(e:decide(cluster(3), "2026-12-04T01:00:00Z"))            -- Fri 01:00
  end)

  it("counts nodes already on their way", function()
    assert.no_actions(engine{ target = 10 }:decide(cluster(3), "2026-11-30T09:00:00Z"))
    assert.scales_up(engine{ target = 8 }:decide(cluster(3), "2026-11-30T09:00:00Z"), "user", 2)
  end)

  it("stays within the group's max", function()
    local r = engine{ max = 6 }:decide(cluster(3), "2026-11-30T09:00:00Z")
    assert.scales_up(r, "user", 3)
    assert.are.same({}, r.rejected)
    assert.matches("above group user's max of 6", r.log[1])
  end)

  it("still scales up for pending pods outside the window", function()
    local r = engine():decide(cluster(3, "3", 2), "2026-11-29T10:00:00Z")
    assert.scales_up(r, "user", 2)
    assert.matches("2 pending pod%(s%) need 2 new node", r.actions[1].reason)
  end)

  it("lets pending pods use the nodes a window adds, and adds more when they need it", function()
    -- 8 full nodes: the floor adds 2, enough for 2 pending pods; 3 need 3
    assert.scales_up(engine():decide(cluster(8, "3", 2), "2026-11-30T09:00:00Z"), "user", 2)
    assert.scales_up(engine():decide(cluster(8, "3", 3), "2026-11-30T09:00:00Z"), "user", 3)
    assert.scales_up(engine():decide(cluster(10, "3", 2), "2026-11-30T09:00:00Z"), "user", 2)
  end)

  it("fails loudly on a window it cannot read", function()
    local e = engine{ params = { windows = { { days = "Mon-Fry", from = "08:45", to = "17:00" } } } }
    local r = e:decide(cluster(3), "2026-11-30T09:00:00Z")
    assert.matches("unknown day \"Fry\"", r.error)
    assert.no_actions(r)
  end)
end)
