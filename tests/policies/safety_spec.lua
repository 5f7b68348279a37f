-- The safety checks in C hold back whatever a policy asks for.
local t = require "luascale.testing"

local NOW = t.time("2026-11-30T10:00:00Z")

local function cluster()
  return t.cluster{
    nodes = {
      t.node{ name = "w-1", group = "workers" }, t.node{ name = "w-2", group = "workers" },
      t.node{ name = "w-3", group = "workers" }, t.node{ name = "w-4", group = "workers" },
      t.node{ name = "cp-1" },
    },
    pods = {
      t.pod{ name = "hub", node = "w-1", cpu = "1", labels = { ["hub.jupyter.org/autoscaler-critical"] = "true" } },
      t.pod{ name = "db-0", node = "w-2", cpu = "1", labels = { app = "db" } },
    },
    pdbs = { t.pdb{ name = "db", selector = { app = "db" }, allowed = 0 } },
  }
end

describe("safety checks", function()
  local engine = t.engine{
    policy = "fixtures/reckless.lua",
    groups = { t.group{ name = "workers", min = 1, max = 6 } },
    safety = { max_nodes_total = 100, max_scale_down_per_round = 1,
               protected_pod_selector = "hub.jupyter.org/autoscaler-critical" },
  }
  local r = engine:decide(cluster(), NOW)

  it("trims a scale-up to the group's max", function()
    assert.is_true(t.scales_up(r, "workers", 2))
    assert.matches("at its max of 6", t.rejected(r, "scale_up", "workers"))
  end)

  it("never drains or deletes a node with a protected pod", function()
    assert.is_false(t.deletes(r, "w-1"))
    assert.matches("default/hub is protected", t.rejected(r, "delete", "w-1"))
  end)

  it("never drains a node whose PDB forbids it", function()
    assert.is_false(t.drains(r, "w-2"))
    assert.matches("PodDisruptionBudget default/db allows 0", t.rejected(r, "drain", "w-2"))
  end)

  it("never touches a node outside the managed groups", function()
    assert.is_false(t.deletes(r, "cp-1"))
    assert.matches("not in a managed node group", t.rejected(r, "delete", "cp-1"))
  end)

  it("removes at most max_scale_down_per_round nodes", function()
    assert.is_true(t.drains(r, "w-3"))
    assert.is_true(t.deletes(r, "w-3"))
    assert.is_false(t.deletes(r, "w-4"))
    assert.matches("max_scale_down_per_round %(1%)", t.rejected(r, "delete", "w-4"))
  end)
end)

