-- Spec for policies/batch.lua, run through the real engine (luascale.core).
local t = require "luascale.testing"

local POLICY = "../../policies/batch.lua"
local NOW = t.time("2026-11-30T10:00:00Z")
local TAINT = "luascale.io/draining"
local SINCE = "luascale.io/draining-since"

local function engine(o)
  o = o or {}
  local groups = o.groups or {
    t.group{ name = "workers", min = o.min or 0, max = o.max or 10, cpu = "4", memory = "16Gi", price = 0.2 },
  }
  -- the policy's own pace is under test: no disruption budget beyond it
  -- (the default, 10 % of a group, is safety_spec's)
  return t.engine{ policy = POLICY, groups = groups, params = o.params, safety = o.safety, now = NOW,
                   disruption = { budgets = { { nodes = "100%" } } } }
end

-- A worker node; draining_since = unix seconds marks it tainted and annotated
-- the way the policy leaves it.
local function node(name, o)
  o = o or {}
  local n = { name = name, group = "workers", labels = o.labels, age = o.age }
  if o.draining_since then
    n.taints = { { key = TAINT, value = "true", effect = "NoSchedule" } }
    n.annotations = { [SINCE] = tostring(o.draining_since) }
  end
  return t.node(n)
end

-- A pod of a Job, on node 'on' (nil: pending and unschedulable).
local function job(name, on, cpu, o)
  o = o or {}
  return t.pod{ name = name, node = on, pending = on == nil, cpu = cpu or "1", memory = "1Gi",
                controller = "Job", phase = o.phase, labels = o.labels }
end

local function web(name, on, cpu, o)
  o = o or {}
  return t.pod{ name = name, node = on, cpu = cpu or "500m", memory = "1Gi", labels = o.labels }
end

-- Does the plan set (value given) or remove (value nil) the annotation?
local function annotates(r, name, key, value)
  for _, a in ipairs(t.find(r, "annotate", name)) do
    if a.key == key and ((value == nil and a.remove) or (value ~= nil and a.value == value)) then
      return true
    end
  end
  return false
end

local function untaints(r, name)
  for _, a in ipairs(t.find(r, "taint", name)) do
    if a.key == TAINT and a.remove then return true end
  end
  return false
end

local function messages(r) return table.concat(r.log, "\n") end

describe("batch policy", function()
  describe("tainting idle nodes", function()
    it("taints an idle node first and terminates it only after soft_grace", function()
      local e = engine()
      local pods = { job("train", "w-1", "1"), web("api", "w-2") }
      local r = e:decide(t.cluster{ nodes = { node("w-1"), node("w-2") }, pods = pods })
      assert.no_error(r)
      assert.is_true(t.taints(r, "w-2", TAINT, "NoSchedule"))
      assert.is_true(annotates(r, "w-2", SINCE, tostring(NOW)))
      assert.never_deletes(r, "w-2")
      assert.is_false(t.taints(r, "w-1", TAINT))
      assert.matches("runs 1 job pod", r.node["w-1"].why)

      -- the next rounds see the node as the policy left it
      local cluster = t.cluster{ nodes = { node("w-1"), node("w-2", { draining_since = NOW }) }, pods = pods }
      r = e:advance("4m"):decide(cluster)
      assert.no_actions(r)
      assert.matches("draining for 4m, but soft_grace is 5m", r.node["w-2"].why)

      r = e:advance("1m"):decide(cluster)
      assert.drains(r, "w-2")
      assert.deletes(r, "w-2")
      assert.never_deletes(r, "w-1")
    end)

    it("counts only unfinished pods of the job kinds, taken from params", function()
      local cluster = t.cluster{
        nodes = { node("w-1"), node("w-2"), node("w-3") },
        pods = {
          job("busy", "w-1", "3"),
          job("done", "w-2", "3", { phase = "Succeeded" }), web("api", "w-2", "200m"),
          t.pod{ name = "flow", node = "w-3", cpu = "500m", memory = "1Gi", controller = "Workflow" },
        },
      }
      local r = engine():decide(cluster)
      assert.is_false(t.taints(r, "w-1", TAINT))
      assert.is_true(t.taints(r, "w-2", TAINT)) -- a completed job pod does not keep it
      assert.is_true(t.taints(r, "w-3", TAINT))

      r = engine{ params = { job_kinds = { "Job", "Workflow" } } }:decide(cluster)
      assert.is_false(t.taints(r, "w-3", TAINT))
      assert.matches("runs 1 job pod", r.node["w-3"].why)
    end)

    it("takes idle_below and min_node_age from params", function()
      local cluster = t.cluster{
        nodes = { node("w-1"), node("w-2", { age = 300 }) },
        pods = { web("a", "w-1", "1500m"), web("b", "w-2", "1") },
      }
      local r = engine():decide(cluster)
      assert.is_true(t.taints(r, "w-1", TAINT))
      assert.is_false(t.taints(r, "w-2", TAINT))
      assert.matches("age 5m is under min_node_age 10m", r.node["w-2"].why)

      r = engine{ params = { idle_below = 0.3, min_node_age = "1m" } }:decide(cluster)
      assert.is_false(t.taints(r, "w-1", TAINT))
      assert.matches("utilization 0.38 is not below 0.30", r.node["w-1"].why)
      assert.is_true(t.taints(r, "w-2", TAINT))
    end)

    it("does not taint while pods are pending, nor below the group's min", function()
      local cluster = t.cluster{
        nodes = { node("w-1"), node("w-2") },
        pods = { web("a", "w-1"), web("b", "w-2", "200m"), job("waiting", nil, "3900m") },
      }
      local r = engine():decide(cluster)
      assert.scales_up(r, "workers", 1)
      assert.is_false(t.taints(r, "w-1", TAINT))
      assert.matches("1 unschedulable pod%(s%) pending", r.node["w-1"].why)

      -- a pod no group could ever run does not count
      cluster.pods[3] = job("huge", nil, "64")
      r = engine():decide(cluster)
      assert.is_true(t.taints(r, "w-1", TAINT))

      cluster.pods[3] = nil
      r = engine{ min = 1 }:decide(cluster) -- two idle nodes, min 1: one is tainted
      assert.are.equal(1, #t.find(r, "taint"))
      assert.matches("at its min of 1", r.node["w-2"].why)
    end)

    it("never taints a node with a protected pod or a pod its PDB keeps", function()
      local cluster = t.cluster{
        nodes = { node("w-1"), node("w-2"), node("w-3") },
        pods = { web("hub", "w-1", "500m", { labels = { critical = "true" } }),
                 web("db", "w-2", "500m", { labels = { app = "db" } }) },
        pdbs = { t.pdb{ name = "db", selector = { app = "db" }, allowed = 0 } },
      }
      local r = engine{ safety = { protected_pod_selector = "critical=true" } }:decide(cluster)
      assert.is_false(t.taints(r, "w-1", TAINT))
      assert.matches("default/hub is protected", r.node["w-1"].why)
      assert.is_false(t.taints(r, "w-2", TAINT))
      assert.matches("PodDisruptionBudget default/db", r.node["w-2"].why)
      assert.is_true(t.taints(r, "w-3", TAINT))
    end)

    it("starts the clock on a node tainted by hand", function()
      local n = node("w-1")
      n.spec.taints = { { key = TAINT, value = "true", effect = "NoSchedule" } }
      local r = engine():decide(t.cluster{ nodes = { n } })
      assert.is_true(annotates(r, "w-1", SINCE, tostring(NOW)))
      assert.never_deletes(r, "w-1")
    end)
  end)

  describe("terminating draining nodes", function()
    it("never drains a node with a running job pod before hard_grace", function()
      local e = engine()
      local cluster = t.cluster{
        nodes = { node("w-1"), node("w-2", { draining_since = NOW }) },
        pods = { job("long", "w-2", "1") },
      }
      for _, later in ipairs({ "5m", "25m", "29m59s" }) do -- 5m, 30m, 59m59s after tainting
        local r = e:advance(later):decide(cluster)
        assert.never_deletes(r, "w-2")
        assert.matches("1 job pod%(s%) still running; hard_grace is 1h", r.node["w-2"].why)
      end
      assert.deletes(e:advance("1s"):decide(cluster), "w-2")
    end)

    it("terminates after hard_grace regardless of job pods", function()
      local cluster = t.cluster{
        nodes = { node("w-1"), node("w-2", { draining_since = NOW - 3600 }) },
        pods = { job("long", "w-2", "1"), job("stuck", "w-2", "1") },
      }
      local r = engine():decide(cluster)
      assert.drains(r, "w-2")
      assert.deletes(r, "w-2")
      assert.matches("regardless of its pods %(2 job pod%(s%)%)", t.find(r, "drain", "w-2")[1].reason)

      r = engine{ params = { hard_grace = "2h" } }:decide(cluster)
      assert.never_deletes(r, "w-2")
    end)

    it("at soft_grace, keeps a node whose other pods have nowhere to go", function()
      local cluster = t.cluster{
        nodes = { node("w-1"), node("w-2", { draining_since = NOW - 600 }) },
        pods = { job("busy", "w-1", "3500m"), web("big", "w-2", "1") },
      }
      local r = engine():decide(cluster)
      assert.never_deletes(r, "w-2")
      assert.matches("no room for pod default/big", r.node["w-2"].why)

      r = engine{ params = { soft_grace = "20m" } }:decide(t.cluster{
        nodes = { node("w-1"), node("w-2", { draining_since = NOW - 600 }) },
        pods = { web("small", "w-2", "100m") },
      })
      assert.never_deletes(r, "w-2")
      assert.matches("soft_grace is 20m", r.node["w-2"].why)
    end)

    it("ignores completed job pods on a draining node", function()
      local cluster = t.cluster{
        nodes = { node("w-1"), node("w-2", { draining_since = NOW - 600 }) },
        pods = { job("done", "w-2", "1", { phase = "Succeeded" }), job("failed", "w-2", "1", { phase = "Failed" }) },
      }
      local r = engine():decide(cluster)
      assert.drains(r, "w-2")
      assert.deletes(r, "w-2")
    end)

    it("removes empty draining nodes before evicting job pods", function()
      -- w-2 is past hard_grace with a job pod, w-3 empty past soft_grace; one removal per round
      local cluster = t.cluster{
        nodes = { node("w-1"), node("w-2", { draining_since = NOW - 7200 }),
                  node("w-3", { draining_since = NOW - 600 }) },
        pods = { job("busy", "w-1", "4"), job("long", "w-2", "1") },
      }
      local r = engine():decide(cluster)
      assert.deletes(r, "w-3")
      assert.never_deletes(r, "w-2")
      assert.matches("1 removal%(s%) per round reached", r.node["w-2"].why)
    end)

    it("lets a PodDisruptionBudget hold a node back, even past hard_grace", function()
      local db = { labels = { app = "db" } }
      local pdbs = { t.pdb{ name = "db", selector = { app = "db" }, allowed = 0 } }
      local soft = t.cluster{
        nodes = { node("w-1"), node("w-2", { draining_since = NOW - 600 }) },
        pods = { web("db-0", "w-2", "500m", db) }, pdbs = pdbs,
      }
      local r = engine():decide(soft)
      assert.never_deletes(r, "w-2")
      assert.matches("PodDisruptionBudget default/db allows 0", r.node["w-2"].why)

      local hard = t.cluster{
        nodes = { node("w-1"), node("w-2", { draining_since = NOW - 7200 }) },
        pods = { job("etl", "w-2", "1", db) }, pdbs = pdbs,
      }
      r = engine():decide(hard)
      assert.never_deletes(r, "w-2")
      assert.matches("PodDisruptionBudget default/db", t.rejected(r, "drain", "w-2"))
    end)

    it("never removes a node running a protected pod, even past hard_grace", function()
      local cluster = t.cluster{
        nodes = { node("w-1"), node("w-2", { draining_since = NOW - 7200 }) },
        pods = { job("etl", "w-2", "1", { labels = { critical = "true" } }) },
      }
      local r = engine{ safety = { protected_pod_selector = "critical=true" } }:decide(cluster)
      assert.never_deletes(r, "w-2")
      assert.matches("default/etl is protected", t.rejected(r, "delete", "w-2"))
    end)

    it("never goes below the group's min", function()
      local cluster = t.cluster{ nodes = { node("w-1", { draining_since = NOW - 600 }) } }
      local r = engine{ min = 1 }:decide(cluster)
      assert.never_deletes(r, "w-1")
      assert.matches("at its min of 1", r.node["w-1"].why)
    end)

    local function fleet(busy)
      -- 6 empty draining nodes past soft_grace, 'busy' full nodes, and an
      -- idle control plane that is not counted
      local nodes, pods = { t.node{ name = "cp-1", cpu = "32", memory = "128Gi" } }, {}
      for i = 1, 6 do nodes[#nodes + 1] = node("d-" .. i, { draining_since = NOW - 600 - i }) end
      for i = 1, busy do
        nodes[#nodes + 1] = node("b-" .. i)
        pods[#pods + 1] = job("j-" .. i, "b-" .. i, "4")
      end
      return t.cluster{ nodes = nodes, pods = pods }
    end
    local safety = { max_scale_down_per_round = 10 }

    it("removes fast_removals_per_round nodes while the cluster is mostly idle", function()
      -- 4 of 28 cores requested: 0.14 < fast_below 0.3
      local r = engine{ safety = safety }:decide(fleet(1))
      assert.are.equal(5, #t.find(r, "delete"))
      assert.are.equal(0, #r.rejected)
      assert.deletes(r, "d-6") -- the longest draining go first
      assert.never_deletes(r, "d-1")
      assert.matches("5 removal%(s%) per round reached %(utilization 0.14 below 0.30%)", r.node["d-1"].why)
    end)

    it("removes slow_removals_per_round nodes once the cluster is busier", function()
      -- 16 of 40 cores requested: 0.40 >= fast_below 0.3
      local r = engine{ safety = safety }:decide(fleet(4))
      assert.are.equal(1, #t.find(r, "delete"))
      assert.matches("utilization 0.40 not below 0.30", r.node["d-1"].why)
    end)

    it("takes the rates and fast_below from params", function()
      local r = engine{ safety = safety, params = { fast_below = 0.5, fast_removals_per_round = 3 } }
        :decide(fleet(4))
      assert.are.equal(3, #t.find(r, "delete"))
      r = engine{ safety = safety, params = { slow_removals_per_round = 2 } }:decide(fleet(4))
      assert.are.equal(2, #t.find(r, "delete"))
    end)

    it("is capped by safety.max_scale_down_per_round too", function()
      local r = engine{ safety = { max_scale_down_per_round = 2 } }:decide(fleet(1))
      assert.are.equal(2, #t.find(r, "delete"))
      assert.is_not_nil(t.rejected(r, "delete"))
    end)
  end)

  describe("scale up", function()
    it("untaints a draining node that can take the pending pods instead of scaling up", function()
      local cluster = t.cluster{
        nodes = { node("w-1"), node("w-2", { draining_since = NOW - 600 }) },
        pods = { job("busy", "w-1", "4"), job("new", nil, "2"), job("new2", nil, "1") },
      }
      local r = engine():decide(cluster)
      assert.no_error(r)
      assert.is_true(untaints(r, "w-2"))
      assert.is_true(annotates(r, "w-2", SINCE, nil))
      assert.is_not.scales_up(r, "workers")
      assert.never_deletes(r, "w-2")
      assert.matches("2 pending pod%(s%) fit here", r.node["w-2"].why)
    end)

    it("brings back the most recently tainted node first", function()
      local cluster = t.cluster{
        nodes = { node("w-1"), node("w-2", { draining_since = NOW - 900 }),
                  node("w-3", { draining_since = NOW - 120 }) },
        pods = { job("busy", "w-1", "4"), job("new", nil, "2") },
      }
      local r = engine():decide(cluster)
      assert.is_true(untaints(r, "w-3"))
      assert.is_false(untaints(r, "w-2"))
      assert.deletes(r, "w-2")
    end)

    it("scales up for the pods a draining node cannot take", function()
      local cluster = t.cluster{
        nodes = { node("w-1"), node("w-2", { draining_since = NOW - 600 }) },
        pods = { job("busy", "w-1", "4"), web("small", "w-2", "1"),
                 t.pod{ name = "a", cpu = "2", memory = "1Gi", pending = true },
                 t.pod{ name = "b", cpu = "2", memory = "1Gi", pending = true } },
      }
      -- w-2 has 3 cores free: it takes one pod, a new node takes the other
      local r = engine():decide(cluster)
      assert.is_true(untaints(r, "w-2"))
      assert.scales_up(r, "workers", 1)
      assert.never_deletes(r, "w-2")

      -- a pod that needs a label w-2 lacks does not bring it back, though
      -- new nodes of its group would carry it
      cluster.nodes[2] = node("w-2", { draining_since = NOW - 600, labels = { zone = "b" } })
      cluster.pods[3] = t.pod{ name = "a", cpu = "1", memory = "1Gi", pending = true,
                               node_selector = { zone = "a" } }
      cluster.pods[4] = nil
      local groups = {
        t.group{ name = "workers", max = 10, cpu = "4", memory = "16Gi", price = 0.2, labels = { zone = "a" } },
      }
      r = engine{ groups = groups }:decide(cluster)
      assert.is_false(untaints(r, "w-2"))
      assert.scales_up(r, "workers", 1)
    end)

    it("does not untaint a node whose other taints the pending pods do not tolerate", function()
      local gpu_taint = { key = "nvidia.com/gpu", value = "present", effect = "NoSchedule" }
      local groups = {
        t.group{ name = "gpu", max = 4, cpu = "8", memory = "32Gi", price = 1.2, taints = { gpu_taint } },
        t.group{ name = "workers", max = 4, cpu = "4", memory = "16Gi", price = 0.2 },
      }
      local g1 = t.node{ name = "g-1", group = "gpu", cpu = "8", memory = "32Gi",
                         taints = { { key = TAINT, value = "true", effect = "NoSchedule" }, gpu_taint },
                         annotations = { [SINCE] = tostring(NOW - 60) } }
      local cluster = t.cluster{ nodes = { g1 }, pods = { t.pod{ name = "cpu-job", cpu = "1", memory = "1Gi",
                                                                pending = true, controller = "Job" } } }
      local r = engine{ groups = groups }:decide(cluster)
      assert.is_false(untaints(r, "g-1"))
      assert.scales_up(r, "workers", 1)
    end)

    it("grows the cheapest group per pod, two groups in one round", function()
      local groups = {
        t.group{ name = "workers", max = 10, cpu = "4", memory = "16Gi", price = 0.2 },
        t.group{ name = "big", max = 10, cpu = "16", memory = "64Gi", price = 2 },
        t.group{ name = "gpu", max = 2, cpu = "8", memory = "32Gi", price = 1.2, extra = { ["nvidia.com/gpu"] = 1 } },
      }
      local pods = {
        t.pod{ name = "a", cpu = "1", memory = "1Gi", pending = true, controller = "Job" },
        t.pod{ name = "b", cpu = "1", memory = "1Gi", pending = true, controller = "Job" },
        t.pod{ name = "g", cpu = "1", memory = "1Gi", pending = true, controller = "Job",
               extra = { ["nvidia.com/gpu"] = 1 } },
      }
      local r = engine{ groups = groups }:decide(t.cluster{ pods = pods })
      assert.scales_up(r, "workers", 1)
      assert.scales_up(r, "gpu", 1)
      assert.is_not.scales_up(r, "big")
    end)

    it("does not scale up for pods that fit no group, and logs why", function()
      local r = engine():decide(t.cluster{ pods = { t.pod{ name = "huge", cpu = "64", memory = "1Gi", pending = true } } })
      assert.are.equal(0, #t.find(r, "scale_up"))
      assert.matches("default/huge fits no node group: workers: insufficient cpu", messages(r))
    end)

    it("stops at the group's max", function()
      local pods = {}
      for i = 1, 4 do pods[i] = t.pod{ name = "p" .. i, cpu = "3", memory = "1Gi", pending = true } end
      local r = engine{ max = 2 }:decide(t.cluster{ nodes = { node("w-1") }, pods = pods })
      assert.scales_up(r, "workers", 1)
      assert.matches("no room left within its max of 2", messages(r))
    end)
  end)
end)
