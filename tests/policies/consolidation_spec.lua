-- Spec for binpack.lua's consolidation (luascale.consolidation): remove an
-- empty node or one whose pods fit elsewhere, replace one node with a
-- cheaper one, replace several with one, never a protected or opted-out
-- node, one replacement at a time. Run through the real engine.
local t = require "luascale.testing"

local POLICY = "../../policies/binpack.lua"
local NOW = t.time("2026-11-30T10:00:00Z")

-- 'large' nodes of 8 cores at 0.4/h, 'small' of 2 at 0.1/h, 'xlarge' of
-- 16 at 0.6/h
local function groups(o)
  o = o or {}
  return {
    t.group{ name = "large", min = o.min or 0, max = 10, cpu = "8", memory = "32Gi", price = 0.4 },
    t.group{ name = "small", max = 10, cpu = "2", memory = "8Gi", price = o.small_price or 0.1 },
    t.group{ name = "xlarge", max = 10, cpu = "16", memory = "64Gi", price = 0.6 },
  }
end

local function engine(o)
  o = o or {}
  return t.engine{ policy = POLICY, groups = o.groups or groups(o), params = o.params,
                   safety = o.safety or { max_scale_down_per_round = 5 } }
end

local function large(name, o)
  o = o or {}
  return t.node{ name = name, group = "large", cpu = "8", memory = "32Gi", age = o.age,
                 annotations = o.annotations }
end

-- pod 'name' of 'cpu' cores on 'node'
local function pod(name, node, cpu, o)
  o = o or {}
  return t.pod{ name = name, node = node, cpu = cpu, memory = "1Gi", labels = o.labels,
                annotations = o.annotations }
end

