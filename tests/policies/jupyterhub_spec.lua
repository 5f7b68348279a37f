-- Spec for policies/jupyterhub.lua, run through the real engine (luascale.core).
-- Nodes are 4 cpu / 16Gi; user pods are bare pods (KubeSpawner makes them
-- without a controller) asking 1Gi, so cpu sets the utilization.
local t = require "luascale.testing"

local POLICY = "../../policies/jupyterhub.lua"
local NOW = t.time("2026-11-30T10:00:00Z")
local MARK = "luascale.io/cordoned-for-scale-down"
local CRITICAL = "hub.jupyter.org/autoscaler-critical"
local OMIT = "hub.jupyter.org/autoscaler-omit"

local function engine(o)
  o = o or {}
  return t.engine{
    policy = POLICY,
    groups = o.groups or { t.group{ name = "user", min = o.min or 0, max = o.max or 20,
                                    cpu = "4", memory = "16Gi" } },
    params = o.params,
    safety = o.safety or { max_scale_down_per_round = 5, protected_pod_selector = CRITICAL },
    -- the policy's own pace is under test: no disruption budget beyond it
    disruption = { budgets = { { nodes = "100%" } } },
  }
end

-- A node of the "user" group. o.marked: cordoned by luascale an hour ago;
-- o.cordoned: cordoned by an admin.
local function node(name, o)
  o = o or {}
  local ann
  if o.marked then ann = { [o.mark_key or MARK] = tostring(NOW - 3600) } end
  return t.node{ name = name, group = o.group or "user", unschedulable = o.marked or o.cordoned,
                 annotations = ann, ready = o.ready, age = o.age }
end

-- A student's pod on 'on' asking 'cpu'.
local function user(name, on, cpu, o)
  o = o or {}
  return t.pod{ name = name, namespace = o.namespace or "jhub", node = on, cpu = cpu,
                memory = "1Gi", controller = false, labels = o.labels, phase = o.phase }
end

local function pending(name, cpu)
  return t.pod{ name = name, namespace = "jhub", cpu = cpu, memory = "1Gi", controller = false,
                pending = true }
end

