-- Spec for policies/default.lua: what it says of each group when it logs
-- pending pods it could not place. A group the pod fits is "backed off
-- until <time> (<reason>)" after a failed launch, "at its max of N" only
-- when it is at its max.
local t = require "luascale.testing"

local POLICY = "../../policies/default.lua"
local NOW = t.time("2026-11-30T10:00:00Z")

local function group(name, max, price)
  return t.group{ name = name, min = 0, max = max, cpu = "4", memory = "16Gi", price = price or 0.2,
                  labels = { pool = name } }
end

local function pending(name, pool)
  return t.pod{ name = name, cpu = "3", memory = "1Gi", pending = true, node_selector = { pool = pool } }
end

local function logs(r)
  return table.concat(r.log, "\n")
end

describe("default policy: pods it cannot place", function()
  it("says a backed-off group (1 node of 10) is backed off until when, and why", function()
    local cluster = t.cluster{
      nodes = { t.node{ name = "w-1", group = "workers" } },
      pods = { t.pod{ name = "busy", node = "w-1", cpu = "3500m" }, pending("p", "workers") },
      backoff = { workers = { ["for"] = "5m", reason = "InsufficientInstanceCapacity: no m5.large in us-east-1a" } },
    }
    local r = t.engine{ policy = POLICY, groups = { group("workers", 10) } }:decide(cluster, NOW)
    assert.is_nil(r.error)
    assert.is_false(t.scales_up(r, "workers"))
    local all = logs(r)
    assert.matches("default/p %(workers: backed off until 2026%-11%-30T10:05:00Z "
                   .. "%(InsufficientInstanceCapacity: no m5%.large in us%-east%-1a%)%)", all)
    assert.is_nil(all:find("at its max", 1, true))
  end)

  it("says a group at its max is at its max, with the max", function()
    local cluster = t.cluster{
      nodes = { t.node{ name = "w-1", group = "workers" }, t.node{ name = "w-2", group = "workers" } },
      pods = { t.pod{ name = "x1", node = "w-1", cpu = "3500m" }, t.pod{ name = "x2", node = "w-2", cpu = "3500m" },
               pending("p", "workers") },
    }
    local r = t.engine{ policy = POLICY, groups = { group("workers", 2) } }:decide(cluster, NOW)
    assert.is_false(t.scales_up(r, "workers"))
    assert.matches("default/p %(workers: at its max of 2%)", logs(r))
  end)

  it("names each group by what holds it: one backed off, one at its max", function()
    local cluster = t.cluster{
      nodes = { t.node{ name = "a-1", group = "a" } },
      pods = { t.pod{ name = "busy", node = "a-1", cpu = "3500m" },
               t.pod{ name = "p", cpu = "3", memory = "1Gi", pending = true } },
      backoff = { b = { ["for"] = "90s", reason = "quota exceeded" } },
    }
    local r = t.engine{ policy = POLICY, groups = { group("a", 1), group("b", 10, 0.1) } }:decide(cluster, NOW)
    assert.is_false(t.scales_up(r, "a"))
    assert.is_false(t.scales_up(r, "b"))
    local all = logs(r)
    assert.matches("a: at its max of 1", all)
    assert.matches("b: backed off until 2026%-11%-30T10:01:30Z %(quota exceeded%)", all)
  end)
end)
