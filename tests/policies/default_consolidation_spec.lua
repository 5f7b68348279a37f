-- Spec for policies/default.lua's consolidation (param consolidation, off
-- by default): a node under scale_down_utilization for unneeded_for whose
-- pods fit nowhere else is replaced with a cheaper node when that saves
-- consolidation_min_savings; never while pods pend or a replace runs.
local t = require "luascale.testing"

local POLICY = "../../policies/default.lua"
local NOW = t.time("2026-11-30T10:00:00Z")

-- 'large' nodes of 8 cores at 0.4/h, 'small' of 2 at 0.1/h
local function engine(params)
  return t.engine{
    policy = POLICY, params = params,
    groups = {
      t.group{ name = "large", max = 10, cpu = "8", memory = "32Gi", price = 0.4 },
      t.group{ name = "small", max = 10, cpu = "2", memory = "8Gi", price = 0.1 },
    },
    safety = { max_scale_down_per_round = 5 },
  }
end

-- one large node, old enough, running 1.5 cores: under the threshold, and
-- its pod fits no other node
local function cluster(o)
  o = o or {}
  return t.cluster{
    nodes = { t.node{ name = "l-1", group = "large", cpu = "8", memory = "32Gi", age = 3600 } },
    pods = { t.pod{ name = "a", node = "l-1", cpu = "1500m", memory = "1Gi" },
             o.pending and t.pod{ name = "p", cpu = "7", memory = "1Gi", pending = true } or nil },
  }
end

-- the node has been under the threshold for unneeded_for (10m)
local function decide(e, c)
  e:decide(c, NOW)
  return e:decide(c, NOW + 11 * 60)
end

describe("default policy: consolidation", function()
  it("is off by default: an underused node nothing else can take stays", function()
    local r = decide(engine(), cluster())
    assert.no_error(r)
    assert.no_actions(r)
  end)

  it("replaces it with one cheaper node of another group when on", function()
    local r = decide(engine{ consolidation = true }, cluster())
    assert.no_error(r)
    assert.replaces(r, "l-1", "small")
    local a = t.find(r, "replace", "l-1")[1]
    assert.are.equal("underutilized", a.disruption)
    assert.matches("saves 0.300/h", a.reason, 1, true)
  end)

  it("wants the saving to reach consolidation_min_savings", function()
    local r = decide(engine{ consolidation = true, consolidation_min_savings = 0.8 }, cluster())
    assert.no_error(r)
    assert.are.equal(0, #t.find(r, "replace"))
  end)

  it("waits while pods are pending", function()
    local r = decide(engine{ consolidation = true }, cluster{ pending = true })
    assert.no_error(r)
    assert.are.equal(0, #t.find(r, "replace"))
  end)
end)
