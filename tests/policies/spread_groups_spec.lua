-- Spreads whose domains are the node groups themselves, and nodes on their
-- way in several groups: default.lua and binpack.lua through the engine.
local t = require "luascale.testing"

local POLICIES = { "../../policies/default.lua", "../../policies/binpack.lua" }
local NOW = t.time("2026-11-30T10:00:00Z")

local function spread(key, app)
  return { topologySpreadConstraints = { {
    maxSkew = 1, topologyKey = key, whenUnsatisfiable = "DoNotSchedule",
    labelSelector = { matchLabels = { app = app } } } } }
end

-- n pending replicas of app 'app', 'cpu' each, spread over 'key'
local function replicas(n, cpu, app, key)
  local out = {}
  for i = 1, n do
    out[i] = t.pod{ name = app .. "-" .. i, cpu = cpu, memory = "1Gi", pending = true,
                    labels = { app = app }, spec = spread(key, app) }
  end
  return out
end

local function summary(r)
  local parts = {}
  for _, a in ipairs(t.find(r, "scale_up")) do parts[#parts + 1] = a.group .. "+" .. a.count end
  return table.concat(parts, " ") .. " | " .. table.concat(r.log, "; ")
end

local function scaled(r, group)
  local n = 0
  for _, a in ipairs(t.find(r, "scale_up", group)) do n = n + a.count end
  return n
end

for _, policy in ipairs(POLICIES) do
  describe(policy:match("[^/]+$"), function()
    it("spreads over groups that differ in the spread's key, whatever their size", function()
      -- a capacity-type spread: a spot node takes one 3-core replica, an
      -- on-demand node two; the spread wants 3 and 3
      local groups = {
        t.group{ name = "spot", max = 10, cpu = "4", memory = "16Gi", price = 0.1,
                 labels = { ["karpenter.sh/capacity-type"] = "spot" } },
        t.group{ name = "on-demand", max = 10, cpu = "8", memory = "32Gi", price = 0.4,
                 labels = { ["karpenter.sh/capacity-type"] = "on-demand" } },
      }
      local pods = replicas(6, "3", "api", "karpenter.sh/capacity-type")
      local r = t.engine{ policy = policy, groups = groups }:decide(t.cluster{ pods = pods }, NOW)
      assert.is_nil(r.error)
      assert.are.equal(3, scaled(r, "spot"), summary(r))
      assert.are.equal(2, scaled(r, "on-demand"), summary(r))
      assert.matches("packed together", t.find(r, "scale_up", "spot")[1].reason)
    end)

    it("fills the nodes on their way in every zone before buying one", function()
      -- one node on its way per zone, 4 cores each: 7 one-core replicas
      -- spread over the zones fit them (3, 2, 2)
      local groups = {}
      for _, z in ipairs{ "a", "b", "c" } do
        local g = t.group{ name = "zone-" .. z, max = 10, cpu = "4", memory = "16Gi", price = 0.2,
                           labels = { ["topology.kubernetes.io/zone"] = z } }
        g.target = 1
        groups[#groups + 1] = g
      end
      local pods = replicas(7, "1", "web", "topology.kubernetes.io/zone")
      local r = t.engine{ policy = policy, groups = groups }:decide(t.cluster{ pods = pods }, NOW)
      assert.is_nil(r.error)
      assert.are.equal(0, #t.find(r, "scale_up"), summary(r))
      -- a thirteenth replica does not fit them: one new node, in zone a
      pods = replicas(13, "1", "web", "topology.kubernetes.io/zone")
      r = t.engine{ policy = policy, groups = groups }:decide(t.cluster{ pods = pods }, NOW)
      assert.is_nil(r.error)
      assert.are.equal(1, #t.find(r, "scale_up"), summary(r))
      assert.are.equal(1, scaled(r, "zone-a"), summary(r))
    end)
  end)
end
