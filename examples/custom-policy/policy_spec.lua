-- Spec for the headroom policy. Run it with: luascale test examples/custom-policy
local t = require "luascale.testing"

local NOW = t.time("2026-11-30T10:00:00Z")

local function engine(o)
  o = o or {}
  local workers = t.group{ name = "workers", min = 1, max = 10, cpu = "4", memory = "16Gi" }
  workers.target = o.target
  return t.engine{ policy = "policy.lua", groups = { workers }, params = o.params, now = NOW }
end

-- three 4-core workers with 'used' cores requested on each
local function cluster(used, o)
  o = o or {}
  local nodes, pods = {}, {}
  for i = 1, 3 do
    nodes[i] = t.node{ name = "w-" .. i, group = "workers", unschedulable = (o.cordoned == i) }
    pods[i] = t.pod{ name = "app-" .. i, node = "w-" .. i, cpu = used, memory = "1Gi" }
  end
  return t.cluster{ nodes = nodes, pods = pods }
end

describe("headroom policy", function()
  it("adds nodes when fewer than free_cpu cores are free", function()
    -- 3 x 0.5 = 1.5 cores free, 4 wanted: one more 4-core node
    local r = engine():decide(cluster("3500m"))
    assert.scales_up(r, "workers", 1)
    assert.matches("1500m cpu free in workers, 4 wanted", t.find(r, "scale_up")[1].reason)
  end)

  it("adds nothing when enough cores are free", function()
    -- 3 x 1.5 = 4.5 cores free
    assert.no_actions(engine():decide(cluster("2500m")))
  end)

  it("counts nodes already on their way", function()
    -- 1.5 free + one upcoming 4-core node
    assert.no_actions(engine{ target = 4 }:decide(cluster("3500m")))
  end)

  it("does not count the free cores of a cordoned node", function()
    -- 4.5 free, but 1.5 of them on the cordoned w-1
    local r = engine():decide(cluster("2500m", { cordoned = 1 }))
    assert.scales_up(r, "workers", 1)
  end)

  it("takes the headroom from params", function()
    local r = engine{ params = { free_cpu = "10" } }:decide(cluster("3500m"))
    assert.scales_up(r, "workers", 3) -- 8.5 cores missing: three 4-core nodes
  end)

  it("never scales down, even idle nodes", function()
    local r = engine():decide(cluster("0"))
    assert.no_actions(r)
    assert.matches("never scales down", r.node["w-1"].why)
  end)
end)
