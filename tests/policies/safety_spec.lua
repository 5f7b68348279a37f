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