describe("NoExecute taints are removals", function()
  -- w-1 and w-2 each run a replica of a PDB that allows one disruption
  local function shared_pdb()
    return t.cluster{
      nodes = {
        t.node{ name = "w-1", group = "workers" }, t.node{ name = "w-2", group = "workers" },
        t.node{ name = "w-3", group = "workers" },
      },
      pods = {
        t.pod{ name = "api-0", node = "w-1", labels = { app = "api" } },
        t.pod{ name = "api-1", node = "w-2", labels = { app = "api" } },
      },
      pdbs = { t.pdb{ name = "api", selector = { app = "api" }, allowed = 1 } },
    }
  end

  it("holds the PDB over all of the round's taints together", function()
    local engine = t.engine{
      policy = "fixtures/evicts_and_relabels.lua",
      groups = { t.group{ name = "workers", min = 0, max = 6 }, t.group{ name = "small", max = 1 } },
      safety = { max_scale_down_per_round = 5 },
      disruption = { budgets = { { nodes = "100%" } } },
    }
    local r = engine:decide(shared_pdb(), NOW)
    assert.no_error(r)
    assert.is_true(t.taints(r, "w-1", "evict", "NoExecute"))
    assert.is_false(t.taints(r, "w-2", "evict", "NoExecute"))
    assert.matches("PodDisruptionBudget default/api allows 1 disruption, and this round's removals would cause 2",
      t.rejected(r, "taint", "w-2"))
    assert.is_true(t.taints(r, "w-3", "evict", "NoExecute"))
  end)

  it("counts them against max_scale_down_per_round", function()
    local engine = t.engine{
      policy = "fixtures/evicts_and_relabels.lua",
      groups = { t.group{ name = "workers", min = 0, max = 6 } },
      safety = { max_scale_down_per_round = 1 },
    }
    local r = engine:decide(t.cluster{
      nodes = { t.node{ name = "w-1", group = "workers" }, t.node{ name = "w-2", group = "workers" } },
    }, NOW)
    assert.is_true(t.taints(r, "w-1", "evict", "NoExecute"))
    assert.is_false(t.taints(r, "w-2", "evict", "NoExecute"))
    assert.matches("max_scale_down_per_round %(1%) reached", t.rejected(r, "taint", "w-2"))
  end)

  it("are held by the default disruption budget, 10 % of a group (one node of three)", function()
    local engine = t.engine{
      policy = "fixtures/evicts_and_relabels.lua",
      groups = { t.group{ name = "workers", min = 0, max = 6 }, t.group{ name = "small", max = 1 } },
      safety = { max_scale_down_per_round = 5 },
    }
    local r = engine:decide(shared_pdb(), NOW)
    assert.is_true(t.taints(r, "w-1", "evict", "NoExecute"))
    assert.is_false(t.taints(r, "w-3", "evict", "NoExecute"))
    assert.matches("disruption budget of group workers for empty %(nodes 10%%%) allows 1 of its 3 nodes at once",
      t.rejected(r, "taint", "w-3"))
  end)

  it("never moves a node between groups by its labels", function()
    local engine = t.engine{
      policy = "fixtures/evicts_and_relabels.lua",
      groups = { t.group{ name = "workers", min = 0, max = 6 }, t.group{ name = "small", max = 1 } },
      safety = { max_scale_down_per_round = 5 },
    }
    local r = engine:decide(shared_pdb(), NOW)
    for _, n in ipairs{ "w-1", "w-2", "w-3" } do
      assert.is_false(t.labels(r, n, "luascale.io/node-group"))
    end
    assert.matches("label sets key luascale%.io/node%-group: node group workers selects its nodes by that label key",
      t.rejected(r, "label", "w-1"))
  end)
end)

describe("malformed and oversized plans", function()
  it("reports a list returned instead of a plan, with file:line", function()
    local engine = t.engine{ policy = "fixtures/bare_list.lua",
                             groups = { t.group{ name = "workers", max = 6 } } }
    local r = engine:decide(cluster(), NOW)
    assert.matches("bare_list.lua:4: reconcile returned a malformed plan: got a list, not a plan", r.error)
    assert.no_actions(r)
  end)

  it("refuses a plan over safety.max_actions_per_round whole", function()
    local engine = t.engine{
      policy = "fixtures/reckless.lua",
      groups = { t.group{ name = "workers", min = 1, max = 6 } },
      safety = { max_scale_down_per_round = 1, max_actions_per_round = 5 },
    }
    local r = engine:decide(cluster(), NOW) -- 1 scale-up, a drain and a delete per node
    assert.matches("reckless.lua: reconcile returned a malformed plan: the plan has 11 actions, more than safety.max_actions_per_round %(5%)", r.error)
    assert.no_actions(r)
  end)
end)

describe("the sandbox's limits in a spec", function()
  it("passes limits.timeout to the sandbox as the CPU-time deadline", function()
    local engine = t.engine{ policy = "fixtures/spins.lua",
                             groups = { t.group{ name = "workers", max = 6 } },
                             limits = { timeout = "50ms" } }
    local r = engine:decide(cluster(), NOW)
    assert.matches("spins.lua:6: policy exceeded its CPU time limit %(50ms%)", r.error)
    assert.no_actions(r)
  end)
end)