local function the(r, type_, node)
  local a = t.find(r, type_, node)
  assert.are.equal(1, #a, t.describe(r))
  return a[1]
end

describe("binpack consolidation", function()
  it("removes an empty node as empty, a node whose pods fit elsewhere as underutilized", function()
    local c = t.cluster{
      nodes = { large("l-1"), large("l-2") },
      pods = { pod("a", "l-1", "5") },
    }
    local r = engine():decide(c, NOW)
    assert.no_error(r)
    assert.drains(r, "l-2")
    assert.deletes(r, "l-2")
    assert.are.equal("empty", the(r, "delete", "l-2").disruption)
    assert.are.equal(0, #t.find(r, "replace"))

    c = t.cluster{
      nodes = { large("l-1"), large("l-2") },
      pods = { pod("a", "l-1", "5"), pod("b", "l-2", "1") },
    }
    r = engine():decide(c, NOW)
    assert.deletes(r, "l-2")
    assert.are.equal("underutilized", the(r, "drain", "l-2").disruption)
    assert.are.equal("underutilized", the(r, "delete", "l-2").disruption)
    -- nothing else starts in a round that removes a node
    assert.are.equal(0, #t.find(r, "replace"))
  end)

  it("replaces a node with one cheaper node of another group that takes its pods", function()
    -- l-1's 1.5 cores fit a small node (0.1/h instead of 0.4/h), nowhere else
    local c = t.cluster{ nodes = { large("l-1") }, pods = { pod("a", "l-1", "1500m") } }
    local r = engine():decide(c, NOW)
    assert.no_error(r)
    assert.replaces(r, "l-1", "small")
    local a = the(r, "replace", "l-1")
    assert.are.equal("underutilized", a.disruption)
    assert.matches("saves 0.300/h %(75%%%)", a.reason)
    assert.is_true(r.node["l-1"].removable)
    -- the replace drains nothing itself: the new node comes first
    assert.are.equal(0, #t.find(r, "drain"))

    -- not when its pods need more than the cheaper node has
    c = t.cluster{ nodes = { large("l-1") }, pods = { pod("a", "l-1", "3") } }
    r = engine():decide(c, NOW)
    assert.are.equal(0, #t.find(r, "replace"))
  end)

  it("replaces only when it saves consolidation_min_savings of the node's price", function()
    -- small at 0.37/h would save 7.5% of 0.4/h
    local c = t.cluster{ nodes = { large("l-1") }, pods = { pod("a", "l-1", "1500m") } }
    local r = engine{ small_price = 0.37 }:decide(c, NOW)
    assert.no_error(r)
    assert.are.equal(0, #t.find(r, "replace"))

    r = engine{ small_price = 0.37, params = { consolidation_min_savings = 0.05 } }:decide(c, NOW)
    assert.replaces(r, "l-1", "small")
  end)

  it("replaces several nodes with one when that saves the most, and removes the rest once it is done", function()
    -- three large nodes, 5 cores used each (above consolidate_below, and no
    -- pod fits elsewhere): one xlarge (0.6/h) takes all 15 cores instead of 1.2/h
    local nodes, pods = {}, {}
    for i = 1, 3 do
      nodes[i] = large("l-" .. i)
      pods[i] = pod("p" .. i, "l-" .. i, "5")
    end
    local e = engine()
    local r = e:decide(t.cluster{ nodes = nodes, pods = pods }, NOW)
    assert.no_error(r)
    assert.are.equal(1, #t.find(r, "replace"))
    local a = t.find(r, "replace")[1]
    assert.are.equal("xlarge", a.group)
    assert.matches("replace 3 nodes %(1.200/h%) by 1 new xlarge node%(s%) %(0.600/h%): saves 0.600/h %(50%%%)",
      a.reason)
    assert.are.equal(0, #t.find(r, "drain"))
    for i = 1, 3 do assert.is_true(r.node["l-" .. i].removable) end

    -- while it is under way (the node replaced still there) nothing else happens
    e:advance("1m")
    r = e:decide(t.cluster{ nodes = nodes, pods = pods })
    assert.are.equal(0, #t.find(r, "drain"))

    -- once it is gone and the new node runs its pod, the others go, one a round,
    -- though they are above consolidate_below: their pods fit on the new node
    local first = a.node
    local left, moved = {}, {}
    for i = 1, 3 do
      if nodes[i].metadata.name ~= first then
        left[#left + 1] = nodes[i]
        moved[#moved + 1] = pods[i]
      end
    end
    left[#left + 1] = t.node{ name = "x-1", group = "xlarge", cpu = "16", memory = "64Gi", age = 60 }
    moved[#moved + 1] = pod("moved", "x-1", "5")
    e:advance("3m")
    r = e:decide(t.cluster{ nodes = left, pods = moved })
    assert.no_error(r)
    assert.are.equal(1, #t.find(r, "delete"))
    assert.matches("the rest of a consolidation", t.find(r, "delete")[1].reason)
    assert.are.equal(0, #t.find(r, "replace"))
  end)

  it("picks what saves the most: several nodes, or one alone", function()
    -- no pod fits elsewhere. l-1 (1.5 cores) alone to a small node saves
    -- 0.3/h; all three (15.6 cores) onto one xlarge save 0.6/h: they win
    local c = t.cluster{
      nodes = { large("l-1"), large("l-2"), large("l-3") },
      pods = { pod("a", "l-1", "1500m"), pod("b", "l-2", "6600m"), pod("c", "l-3", "7500m") },
    }
    local r = engine():decide(c, NOW)
    assert.no_error(r)
    local a = the(r, "replace", "l-1")
    assert.are.equal("xlarge", a.group)
    assert.matches("replace 3 nodes", a.reason)

    -- without xlarge no pair fits one new node (8.1 cores): l-1 alone goes to small
    local g = groups()
    g[3] = nil
    r = engine{ groups = g }:decide(c, NOW)
    a = the(r, "replace", "l-1")
    assert.are.equal("small", a.group)
    assert.matches("replace node %(0.400/h%)", a.reason)
  end)

  it("never touches a protected node, an opted-out node or a node running an opted-out pod", function()
    local function alone(o)
      return t.cluster{ nodes = { large("l-1", o) },
                        pods = { pod("a", "l-1", "1500m", o and o.pod) } }
    end
    local e = t.engine{ policy = POLICY, groups = groups(),
                        safety = { protected_pod_selector = "critical=true" } }
    local r = e:decide(t.cluster{ nodes = { large("l-1") },
      pods = { pod("a", "l-1", "1500m", { labels = { critical = "true" } }) } }, NOW)
    assert.no_error(r)
    assert.never_deletes(r, "l-1")
    assert.are.equal(0, #r.rejected)

    r = engine():decide(alone{ annotations = { ["karpenter.sh/do-not-disrupt"] = "true" } }, NOW)
    assert.never_deletes(r, "l-1")
    assert.are.equal(0, #r.rejected)
    r = engine():decide(alone{ annotations = {
      ["cluster-autoscaler.kubernetes.io/scale-down-disabled"] = "true" } }, NOW)
    assert.never_deletes(r, "l-1")

    r = engine():decide(alone{ pod = { annotations = { ["karpenter.sh/do-not-disrupt"] = "true" } } }, NOW)
    assert.never_deletes(r, "l-1")
    assert.are.equal(0, #r.rejected)
    assert.matches("consolidation skips l%-1: pod default/a is annotated karpenter.sh/do%-not%-disrupt",
      table.concat(r.log, "\n"))

    -- the next best is taken instead: l-1 with l-2 onto one xlarge would
    -- save 0.2/h, l-2 alone to a small node (at 0.25/h) 0.15/h
    r = engine{ small_price = 0.25 }:decide(t.cluster{ nodes = { large("l-1"), large("l-2") }, pods = {
      pod("a", "l-1", "1", { annotations = { ["karpenter.sh/do-not-disrupt"] = "true" } }),
      pod("b", "l-2", "1500m"), pod("c", "l-1", "6") } }, NOW)
    assert.no_error(r)
    assert.never_deletes(r, "l-1")
    assert.replaces(r, "l-2", "small")
    assert.matches("consolidation skips l%-1", table.concat(r.log, "\n"))
  end)

  it("does not replace while pods are pending, nodes are young, or with consolidation off", function()
    local c = t.cluster{ nodes = { large("l-1") },
      pods = { pod("a", "l-1", "1500m"), t.pod{ name = "w", cpu = "7", pending = true } } }
    local r = engine():decide(c, NOW)
    assert.are.equal(0, #t.find(r, "replace"))

    r = engine():decide(t.cluster{ nodes = { large("l-1", { age = 300 }) },
                                   pods = { pod("a", "l-1", "1500m") } }, NOW)
    assert.are.equal(0, #t.find(r, "replace"))

    r = engine{ params = { consolidation = false } }:decide(
      t.cluster{ nodes = { large("l-1") }, pods = { pod("a", "l-1", "1500m") } }, NOW)
    assert.no_actions(r)
  end)

  it("keeps every group at its min", function()
    -- replacing l-1 by a small node would take large below its min of 1
    local c = t.cluster{ nodes = { large("l-1") }, pods = { pod("a", "l-1", "1500m") } }
    local r = engine{ min = 1 }:decide(c, NOW)
    assert.no_error(r)
    assert.are.equal(0, #t.find(r, "replace"))
  end)
end)
