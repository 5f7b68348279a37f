-- node.drifted and node.drift_reason: a node is drifted when it lacks a
-- label or a taint its group's template has now, or has another value of
-- the label; labels and taints of its own (the hostname, a cordon, extra
-- labels) do not make it drift, nor do nodes of no group.
local t = require "luascale.testing"

local NOW = t.time("2026-11-30T10:00:00Z")
local taint = { key = "dedicated", value = "gpu", effect = "NoSchedule" }

describe("drift", function()
  local engine = t.engine{
    policy = "fixtures/drift.lua",
    groups = { t.group{ name = "gpu", max = 6, taints = { taint },
                        labels = { pool = "gpu", tier = "2", ["topology.kubernetes.io/zone"] = "zone-a" } } },
  }
  local r = engine:decide(t.cluster{
    nodes = {
      -- a group may span zones: another zone than the template's is no drift
      t.node{ name = "same", group = "gpu", labels = { pool = "gpu", tier = "2", extra = "x",
                                                      ["topology.kubernetes.io/zone"] = "zone-b" },
              taints = { taint, { key = "other", value = "", effect = "NoExecute" } }, unschedulable = true },
      t.node{ name = "old-tier", group = "gpu", labels = { pool = "gpu", tier = "1" }, taints = { taint } },
      t.node{ name = "no-tier", group = "gpu", labels = { pool = "gpu" }, taints = { taint } },
      t.node{ name = "no-taint", group = "gpu", labels = { pool = "gpu", tier = "2" } },
      t.node{ name = "other-taint", group = "gpu", labels = { pool = "gpu", tier = "2" },
              taints = { { key = "dedicated", value = "cpu", effect = "NoSchedule" } } },
      t.node{ name = "loose" },
    },
  }, NOW)
  local said = {}
  for _, line in ipairs(r.log) do
    local name, drifted, why = line:match("^(%S+) (%S+) (.*)$")
    if name then said[name] = { drifted = drifted, why = why } end
  end

  it("leaves a node that has all of its template alone", function()
    assert.are.same({ drifted = "false", why = "-" }, said.same)
    assert.are.same({ drifted = "false", why = "-" }, said.loose)
  end)
  it("says which label differs or is missing", function()
    assert.are.same({ drifted = "true", why = 'label tier is "1", the template\'s is 2' }, said["old-tier"])
    assert.are.same({ drifted = "true", why = "label tier is missing, the template's is 2" }, said["no-tier"])
  end)
  it("says which taint of the template is missing", function()
    assert.are.same({ drifted = "true", why = "taint dedicated=gpu:NoSchedule of the template is missing" },
      said["no-taint"])
    assert.are.same({ drifted = "true", why = "taint dedicated=gpu:NoSchedule of the template is missing" },
      said["other-taint"])
  end)
end)
