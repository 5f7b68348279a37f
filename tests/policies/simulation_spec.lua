-- Whole simulated days as specs: t.simulate replays a scenario in virtual
-- time through the real engine, and the run can be asserted on like a plan.
local t = require "luascale.testing"

local SCENARIOS = "../../examples/scenarios/"
local POLICIES = "../../policies/"

describe("simulated days", function()
  it("the classroom day with jupyterhub loses no session and keeps every invariant", function()
    local hub = t.simulate{ scenario = SCENARIOS .. "classroom-day.yaml",
                            policy = POLICIES .. "jupyterhub.lua" }
    assert.keeps_invariants(hub)
    assert.are.equal(0, hub.lost)
    assert.are.equal(0, hub.protected)
    assert.are.equal(0, hub.evictions)
    assert.are.equal(0, hub.policy_failures)
    -- its headroom: logins wait less than with the default policy
    local default = t.simulate{ scenario = SCENARIOS .. "classroom-day.yaml",
                                policy = POLICIES .. "default.lua" }
    assert.keeps_invariants(default)
    assert.is_true(hub.wait_p50 < default.wait_p50)
    -- the users group grew for the lecture and shrank back by the evening
    local users = hub.series.nodes.users
    local peak, last = 0, users[#users]
    for _, n in ipairs(users) do peak = math.max(peak, n) end
    assert.is_true(peak >= 10)
    assert.is_true(last <= 2)
  end)

  it("is the same run for the same seed and another for another seed", function()
    local a = t.simulate{ scenario = SCENARIOS .. "smoke.yaml", policy = POLICIES .. "default.lua", seed = 5 }
    local b = t.simulate{ scenario = SCENARIOS .. "smoke.yaml", policy = POLICIES .. "default.lua", seed = 5 }
    local c = t.simulate{ scenario = SCENARIOS .. "smoke.yaml", policy = POLICIES .. "default.lua", seed = 6 }
    assert.are.same(a, b)
    assert.are_not.same(a.series, c.series)
    assert.are.equal(#a.series.t, #a.series.pending)
    assert.are.equal(#a.series.t, #a.series.nodes.workers)
  end)

  it("reports a broken invariant, with when and what", function()
    local run = t.simulate{ scenario = "fixtures/over-max.yaml", policy = "fixtures/idle.lua" }
    assert.is_not.keeps_invariants(run)
    assert.is_true(run.violations.over_max > 0)
    assert.matches("at 00:00:00: group workers has 3 instances, above its max of 2",
      run.violations.first, 1, true)
  end)

  it("raises with the file's name when a scenario cannot be read", function()
    assert.has_error(function()
      t.simulate{ scenario = "fixtures/no-such.yaml", policy = POLICIES .. "default.lua" }
    end)
    local ok, err = pcall(t.simulate, { scenario = "fixtures/no-such.yaml",
                                        policy = POLICIES .. "default.lua" })
    assert.is_false(ok)
    assert.matches("no-such.yaml", err, 1, true)
  end)
end)