-- 'n' schedulable nodes u-1..u-n, each with one user pod asking 'cpu'.
local function loaded(n, cpu, extra_nodes, extra_pods)
  local nodes, pods = {}, {}
  for i = 1, n do
    nodes[i] = node("u-" .. i)
    pods[i] = user("s-" .. i, "u-" .. i, cpu)
  end
  for _, x in ipairs(extra_nodes or {}) do nodes[#nodes + 1] = x end
  for _, x in ipairs(extra_pods or {}) do pods[#pods + 1] = x end
  return t.cluster{ nodes = nodes, pods = pods }
end

-- Changes the cpu request of the pod named 'name' in a mocked cluster.
local function set_cpu(cluster, name, cpu)
  for _, p in ipairs(cluster.pods) do
    if p.metadata.name == name then p.spec.containers[1].resources.requests.cpu = cpu end
  end
end

local function annotation(r, node_name, key)
  for _, a in ipairs(t.find(r, "annotate", node_name)) do
    if a.key == key then return a end
  end
  return nil
end

describe("jupyterhub policy", function()
  describe("inside the band", function()
    it("does nothing at 0.66, although a cordon would keep the rest under the target", function()
      -- 10 x 2.64 / 10 x 4 = 0.66; without one node: 26.4 / 36 = 0.73
      local r = engine():decide(loaded(10, "2640m"), NOW)
      assert.no_error(r)
      assert.no_actions(r)
      assert.matches("utilization 0.66 is not below 0.65", r.node["u-1"].why)
    end)

    it("does nothing at 0.84", function()
      local r = engine():decide(loaded(10, "3360m"), NOW)
      assert.no_error(r)
      assert.no_actions(r)
    end)
  end)

  describe("utilization", function()
    it("counts only schedulable, Ready nodes", function()
      -- 7.2 / 8 = 0.9 on u-1, u-2; an admin-cordoned node and a node NotReady
      -- for two days would bring it to 0.45 if they counted
      local cluster = loaded(2, "3600m", {
        node("admin", { cordoned = true }),
        node("broken", { ready = false, age = 2 * 86400 }),
      })
      local r = engine():decide(cluster, NOW)
      assert.no_error(r)
      -- 7.2 / 0.75 = 9.6 cpu: one more 4-cpu node
      assert.scales_up(r, "user", 1)
      assert.matches("utilization 0.90 above 0.85", t.find(r, "scale_up", "user")[1].reason)
      assert.is_false(t.uncordons(r, "admin"))
    end)

    it("counts a node that is still booting as capacity on its way", function()
      local cluster = loaded(2, "3600m", { node("booting", { ready = false, age = 60 }) })
      local r = engine():decide(cluster, NOW)
      assert.no_error(r)
      assert.is_not.scales_up(r, "user")
      assert.matches("covered by", r.log[1])
    end)

    it("counts nodes the cloud is still launching", function()
      local e = engine{ groups = { t.group{ name = "user", max = 20, target = 3 } } }
      local r = e:decide(loaded(2, "3600m"), NOW)
      assert.no_error(r)
      assert.is_not.scales_up(r, "user")
    end)
  end)

  describe("scale up", function()
    it("adds the nodes that bring utilization back to the target", function()
      -- 4 x 3.8 = 15.2 cpu; 15.2 / 0.75 = 20.3 cpu: two more nodes
      local r = engine():decide(loaded(4, "3800m"), NOW)
      assert.scales_up(r, "user", 2)
    end)

    it("packs pending pods onto new nodes", function()
      local cluster = loaded(2, "3", {}, { pending("p-1", "3"), pending("p-2", "3") })
      local r = engine():decide(cluster, NOW)
      assert.no_error(r)
      assert.scales_up(r, "user", 2)
      assert.matches("2 pending pod", t.find(r, "scale_up", "user")[1].reason)
    end)

    it("adds a node for a pending pod that fits no node, even at low utilization", function()
      -- 10 x 2 / 40 = 0.5 with the pod; no node has 3.5 cpu free
      local r = engine():decide(loaded(10, "2", {}, { pending("big", "3500m") }), NOW)
      assert.scales_up(r, "user", 1)
      assert.is_false(t.cordons(r, "u-1"))
    end)

    it("does not scale up for pending pods that fit no group, and logs why", function()
      local cluster = loaded(2, "3", {}, { pending("huge", "64") })
      local r = engine():decide(cluster, NOW)
      assert.no_error(r)
      assert.is_not.scales_up(r, "user")
      assert.are.equal(1, #r.log)
      assert.matches("fit no managed node group", r.log[1])
      assert.matches("jhub/huge %(user: insufficient cpu", r.log[1])
    end)

    it("does not let a pod that fits no group hold back scale-down", function()
      local cluster = loaded(10, "1", {}, { pending("huge", "64") })
      local r = engine():decide(cluster, NOW)
      assert.cordons(r, "u-1")
    end)

    it("stops at the group's max by itself, and says so", function()
      local cluster = loaded(3, "3800m", {}, { pending("p-1", "3") })
      local r = engine{ max = 3 }:decide(cluster, NOW)
      assert.no_error(r)
      assert.is_not.scales_up(r, "user")
      assert.is_nil(t.rejected(r, "scale_up", "spot")) -- the policy held back, not the safety checks
      assert.matches("at their max %(user 3%)", table.concat(r.log, "\n"))
    end)

    it("puts pending pods on nodes on their way, and adds none beyond the max", function()
      -- max 4, three registered and one coming: one pod waits for it, one has no room
      local e = engine{ groups = { t.group{ name = "user", max = 4, target = 4 } } }
      local r = e:decide(loaded(3, "3", {}, { pending("p-1", "3"), pending("p-2", "3") }), NOW)
      assert.no_error(r)
      assert.is_not.scales_up(r, "user")
      assert.is_nil(t.rejected(r, "scale_up", "spot"))
      assert.matches("1 pending pod%(s%) fit no managed group within its max: jhub/p%-", r.log[1])
    end)

    it("skips a group backed off after a failed launch and buys from another", function()
      local e = engine{ groups = {
        t.group{ name = "spot", max = 10, cpu = "4", memory = "16Gi", price = 0.07 },
        t.group{ name = "user", max = 10, cpu = "4", memory = "16Gi", price = 0.19 } } }
      local c = loaded(2, "3.5", nil, { pending("p-1", "3"), pending("p-2", "3") })
      local r = e:decide(c, NOW)
      assert.scales_up(r, "spot", 3)              -- the cheaper group, when it can launch
      c.backoff = { spot = { ["for"] = "5m", reason = "InsufficientInstanceCapacity" } }
      r = e:decide(c, NOW)
      assert.scales_up(r, "user", 3)
      assert.are.same({}, t.find(r, "scale_up", "spot"))
      assert.is_nil(t.rejected(r, "scale_up", "spot"))
    end)

    it("adds what fits under the max", function()
      local r = engine{ max = 5 }:decide(loaded(4, "3800m"), NOW)
      assert.scales_up(r, "user", 1)
      assert.is_nil(t.rejected(r, "scale_up", "spot"))
      assert.matches("groups at their max %(user 5%): 1 more user node", r.log[1])
    end)
  end)

  describe("uncordon before buying", function()
    it("uncordons a node luascale cordoned instead of adding one, the most loaded first", function()
      -- 7.2 / 8 = 0.9; with 'busy': 8.2 / 12 = 0.68, enough; 'idle' stays cordoned
      local cluster = loaded(2, "3600m",
        { node("busy", { marked = true }), node("idle", { marked = true }),
          node("admin", { cordoned = true }) },
        { user("b", "busy", "1"), user("i", "idle", "400m") })
      local r = engine():decide(cluster, NOW)
      assert.no_error(r)
      assert.uncordons(r, "busy")
      assert.is_true(annotation(r, "busy", MARK).remove)
      assert.is_false(t.uncordons(r, "idle"))
      assert.is_false(t.uncordons(r, "admin"))
      assert.is_nil(annotation(r, "admin", MARK))
      assert.is_not.scales_up(r, "user")
    end)

    it("leaves an admin-cordoned node alone even when nodes must be added", function()
      local cluster = loaded(2, "3600m", { node("admin", { cordoned = true }) })
      local r = engine():decide(cluster, NOW)
      assert.scales_up(r, "user", 1)
      assert.is_false(t.uncordons(r, "admin"))
      assert.are.equal(0, #t.find(r, "annotate"))
      assert.matches("cordoned by someone else", r.node["admin"].why)
    end)

    it("uncordons a node with room for the pending pods", function()
      local cluster = loaded(2, "3", { node("m", { marked = true }) },
        { user("x", "m", "1"), pending("p", "2") })
      local r = engine():decide(cluster, NOW)
      assert.uncordons(r, "m")
      assert.is_not.scales_up(r, "user")
      assert.matches("room for 1 pending pod", t.find(r, "uncordon", "m")[1].reason)
    end)

    it("finds the marked node with room for a pod, past ones without, and buys for a pod none has room for", function()
      -- 'full' (most loaded) has 1 cpu free, 'roomy' 3: 'big' (2 cpu) fits
      -- only 'roomy', 'huge' (3.5 cpu) neither, so a new node takes it
      local cluster = loaded(2, "3", { node("full", { marked = true }), node("roomy", { marked = true }) },
        { user("f", "full", "3"), user("r", "roomy", "1"), pending("big", "2"), pending("huge", "3500m") })
      local r = engine():decide(cluster, NOW)
      assert.no_error(r)
      assert.uncordons(r, "roomy")
      assert.matches("room for 1 pending pod", t.find(r, "uncordon", "roomy")[1].reason)
      for _, u in ipairs(t.find(r, "uncordon", "full")) do
        assert.is_nil(u.reason:match("room for"))
      end
      -- one node for 'huge'; 15.5 cpu on 20 is still above 0.75: one more
      assert.scales_up(r, "user", 2)
      assert.matches("1 node%(s%) for the pending pods", t.find(r, "scale_up", "user")[1].reason)
    end)

    it("adds nodes only for what uncordoning cannot cover", function()
      -- 4 x 4 = 16 cpu; with 'm': 16 / 20 = 0.8, still above 0.75: one more
      local r = engine():decide(loaded(4, "4", { node("m", { marked = true }) }), NOW)
      assert.uncordons(r, "m")
      assert.scales_up(r, "user", 1)
      assert.never_deletes(r, "m")
      assert.is_nil(t.rejected(r, "scale_up", "spot"))
    end)

    it("knows its nodes by the cordon_annotation param", function()
      local cluster = loaded(2, "3600m",
        { node("ours", { marked = true, mark_key = "example.org/emptying" }),
          node("other", { marked = true }) })
      local r = engine{ params = { cordon_annotation = "example.org/emptying" } }:decide(cluster, NOW)
      assert.uncordons(r, "ours")
      assert.is_true(annotation(r, "ours", "example.org/emptying").remove)
      assert.is_false(t.uncordons(r, "other"))
    end)

    it("waits before cordoning again after a scale-up", function()
      local e = engine()
      e:decide(loaded(2, "3600m"), NOW)
      local r = e:decide(loaded(10, "1"), NOW + 300)
      assert.is_false(t.cordons(r, "u-1"))
      assert.matches("scaled up 5m ago", r.node["u-1"].why)
      r = e:decide(loaded(10, "1"), NOW + 600)
      assert.cordons(r, "u-1")
    end)
  end)

  describe("scale down", function()
    it("cordons the least loaded node and marks it with the time", function()
      local cluster = loaded(10, "2")
      set_cpu(cluster, "s-7", "1500m")
      local r = engine():decide(cluster, NOW)
      assert.no_error(r)
      assert.cordons(r, "u-7")
      assert.are.equal(1, #t.find(r, "cordon"))
      local a = annotation(r, "u-7", MARK)
      assert.are.equal(tostring(NOW), a.value)
      assert.never_deletes(r, "u-7")
    end)

    it("cordons until the rest reaches the target, max_cordon_per_round at a time", function()
      -- 10 x 2.2 = 22 cpu: 22 / 32 = 0.69 after two cordons; a third gives 0.79
      local r = engine{ params = { max_cordon_per_round = 5 } }:decide(loaded(10, "2200m"), NOW)
      assert.are.equal(2, #t.find(r, "cordon"))
      assert.matches("would bring the rest to 0.79, above 0.75", r.node["u-3"].why)
    end)

    it("takes the target from params", function()
      -- 22 / 28 = 0.79 <= 0.8 after three cordons; a fourth gives 0.92
      local r = engine{ params = { max_cordon_per_round = 5, target = 0.8 } }
        :decide(loaded(10, "2200m"), NOW)
      assert.are.equal(3, #t.find(r, "cordon"))
    end)

    it("takes low and high from params", function()
      local r = engine{ params = { low = 0.7 } }:decide(loaded(10, "2640m"), NOW)
      assert.are.equal(1, #t.find(r, "cordon"))
      r = engine{ params = { high = 0.8 } }:decide(loaded(10, "3360m"), NOW)
      assert.scales_up(r, "user")
    end)

    it("counts pods on nodes being emptied as coming back", function()
      -- two nodes at 0.25: 2 / 4 = 0.5 if u-1 went away, but 1.5 cpu come back
      -- from 'm': 3.5 / 4 = 0.875
      local cluster = loaded(2, "1", { node("m", { marked = true }) }, { user("x", "m", "1500m") })
      local r = engine():decide(cluster, NOW)
      assert.is_false(t.cordons(r, "u-1"))
      assert.is_false(t.cordons(r, "u-2"))
    end)

    it("never cordons a node that runs a critical pod", function()
      -- the hub and the proxy run on the least loaded nodes
      local cluster = loaded(10, "1", {}, {
        t.pod{ name = "hub", namespace = "jhub", node = "u-1", cpu = "100m", labels = { [CRITICAL] = "true" } },
        t.pod{ name = "proxy", namespace = "jhub", node = "u-2", cpu = "100m", labels = { [CRITICAL] = "" } },
      })
      set_cpu(cluster, "s-1", "100m")
      set_cpu(cluster, "s-2", "100m")
      local r = engine{ params = { max_cordon_per_round = 10 } }:decide(cluster, NOW)
      assert.no_error(r)
      assert.is_false(t.cordons(r, "u-1"))
      assert.is_false(t.cordons(r, "u-2"))
      assert.cordons(r, "u-3")
      assert.matches("runs critical pod jhub/hub", r.node["u-1"].why)
    end)

    it("takes the critical label from params", function()
      local cluster = loaded(10, "1", {}, {
        t.pod{ name = "hub", namespace = "jhub", node = "u-1", cpu = "100m", labels = { ["example.org/keep"] = "yes" } },
        t.pod{ name = "old", namespace = "jhub", node = "u-2", cpu = "100m", labels = { [CRITICAL] = "true" } },
      })
      set_cpu(cluster, "s-1", "100m")
      set_cpu(cluster, "s-2", "200m")
      local r = engine{ params = { critical_label = "example.org/keep" }, safety = {} }
        :decide(cluster, NOW)
      assert.is_false(t.cordons(r, "u-1"))
      assert.cordons(r, "u-2")
    end)

    it("never goes below the group's min, counting cordoned nodes as gone", function()
      -- 5 nodes, one being emptied: cordoning another leaves 3
      local cluster = loaded(4, "500m", { node("m", { marked = true }) }, { user("x", "m", "1") })
      local r = engine{ min = 4 }:decide(cluster, NOW)
      assert.no_error(r)
      assert.are.equal(0, #t.find(r, "cordon"))
      assert.matches("at its min of 4 %(counting 1 node", r.node["u-1"].why)
      r = engine{ min = 3 }:decide(cluster, NOW)
      assert.are.equal(1, #t.find(r, "cordon"))
    end)

    it("only manages the groups named in params", function()
      local groups = { t.group{ name = "user", max = 20 }, t.group{ name = "core", max = 3 } }
      local cluster = loaded(10, "1", { node("c-1", { group = "core" }) })
      local r = engine{ groups = groups, params = { groups = { "user" } } }:decide(cluster, NOW)
      assert.is_false(t.cordons(r, "c-1"))
      assert.cordons(r, "u-1")
      assert.matches("not in params.groups", r.node["c-1"].why)
    end)
  end)

  describe("removal", function()
    local function emptied(pods)
      return loaded(4, "2", { node("m", { marked = true }) }, pods)
    end

    it("never drains or deletes a cordoned node that still runs a user pod", function()
      local e = engine()
      local cluster = emptied({ user("alice", "m", "100m"),
                                t.pod{ name = "ds", node = "m", daemonset = true, cpu = "100m" } })
      for i = 0, 6 do
        local r = e:decide(cluster, NOW + i * 3600)
        assert.no_error(r)
        assert.never_deletes(r, "m")
        assert.is_false(t.uncordons(r, "m"))
        assert.matches("waiting for 1 pod%(s%) to finish: jhub/alice", r.node["m"].why)
      end
    end)

    it("drains then deletes it once only omittable pods are left", function()
      local r = engine():decide(emptied({
        user("done", "m", "1", { phase = "Succeeded" }),
        user("crashed", "m", "1", { phase = "Failed" }),
        t.pod{ name = "fluentd", node = "m", daemonset = true, cpu = "100m" },
        t.pod{ name = "culler", namespace = "jhub", node = "m", cpu = "100m", labels = { [OMIT] = "true" } },
        t.pod{ name = "kube-proxy-x", namespace = "kube-system", node = "m", cpu = "100m" },
      }), NOW)
      assert.no_error(r)
      assert.drains(r, "m")
      assert.deletes(r, "m")
      local acts = {}
      for _, a in ipairs(r.actions) do
        if a.node == "m" then acts[#acts + 1] = a.type end
      end
      assert.are.same({ "drain", "delete" }, acts)
      assert.is_nil(t.rejected(r, "scale_up", "spot"))
    end)

    -- each kind alone: the test of a kind fails when that kind keeps the node
    local kinds = {
      completed = user("done", "m", "1", { phase = "Succeeded" }),
      daemonset = t.pod{ name = "fluentd", node = "m", daemonset = true, cpu = "100m" },
      omit_label = t.pod{ name = "culler", namespace = "jhub", node = "m", cpu = "100m",
                          labels = { [OMIT] = "true" } },
      kube_system = t.pod{ name = "dns", namespace = "kube-system", node = "m", cpu = "100m" },
    }
    for kind, pod in pairs(kinds) do
      it("does not let a " .. kind .. " pod keep the node", function()
        local r = engine():decide(emptied({ pod }), NOW)
        assert.deletes(r, "m")
      end)
    end

    it("takes the omit label and namespaces from params", function()
      local params = { omit_label = "example.org/omit", omit_namespaces = { "monitoring" } }
      local r = engine{ params = params }:decide(emptied({
        t.pod{ name = "a", namespace = "jhub", node = "m", cpu = "100m", labels = { ["example.org/omit"] = "1" } },
        t.pod{ name = "b", namespace = "monitoring", node = "m", cpu = "100m" },
      }), NOW)
      assert.deletes(r, "m")
      r = engine{ params = params }:decide(emptied({
        t.pod{ name = "c", namespace = "kube-system", node = "m", cpu = "100m" },
      }), NOW)
      assert.never_deletes(r, "m")
      r = engine{ params = params }:decide(emptied({
        t.pod{ name = "d", namespace = "jhub", node = "m", cpu = "100m", labels = { [OMIT] = "true" } },
      }), NOW)
      assert.never_deletes(r, "m")
    end)

    it("never deletes a cordoned node with a critical pod, even an omittable one", function()
      -- no protected_pod_selector: the policy itself holds back
      local r = engine{ safety = { max_scale_down_per_round = 5 } }:decide(emptied({
        t.pod{ name = "hub", namespace = "kube-system", node = "m", cpu = "100m",
               labels = { [CRITICAL] = "true", [OMIT] = "true" } },
      }), NOW)
      assert.never_deletes(r, "m")
      assert.is_nil(t.rejected(r, "scale_up", "spot"))
    end)

    it("never deletes an admin-cordoned node, even an empty one", function()
      local r = engine():decide(loaded(4, "2", { node("admin", { cordoned = true }) }), NOW)
      assert.never_deletes(r, "admin")
      assert.is_false(t.uncordons(r, "admin"))
    end)

    it("removes at most max_delete_per_round nodes", function()
      local cluster = loaded(4, "2", { node("m-1", { marked = true }), node("m-2", { marked = true }) })
      local r = engine():decide(cluster, NOW)
      assert.are.equal(1, #t.find(r, "delete"))
      r = engine{ params = { max_delete_per_round = 2 } }:decide(cluster, NOW)
      assert.are.equal(2, #t.find(r, "delete"))
    end)

    it("keeps an empty cordoned node when the group is at its min", function()
      local r = engine{ min = 5 }:decide(emptied({}), NOW)
      assert.never_deletes(r, "m")
      assert.matches("at its min of 5", r.node["m"].why)
    end)

    it("removes a stale mark from a node someone uncordoned", function()
      local cluster = loaded(2, "3")
      cluster.nodes[1].metadata.annotations = { [MARK] = tostring(NOW - 60) }
      local r = engine():decide(cluster, NOW)
      assert.is_true(annotation(r, "u-1", MARK).remove)
    end)
  end)
end)
