-- Spec for policies/default.lua, run through the real engine (luascale.core).
local t = require "luascale.testing"

local POLICY = "../../policies/default.lua"
local NOW = t.time("2026-11-30T10:00:00Z")

local function workers(o)
  o = o or {}
  return t.group{ name = "workers", min = o.min or 1, max = o.max or 10, cpu = "4",
                  memory = "16Gi", price = 0.2 }
end

local function engine(o)
  o = o or {}
  return t.engine{ policy = POLICY, groups = o.groups or { workers(o) }, params = o.params,
                   safety = o.safety }
end

describe("default policy", function()
  describe("scale up", function()
    it("adds the nodes that first-fit decreasing packing needs", function()
      local cluster = t.cluster{
        nodes = { t.node{ name = "w-1", group = "workers" } },
        pods = {
          t.pod{ name = "busy", node = "w-1", cpu = "3500m", memory = "1Gi" },
          t.pod{ name = "a", cpu = "3", memory = "1Gi", pending = true },
          t.pod{ name = "b", cpu = "3", memory = "1Gi", pending = true },
          t.pod{ name = "c", cpu = "1", memory = "1Gi", pending = true },
          t.pod{ name = "d", cpu = "1", memory = "1Gi", pending = true },
        },
      }
      local r = engine():decide(cluster, NOW)
      assert.is_nil(r.error)
      assert.is_true(t.scales_up(r, "workers", 2))
      assert.matches("4 pending pod", t.find(r, "scale_up", "workers")[1].reason)
    end)

    it("spreads a zone-spread Deployment over the zone groups, balanced, in one round", function()
      local groups = {}
      for _, z in ipairs{ "a", "b", "c" } do
        groups[#groups + 1] = t.group{ name = "zone-" .. z, max = 10, cpu = "4", memory = "16Gi",
                                       price = 0.2, labels = { ["topology.kubernetes.io/zone"] = z } }
      end
      local spread = { topologySpreadConstraints = { {
        maxSkew = 1, topologyKey = "topology.kubernetes.io/zone", whenUnsatisfiable = "DoNotSchedule",
        labelSelector = { matchLabels = { app = "api" } } } } }
      local pods = {}
      for i = 1, 6 do
        pods[i] = t.pod{ name = "api-" .. i, cpu = "2", memory = "1Gi", pending = true,
                         labels = { app = "api" }, spec = spread }
      end
      local r = engine{ groups = groups }:decide(t.cluster{ pods = pods }, NOW)
      assert.is_nil(r.error)
      assert.scales_up(r, "zone-a", 1)
      assert.scales_up(r, "zone-b", 1)
      assert.scales_up(r, "zone-c", 1)
      -- "never": one zone's group takes what its zone may hold, the rest wait
      r = engine{ groups = groups, params = { balance_similar_groups = "never" } }
        :decide(t.cluster{ pods = pods }, NOW)
      assert.is_nil(r.error)
      assert.is_true(#t.find(r, "scale_up") >= 1)
    end)

    it("gives a replica with hostname anti-affinity a node of its own", function()
      local anti = { affinity = { podAntiAffinity = { requiredDuringSchedulingIgnoredDuringExecution = { {
        labelSelector = { matchLabels = { app = "db" } }, topologyKey = "kubernetes.io/hostname" } } } } }
      local cluster = t.cluster{
        nodes = { t.node{ name = "w-1", group = "workers" } },
        pods = {
          t.pod{ name = "db-0", node = "w-1", cpu = "1", memory = "1Gi", labels = { app = "db" },
                 controller = "StatefulSet", spec = anti },
          t.pod{ name = "db-1", cpu = "1", memory = "1Gi", labels = { app = "db" }, pending = true,
                 controller = "StatefulSet", spec = anti },
        },
      }
      local r = engine():decide(cluster, NOW)
      assert.is_nil(r.error)
      assert.scales_up(r, "workers", 1)
    end)

    it("puts pending pods on nodes on their way in any group before buying", function()
      -- spot has one node launched and not registered yet (target 1, none
      -- there); on-demand is cheaper per node, so packing all four pods
      -- there would buy two nodes and leave spot's empty
      local groups = {
        t.group{ name = "spot", max = 10, cpu = "4", memory = "16Gi", price = 0.3, target = 1 },
        t.group{ name = "on-demand", max = 10, cpu = "4", memory = "16Gi", price = 0.2 },
      }
      local pods = {}
      for i = 1, 4 do
        pods[i] = t.pod{ name = "p-" .. i, cpu = "1500m", memory = "1Gi", pending = true }
      end
      local r = engine{ groups = groups }:decide(t.cluster{ pods = pods }, NOW)
      assert.scales_up(r, "on-demand", 1)
      assert.is_false(t.scales_up(r, "spot"))
      -- and when the nodes on their way take every pod, nothing is bought
      r = engine{ groups = groups }:decide(t.cluster{ pods = { pods[1], pods[2] } }, NOW)
      assert.no_actions(r)
    end)

    it("chooses the group that wastes least", function()
      local groups = {
        t.group{ name = "big", max = 10, cpu = "16", memory = "64Gi", price = 0.8 },
        t.group{ name = "small", max = 10, cpu = "2", memory = "8Gi", price = 0.1 },
      }
      local cluster = t.cluster{ pods = {
        t.pod{ name = "p", cpu = "1500m", memory = "6Gi", pending = true },
      } }
      local r = engine{ groups = groups }:decide(cluster, NOW)
      assert.is_true(t.scales_up(r, "small", 1))
      assert.is_false(t.scales_up(r, "big"))
    end)

    it("does not scale up for pods that fit no group, and says why", function()
      local cluster = t.cluster{ pods = {
        t.pod{ name = "huge", cpu = "64", memory = "1Gi", pending = true },
      } }
      local r = engine():decide(cluster, NOW)
      assert.is_nil(r.error)
      assert.is_false(t.scales_up(r, "workers"))
    end)

    it("stays within the group's max", function()
      local pods = {}
      for i = 1, 12 do
        pods[i] = t.pod{ name = "p" .. i, cpu = "3", memory = "1Gi", pending = true }
      end
      local cluster = t.cluster{ nodes = { t.node{ name = "w-1", group = "workers" } }, pods = pods }
      local r = engine{ max = 5 }:decide(cluster, NOW)
      assert.is_true(t.scales_up(r, "workers", 4))
    end)

    it("asks for nothing from a group already above its max, and logs the pods", function()
      local cluster = t.cluster{
        nodes = { t.node{ name = "w-1", group = "workers" }, t.node{ name = "w-2", group = "workers" } },
        pods = { t.pod{ name = "p", cpu = "3", memory = "1Gi", pending = true },
                 t.pod{ name = "x1", node = "w-1", cpu = "3500m" }, t.pod{ name = "x2", node = "w-2", cpu = "3500m" } },
      }
      local r = engine{ max = 1 }:decide(cluster, NOW)
      assert.is_false(t.scales_up(r, "workers"))
      assert.are.equal(0, #r.rejected)
      assert.matches("default/p", r.log[1])
    end)

    it("says a group that fits is backed off, not at its max", function()
      local cluster = t.cluster{
        pods = { t.pod{ name = "p", cpu = "3", memory = "1Gi", pending = true } },
        backoff = { workers = { ["for"] = "5m", reason = "instance i-1 never became a node" } },
      }
      local r = engine():decide(cluster, NOW)
      assert.is_false(t.scales_up(r, "workers"))
      local all = table.concat(r.log, "\n")
      assert.matches("workers: backed off until 2026%-11%-30T10:05:00Z %(instance i%-1 never became a node%)", all)
      assert.is_nil(all:find("at its max", 1, true))
    end)

    it("buys nothing for pods that fit a node that registered since the scheduler tried", function()
      local cluster = t.cluster{
        nodes = { t.node{ name = "w-1", group = "workers" }, t.node{ name = "w-2", group = "workers", age = 5 } },
        pods = { t.pod{ name = "busy", node = "w-1", cpu = "3500m" },
                 t.pod{ name = "a", cpu = "3", memory = "1Gi", pending = true },
                 t.pod{ name = "b", cpu = "3", memory = "1Gi", pending = true } },
      }
      local r = engine():decide(cluster, NOW)
      -- one of the two fits w-2; the other needs a new node
      assert.scales_up(r, "workers", 1)
      assert.matches("1 unschedulable pod%(s%) fit the nodes as they are now", r.log[1])
    end)

    it("ignores pods the scheduler has not marked unschedulable", function()
      local cluster = t.cluster{ pods = { t.pod{ name = "new", cpu = "1" } } }
      local r = engine():decide(cluster, NOW)
      assert.is_false(t.scales_up(r, "workers"))
    end)
  end)

  describe("scale down", function()
    local function idle_cluster(extra_pods)
      local pods = {
        t.pod{ name = "a", node = "w-1", cpu = "3", memory = "1Gi" },
        t.pod{ name = "b", node = "w-2", cpu = "3", memory = "1Gi" },
        t.pod{ name = "small", node = "w-3", cpu = "500m", memory = "1Gi" },
      }
      for _, p in ipairs(extra_pods or {}) do pods[#pods + 1] = p end
      return t.cluster{
        nodes = { t.node{ name = "w-1", group = "workers" }, t.node{ name = "w-2", group = "workers" },
                  t.node{ name = "w-3", group = "workers" } },
        pods = pods,
      }
    end

    it("removes a node only after it stayed under the threshold for unneeded_for", function()
      local e = engine()
      local r = e:decide(idle_cluster(), NOW)
      assert.is_false(t.deletes(r, "w-3"))
      assert.matches("for 0s of 10m", r.node["w-3"].why)

      r = e:decide(idle_cluster(), NOW + 300)
      assert.is_false(t.deletes(r, "w-3"))

      r = e:decide(idle_cluster(), NOW + 600)
      assert.is_true(t.drains(r, "w-3"))
      assert.is_true(t.deletes(r, "w-3"))
      assert.is_false(t.deletes(r, "w-1"))
      assert.is_true(r.node["w-3"].removable)
    end)

    it("removes several nodes in one round only when their pods fit together", function()
      -- w-2's and w-3's pods each fit in w-1's free core, but not both
      local cluster = t.cluster{
        nodes = { t.node{ name = "w-1", group = "workers" }, t.node{ name = "w-2", group = "workers" },
                  t.node{ name = "w-3", group = "workers" } },
        pods = { t.pod{ name = "big", node = "w-1", cpu = "3", memory = "1Gi" },
                 t.pod{ name = "a", node = "w-2", cpu = "800m", memory = "1Gi" },
                 t.pod{ name = "b", node = "w-3", cpu = "800m", memory = "1Gi" } },
      }
      local e = engine{ params = { max_scale_down = 2 }, safety = { max_scale_down_per_round = 2 } }
      e:decide(cluster, NOW)
      local r = e:decide(cluster, NOW + 700)
      assert.are.equal(1, #t.find(r, "delete"))
      assert.deletes(r, "w-2")
      assert.matches("no room for pod default/b", r.node["w-3"].why)
    end)

    it("takes the threshold and the duration from params", function()
      local e = engine{ params = { scale_down_utilization = 0.9, unneeded_for = "1m" } }
      e:decide(idle_cluster(), NOW)
      local r = e:decide(idle_cluster(), NOW + 60)
      -- w-1 and w-2 are at 0.75 < 0.9 now; only one removal per round
      assert.are.equal(1, #t.find(r, "delete"))
      assert.is_true(t.deletes(r, "w-3"))
    end)

    it("keeps a node whose pods have nowhere to go", function()
      local e = engine()
      local pods = { t.pod{ name = "big", node = "w-3", cpu = "1500m", memory = "1Gi" } }
      local cluster = t.cluster{
        nodes = { t.node{ name = "w-1", group = "workers" }, t.node{ name = "w-3", group = "workers" } },
        pods = { t.pod{ name = "a", node = "w-1", cpu = "3", memory = "1Gi" }, pods[1] },
      }
      e:decide(cluster, NOW)
      local r = e:decide(cluster, NOW + 700)
      assert.is_false(t.deletes(r, "w-3"))
      assert.matches("no room for pod default/big", r.node["w-3"].why)
    end)

    it("respects a PodDisruptionBudget that allows no disruption", function()
      local e = engine()
      local cluster = idle_cluster()
      cluster.pods[3].metadata.labels = { app = "db" }
      cluster.pdbs = { t.pdb{ name = "db", selector = { app = "db" }, allowed = 0 } }
      e:decide(cluster, NOW)
      local r = e:decide(cluster, NOW + 700)
      assert.is_false(t.deletes(r, "w-3"))
      assert.matches("PodDisruptionBudget default/db", r.node["w-3"].why)
    end)

    it("does not scale down while pods are pending", function()
      local e = engine()
      local pending = { t.pod{ name = "p", cpu = "8", memory = "1Gi", pending = true } }
      e:decide(idle_cluster(pending), NOW)
      local r = e:decide(idle_cluster(pending), NOW + 700)
      assert.is_false(t.deletes(r, "w-3"))
      assert.matches("waiting", r.node["w-3"].why)
    end)

    it("never goes below the group's min", function()
      local e = engine{ min = 3 }
      e:decide(idle_cluster(), NOW)
      local r = e:decide(idle_cluster(), NOW + 700)
      assert.is_false(t.deletes(r, "w-3"))
      assert.matches("at its min", r.node["w-3"].why)
    end)

    it("never removes a node running a protected pod", function()
      local e = engine{ safety = { protected_pod_selector = "critical=true" } }
      local cluster = idle_cluster()
      cluster.pods[3].metadata.labels = { critical = "true" }
      e:decide(cluster, NOW)
      local r = e:decide(cluster, NOW + 700)
      assert.is_false(t.deletes(r, "w-3"))
      assert.matches("default/small is protected", r.node["w-3"].why)
    end)

    it("logs the pods that fit no group", function()
      local cluster = t.cluster{ pods = {
        t.pod{ name = "huge", cpu = "64", memory = "1Gi", pending = true },
      } }
      local r = engine():decide(cluster, NOW)
      assert.matches("default/huge", r.log[1])
    end)
  end)
end)
