-- Spec for luascale.packing.balanced (cluster:pack_balanced): a scale-up
-- split over similar groups brings the smallest groups up first, as the
-- Cluster Autoscaler's BalanceScaleUpBetweenGroups does, whatever the
-- groups' order; a zone spread still holds; each group's new nodes have
-- their own room. Run through the real engine with a probe policy.
local t = require "luascale.testing"

local POLICY = "fixtures/balanced.lua"
local NOW = t.time("2026-11-30T10:00:00Z")

-- Groups of 4-core nodes; 'sizes' nodes each, full (a 4-core pod on each).
local function world(sizes, o)
  o = o or {}
  local groups, nodes, pods = {}, {}, {}
  for i, size in ipairs(sizes) do
    local name = (o.prefix or "ng") .. i
    local labels = o.zones and { ["topology.kubernetes.io/zone"] = "zone-" .. i } or nil
    groups[i] = t.group{ name = name, max = o.max or 20, cpu = (o.cpu or {})[i] or "4",
                         memory = "16Gi", labels = labels }
    for j = 1, size do
      local node = name .. "-node-" .. j
      nodes[#nodes + 1] = t.node{ name = node, group = name, cpu = "4", memory = "16Gi",
                                  labels = labels }
      pods[#pods + 1] = t.pod{ name = node .. "-filler", node = node, cpu = "4", memory = "1Gi" }
    end
  end
  return groups, nodes, pods
end

local function pending(pods, n, cpu, extra)
  for i = 1, n do
    local o = { name = "p-" .. i, cpu = cpu or "3", memory = "1Gi", pending = true }
    for k, v in pairs(extra or {}) do o[k] = v end
    pods[#pods + 1] = t.pod(o)
  end
  return pods
end

local function grown(r)
  local out = {}
  for _, a in ipairs(t.find(r, "scale_up")) do out[a.group] = a.count end
  return out
end

local function decide(groups, nodes, pods, params)
  local r = t.engine{ policy = POLICY, groups = groups, params = params }
    :decide(t.cluster{ nodes = nodes, pods = pods }, NOW)
  assert.is_nil(r.error)
  return r
end

describe("packing.balanced", function()
  it("brings the smallest groups up first, whatever the groups' order", function()
    -- sizes 1, 3, 5, 5 and 4 nodes to add: ng1 to 4, ng2 to 4
    local groups, nodes, pods = world{ 1, 3, 5, 5 }
    pending(pods, 4)
    assert.are.same({ ng1 = 3, ng2 = 1 }, grown(decide(groups, nodes, pods)))
    assert.are.same({ ng1 = 3, ng2 = 1 }, grown(decide(groups, nodes, pods, { reverse = true })))
    -- 10 nodes: every group to 6
    groups, nodes, pods = world{ 1, 3, 5, 5 }
    pending(pods, 10)
    assert.are.same({ ng1 = 5, ng2 = 3, ng3 = 1, ng4 = 1 }, grown(decide(groups, nodes, pods)))
    assert.are.same({ ng1 = 5, ng2 = 3, ng3 = 1, ng4 = 1 },
                    grown(decide(groups, nodes, pods, { reverse = true })))
  end)

  it("breaks a tie between groups of one size by name", function()
    local groups, nodes, pods = world{ 2, 2, 2 }
    pending(pods, 2)
    assert.are.same({ ng1 = 1, ng2 = 1 }, grown(decide(groups, nodes, pods, { reverse = true })))
  end)

  it("never grows a group past its max, and goes on with the others", function()
    local groups, nodes, pods = world({ 1, 3 }, { max = 3 })
    pending(pods, 5)
    local r = decide(groups, nodes, pods)
    assert.are.same({ ng1 = 2 }, grown(r))
    assert.matches("3 pod%(s%) left", table.concat(r.log, "\n"))
  end)

  it("keeps a zone spread: the spread picks the zones, the sizes the group among them", function()
    local spread = { labels = { app = "api" }, spec = { topologySpreadConstraints = { {
      maxSkew = 1, topologyKey = "topology.kubernetes.io/zone", whenUnsatisfiable = "DoNotSchedule",
      labelSelector = { matchLabels = { app = "api" } } } } } }
    -- zone-1 has 4 nodes, zones 2 and 3 none: plain pods fill the small zones ...
    local groups, nodes, pods = world({ 4, 0, 0 }, { zones = true })
    pending(pods, 6)
    assert.are.same({ ng2 = 3, ng3 = 3 }, grown(decide(groups, nodes, pods)))
    -- ... a spread puts two in each zone, zone-1's group included
    groups, nodes, pods = world({ 4, 0, 0 }, { zones = true })
    pending(pods, 6, "3", spread)
    assert.are.same({ ng1 = 2, ng2 = 2, ng3 = 2 }, grown(decide(groups, nodes, pods)))
  end)

  it("packs each group's new nodes to their own room", function()
    -- ng1 1000m, ng2 990m (alike within 5 %): two 500m pods fill an ng1
    -- node, one an ng2 node
    local groups, nodes, pods = world({ 0, 0 }, { cpu = { "1000m", "990m" } })
    pending(pods, 4, "500m")
    assert.are.same({ ng1 = 2, ng2 = 1 }, grown(decide(groups, nodes, pods)))
  end)
end)
