-- Spec for policies/binpack.lua, run through the real engine (luascale.core).
local t = require "luascale.testing"

local POLICY = "../../policies/binpack.lua"
local NOW = t.time("2026-11-30T10:00:00Z")

local function workers(o)
  o = o or {}
  return t.group{ name = "workers", min = o.min or 1, max = o.max or 10, cpu = "4",
                  memory = "16Gi", price = 0.2 }
end

local function engine(o)
  o = o or {}
  -- the policy's own pace is under test: no disruption budget beyond it
  -- unless a spec gives one (the default, 10 % of a group, is safety_spec's)
  return t.engine{ policy = POLICY, groups = o.groups or { workers(o) }, params = o.params,
                   safety = o.safety, disruption = o.disruption or { budgets = { { nodes = "100%" } } } }
end

-- n pending pods of 'cpu' each, named prefix1..prefixN
local function pending(n, cpu, prefix, extra)
  local out = {}
  for i = 1, n do
    local o = { name = (prefix or "p") .. i, cpu = cpu, memory = "512Mi", pending = true }
    for k, v in pairs(extra or {}) do o[k] = v end
    out[i] = t.pod(o)
  end
  return out
end

local function messages(r) return table.concat(r.log, "\n") end

describe("binpack policy", function()
  describe("scale up", function()
    local big_small = function(big_price)
      return {
        t.group{ name = "big", max = 10, cpu = "16", memory = "64Gi", price = big_price },
        t.group{ name = "small", max = 10, cpu = "4", memory = "16Gi", price = 0.3 },
      }
    end

    it("grows the group with the lowest price per placed pod, even when it wastes more", function()
      -- 5 pods of 2 cores: small needs 3 nodes (0.9/h, 0.18 per pod, 17% idle),
      -- big needs 1 node (0.8/h, 0.16 per pod, 38% idle)
      local cluster = t.cluster{ pods = pending(5, "2") }
      local r = engine{ groups = big_small(0.8) }:decide(cluster, NOW)
      assert.no_error(r)
      assert.scales_up(r, "big", 1)
      assert.is_not.scales_up(r, "small")
      assert.matches("per pod", t.find(r, "scale_up", "big")[1].reason)

      -- at 1.0/h the big node costs 0.20 per pod: small is cheaper now
      r = engine{ groups = big_small(1.0) }:decide(cluster, NOW)
      assert.scales_up(r, "small", 3)
      assert.is_not.scales_up(r, "big")
    end)

    it("breaks a price tie by the number of pods placed", function()
      -- both groups cost nothing; only 'roomy' can take all 3 pods within its max
      local groups = {
        t.group{ name = "narrow", max = 1, cpu = "4", memory = "16Gi", price = 0 },
        t.group{ name = "roomy", max = 5, cpu = "4", memory = "16Gi", price = 0 },
      }
      local r = engine{ groups = groups }:decide(t.cluster{ pods = pending(3, "3") }, NOW)
      assert.scales_up(r, "roomy", 3)
      assert.is_not.scales_up(r, "narrow")
    end)

    it("then by less waste, then by name", function()
      local groups = {
        t.group{ name = "a-wide", max = 5, cpu = "16", memory = "64Gi", price = 0.2 },
        t.group{ name = "b-snug", max = 5, cpu = "4", memory = "16Gi", price = 0.2 },
        t.group{ name = "c-snug", max = 5, cpu = "4", memory = "16Gi", price = 0.2 },
      }
      local r = engine{ groups = groups }:decide(t.cluster{ pods = pending(1, "3") }, NOW)
      assert.scales_up(r, "b-snug", 1)
      assert.are.equal(1, #t.find(r, "scale_up"))
    end)

    it("grows two groups in one round: CPU pods and a GPU pod", function()
      local groups = {
        workers(),
        t.group{ name = "gpu", max = 4, cpu = "8", memory = "32Gi", price = 1.2,
                 extra = { ["nvidia.com/gpu"] = 1 },
                 taints = { { key = "nvidia.com/gpu", value = "present", effect = "NoSchedule" } } },
      }
      local pods = pending(3, "1")
      pods[#pods + 1] = t.pod{ name = "train", cpu = "2", memory = "8Gi", pending = true,
                               extra = { ["nvidia.com/gpu"] = 1 },
                               tolerations = { { key = "nvidia.com/gpu", operator = "Exists",
                                                 effect = "NoSchedule" } } }
      local r = engine{ groups = groups }:decide(t.cluster{ pods = pods }, NOW)
      assert.no_error(r)
      assert.scales_up(r, "workers", 1)
      assert.scales_up(r, "gpu", 1)
      assert.are.equal(0, #r.log)
    end)

    it("uses nodes already on their way before buying new ones", function()
      local g = workers()
      g.target = 2 -- two nodes asked for, none registered yet
      local r = engine{ groups = { g } }:decide(t.cluster{ pods = pending(4, "1500m") }, NOW)
      assert.is_not.scales_up(r, "workers")
      r = engine{ groups = { g } }:decide(t.cluster{ pods = pending(6, "1500m") }, NOW)
      assert.scales_up(r, "workers", 1)
    end)

    it("does not scale up for pods that fit no group, and logs why", function()
      local cluster = t.cluster{ pods = {
        t.pod{ name = "huge", cpu = "64", memory = "1Gi", pending = true },
      } }
      local r = engine():decide(cluster, NOW)
      assert.no_error(r)
      assert.is_not.scales_up(r, "workers")
      assert.matches("default/huge fits no node group: workers: insufficient cpu", messages(r))
    end)

    it("stops at a group's max and logs the pods left over", function()
      local groups = {
        t.group{ name = "cheap", max = 2, cpu = "4", memory = "16Gi", price = 0.1 },
        t.group{ name = "dear", max = 10, cpu = "4", memory = "16Gi", price = 0.5 },
      }
      local pods = pending(3, "3")
      pods[#pods + 1] = t.pod{ name = "busy-1", node = "c-1", cpu = "3500m" } -- full
      local cluster = t.cluster{ nodes = { t.node{ name = "c-1", group = "cheap" } }, pods = pods }
      -- cheap may add one node, so the other two pods go to the dearer group
      local r = engine{ groups = groups }:decide(cluster, NOW)
      assert.scales_up(r, "cheap", 1)
      assert.scales_up(r, "dear", 2)

      -- with both groups at their max nothing is bought and each pod is reported
      groups[2] = t.group{ name = "dear", max = 0, cpu = "4", memory = "16Gi", price = 0.5 }
      cluster.nodes[2] = t.node{ name = "c-2", group = "cheap" }
      cluster.pods[#cluster.pods + 1] = t.pod{ name = "busy-2", node = "c-2", cpu = "3500m" }
      r = engine{ groups = groups }:decide(cluster, NOW)
      assert.are.equal(0, #t.find(r, "scale_up"))
      assert.matches("default/p1 fits no node group: cheap: no room left within its max of 2", messages(r))
      assert.matches("default/p3", messages(r))
    end)

    it("says a backed-off group is backed off until when, and why, not at its max", function()
      local cluster = t.cluster{
        nodes = { t.node{ name = "w-1", group = "workers" } },
        pods = { t.pod{ name = "busy", node = "w-1", cpu = "3500m" },
                 t.pod{ name = "p", cpu = "3", memory = "512Mi", pending = true } },
        backoff = { workers = { ["for"] = "5m", reason = "InsufficientInstanceCapacity: none left" } },
      }
      local r = engine():decide(cluster, NOW)
      assert.no_error(r)
      assert.is_not.scales_up(r, "workers")
      assert.matches("default/p fits no node group: workers: backed off until 2026%-11%-30T10:05:00Z "
                     .. "%(InsufficientInstanceCapacity: none left%)", messages(r))
      assert.is_nil(messages(r):find("within its max", 1, true))
    end)

    it("adds nothing to a group already above its max", function()
      -- the max was lowered to 1 while 2 nodes run: no room, not unlimited room
      local g = workers{ max = 1 }
      local pods = pending(2, "3")
      pods[3] = t.pod{ name = "busy-1", node = "w-1", cpu = "3500m" }
      pods[4] = t.pod{ name = "busy-2", node = "w-2", cpu = "3500m" }
      local cluster = t.cluster{
        nodes = { t.node{ name = "w-1", group = "workers" }, t.node{ name = "w-2", group = "workers" } },
        pods = pods,
      }
      local r = engine{ groups = { g } }:decide(cluster, NOW)
      assert.are.equal(0, #t.find(r, "scale_up"))
      assert.are.equal(0, #r.rejected)
      assert.matches("default/p1 fits no node group: workers: no room left", messages(r))
    end)

    it("ignores pods the scheduler has not marked unschedulable", function()
      local r = engine():decide(t.cluster{ pods = { t.pod{ name = "new", cpu = "1" } } }, NOW)
      assert.no_actions(r)
    end)
  end)

  describe("consolidation", function()
    -- w-1 75%, w-2 50%, w-3 25% cpu requested
    local function cluster(o)
      o = o or {}
      local pods = {
        t.pod{ name = "a", node = "w-1", cpu = "3", memory = "1Gi" },
        t.pod{ name = "b", node = "w-2", cpu = "2", memory = "1Gi" },
        t.pod{ name = "c", node = "w-3", cpu = "1", memory = "1Gi", labels = o.c_labels },
      }
      for _, p in ipairs(o.pods or {}) do pods[#pods + 1] = p end
      return t.cluster{
        nodes = { t.node{ name = "w-1", group = "workers" }, t.node{ name = "w-2", group = "workers" },
                  t.node{ name = "w-3", group = "workers", age = o.w3_age },
                  t.node{ name = "cp-1", taints = { { key = "node-role.kubernetes.io/control-plane",
                                                      effect = "NoSchedule" } } } },
        pods = pods, pdbs = o.pdbs,
      }
    end

    it("removes the least utilized node when its pods fit elsewhere", function()
      local r = engine():decide(cluster(), NOW)
      assert.no_error(r)
      assert.drains(r, "w-3")
      assert.deletes(r, "w-3")
      assert.never_deletes(r, "w-2")
      assert.never_deletes(r, "w-1")
      assert.is_true(r.node["w-3"].removable)
      assert.matches("max_removals_per_round %(1%) reached", r.node["w-2"].why)
      assert.matches("not below 0.60", r.node["w-1"].why)
      assert.matches("not in a managed node group", r.node["cp-1"].why)
    end)

    it("keeps a node whose pods have nowhere to go and takes the next one", function()
      -- w-3's pod only runs on w-3 (nodeSelector), so w-3 stays; w-2's pod fits on w-3
      local c = t.cluster{
        nodes = { t.node{ name = "w-1", group = "workers" }, t.node{ name = "w-2", group = "workers" },
                  t.node{ name = "w-3", group = "workers", labels = { disk = "ssd" } } },
        pods = {
          t.pod{ name = "a", node = "w-1", cpu = "3500m", memory = "1Gi" },
          t.pod{ name = "b", node = "w-2", cpu = "2", memory = "1Gi" },
          t.pod{ name = "ssd-app", node = "w-3", cpu = "1500m", memory = "1Gi",
                 node_selector = { disk = "ssd" } },
        },
      }
      local r = engine():decide(c, NOW)
      assert.never_deletes(r, "w-3")
      assert.matches("no room for pod default/ssd%-app", r.node["w-3"].why)
      assert.drains(r, "w-2")
      assert.deletes(r, "w-2")
    end)

    it("removes at most max_removals_per_round nodes", function()
      local nodes, pods = {}, {}
      for i = 1, 5 do
        nodes[i] = t.node{ name = "w-" .. i, group = "workers" }
        pods[i] = t.pod{ name = "p" .. i, node = "w-" .. i, cpu = "500m", memory = "1Gi" }
      end
      local c = t.cluster{ nodes = nodes, pods = pods }
      local r = engine{ safety = { max_scale_down_per_round = 5 } }:decide(c, NOW)
      assert.are.equal(1, #t.find(r, "delete"))

      r = engine{ params = { max_removals_per_round = 3 }, safety = { max_scale_down_per_round = 5 } }
        :decide(c, NOW)
      assert.are.equal(3, #t.find(r, "delete"))
      assert.are.equal(3, #t.find(r, "drain"))
      assert.are.equal(0, #r.rejected)
    end)

    it("counts the pods of every node removed in the round", function()
      -- each of w-1's and w-2's pods alone fits in w-3's last free core; both do not
      local c = t.cluster{
        nodes = { t.node{ name = "w-1", group = "workers" }, t.node{ name = "w-2", group = "workers" },
                  t.node{ name = "w-3", group = "workers" } },
        pods = {
          t.pod{ name = "a", node = "w-1", cpu = "1", memory = "1Gi" },
          t.pod{ name = "b", node = "w-2", cpu = "1", memory = "1Gi" },
          t.pod{ name = "c", node = "w-3", cpu = "3", memory = "1Gi" },
        },
      }
      local r = engine{ params = { max_removals_per_round = 2 }, safety = { max_scale_down_per_round = 5 } }
        :decide(c, NOW)
      assert.are.equal(1, #t.find(r, "delete"))
      assert.deletes(r, "w-1")
      assert.never_deletes(r, "w-2")
      assert.matches("no room for pod default/b", r.node["w-2"].why)

      -- the same with labels: both pods need the one ssd node's last core
      c = t.cluster{
        nodes = { t.node{ name = "w-1", group = "workers" },
                  t.node{ name = "w-2", group = "workers", labels = { disk = "ssd" } },
                  t.node{ name = "w-3", group = "workers" }, t.node{ name = "w-4", group = "workers" } },
        pods = {
          t.pod{ name = "a", node = "w-1", cpu = "3", memory = "1Gi" },
          t.pod{ name = "b", node = "w-2", cpu = "3", memory = "1Gi" },
          t.pod{ name = "s1", node = "w-3", cpu = "1", memory = "1Gi", node_selector = { disk = "ssd" } },
          t.pod{ name = "s2", node = "w-4", cpu = "1", memory = "1Gi", node_selector = { disk = "ssd" } },
        },
      }
      r = engine{ params = { max_removals_per_round = 2 }, safety = { max_scale_down_per_round = 5 } }
        :decide(c, NOW)
      assert.are.equal(1, #t.find(r, "delete"))
      assert.deletes(r, "w-3")
    end)

    it("leaves nodes that are not Ready or are cordoned alone", function()
      local c = cluster()
      c.nodes[3] = t.node{ name = "w-3", group = "workers", ready = false }
      local r = engine():decide(c, NOW)
      assert.never_deletes(r, "w-3")
      assert.matches("not Ready", r.node["w-3"].why)

      c.nodes[3] = t.node{ name = "w-3", group = "workers", unschedulable = true }
      r = engine():decide(c, NOW)
      assert.never_deletes(r, "w-3")
      assert.matches("cordoned", r.node["w-3"].why)
    end)

    it("takes the threshold and the minimum age from params", function()
      local young = cluster{ w3_age = 300 }
      local r = engine():decide(young, NOW)
      assert.never_deletes(r, "w-3")
      assert.matches("age 5m is under min_node_age 10m", r.node["w-3"].why)
      assert.deletes(r, "w-2") -- the next least utilized

      r = engine{ params = { min_node_age = "1m" } }:decide(young, NOW)
      assert.deletes(r, "w-3")

      -- (without replacements: w-2's and w-3's pods would fit one new node)
      r = engine{ params = { consolidate_below = 0.2, consolidation = false } }:decide(cluster(), NOW)
      assert.no_actions(r)
      assert.matches("utilization 0.25 is not below 0.20", r.node["w-3"].why)
    end)

    it("does not consolidate while pods are pending", function()
      local waiting = t.pod{ name = "waiting", cpu = "3500m", memory = "1Gi", pending = true }
      local r = engine():decide(cluster{ pods = { waiting } }, NOW)
      assert.scales_up(r, "workers", 1)
      assert.never_deletes(r, "w-3")
      assert.matches("1 unschedulable pod%(s%) pending", r.node["w-3"].why)
    end)

    it("is not held back by a pending pod that no group could ever run", function()
      local huge = t.pod{ name = "huge", cpu = "64", memory = "1Gi", pending = true }
      local r = engine():decide(cluster{ pods = { huge } }, NOW)
      assert.deletes(r, "w-3")
      assert.matches("default/huge fits no node group", messages(r))
    end)

    it("never goes below the group's min", function()
      local r = engine{ min = 3 }:decide(cluster(), NOW)
      assert.never_deletes(r, "w-3")
      assert.matches("at its min of 3", r.node["w-3"].why)
    end)

    it("never removes a node running a protected pod", function()
      local r = engine{ safety = { protected_pod_selector = "critical=true" } }
        :decide(cluster{ c_labels = { critical = "true" } }, NOW)
      assert.never_deletes(r, "w-3")
      assert.matches("default/c is protected", r.node["w-3"].why)
    end)

    it("respects a PodDisruptionBudget that allows no disruption", function()
      local c = cluster{ c_labels = { app = "db" },
                         pdbs = { t.pdb{ name = "db", selector = { app = "db" }, allowed = 0 } } }
      local r = engine():decide(c, NOW)
      assert.never_deletes(r, "w-3")
      assert.matches("PodDisruptionBudget default/db", r.node["w-3"].why)
    end)

    it("ignores completed pods: they neither keep a node nor need room", function()
      -- w-2 and w-3 hold only finished pods bigger than all the free room left
      local c = t.cluster{
        nodes = { t.node{ name = "w-1", group = "workers" }, t.node{ name = "w-2", group = "workers" },
                  t.node{ name = "w-3", group = "workers" } },
        pods = {
          t.pod{ name = "a", node = "w-1", cpu = "3500m", memory = "1Gi" },
          t.pod{ name = "done", node = "w-2", cpu = "3", memory = "1Gi", phase = "Succeeded", controller = "Job" },
          t.pod{ name = "failed", node = "w-3", cpu = "3", memory = "1Gi", phase = "Failed", controller = "Job" },
        },
      }
      local r = engine{ min = 0, params = { max_removals_per_round = 2 },
                        safety = { max_scale_down_per_round = 5 } }:decide(c, NOW)
      assert.deletes(r, "w-2")
      assert.deletes(r, "w-3")
      assert.never_deletes(r, "w-1")
    end)
  end)
end)
