-- Pods that nodes already in the cluster take once the new nodes count: a
-- spread whose least count rises, or whose minDomains is met, as the
-- planned nodes come. default.lua and binpack.lua through the engine, and
-- cluster:pack's 'existing' and 'after' (cluster:place results) directly.
local t = require "luascale.testing"

local POLICIES = { "../../policies/default.lua", "../../policies/binpack.lua" }
local NOW = t.time("2026-11-30T10:00:00Z")

-- a hostname spread, maxSkew 1, with minDomains 'min' (nil: none)
local function host_spread(app, min)
  return { topologySpreadConstraints = { {
    maxSkew = 1, topologyKey = "kubernetes.io/hostname", whenUnsatisfiable = "DoNotSchedule",
    minDomains = min, labelSelector = { matchLabels = { app = app } } } } }
end

local function replicas(n, app, min, first)
  local out = {}
  for i = 1, n do
    out[i] = t.pod{ name = app .. "-" .. (i + (first or 0)), cpu = "20m", memory = "100Mi",
                    pending = true, labels = { app = app }, spec = host_spread(app, min) }
  end
  return out
end

local function group(o)
  return t.group{ name = "template", max = 1000, cpu = "1", memory = "5000Mi", pods = 10,
                  labels = { ["topology.kubernetes.io/zone"] = "zone-mars" }, target = o and o.target }
end

local OLD = t.node{ name = "oldnode", cpu = "100m", memory = "1Gi", pods = 10,
                    labels = { ["topology.kubernetes.io/zone"] = "zone-jupiter" } }

local function summary(r)
  local parts = {}
  for _, a in ipairs(t.find(r, "scale_up")) do parts[#parts + 1] = a.group .. "+" .. a.count end
  return table.concat(parts, " ") .. " | " .. table.concat(r.log, "; ")
end

local function scaled(r)
  local n = 0
  for _, a in ipairs(t.find(r, "scale_up")) do n = n + a.count end
  return n
end

for _, policy in ipairs(POLICIES) do
  describe(policy:match("[^/]+$"), function()
    it("buys the nodes a hostname spread with minDomains needs, and counts oldnode as one", function()
      -- 12 replicas, minDomains 3: one goes to oldnode now; once two new
      -- nodes make three domains, oldnode and each new node take 4
      local r = t.engine{ policy = policy, groups = { group() } }
        :decide(t.cluster{ nodes = { OLD }, pods = replicas(12, "est", 3) }, NOW)
      assert.is_nil(r.error)
      assert.are.equal(2, scaled(r), summary(r))
      assert.matches("on existing nodes once the new ones count", t.find(r, "scale_up")[1].reason)
    end)

    it("fills minDomains nodes of an empty cluster instead of one node per replica", function()
      -- no node yet: three new nodes make the three domains, four each
      local r = t.engine{ policy = policy, groups = { group() } }
        :decide(t.cluster{ pods = replicas(12, "est", 3) }, NOW)
      assert.is_nil(r.error)
      assert.are.equal(3, scaled(r), summary(r))
    end)

    it("leaves oldnode no more pods than its room, the one placed now included", function()
      -- 60m: three replicas; the 12 need three new nodes (4, 4 and 1 with
      -- oldnode's 3: a fourth on it would be one over its room)
      local small = t.node{ name = "oldnode", cpu = "60m", memory = "1Gi", pods = 10,
                            labels = { ["topology.kubernetes.io/zone"] = "zone-jupiter" } }
      local r = t.engine{ policy = policy, groups = { group() } }
        :decide(t.cluster{ nodes = { small }, pods = replicas(12, "est", 3) }, NOW)
      assert.is_nil(r.error)
      assert.are.equal(3, scaled(r), summary(r))
    end)

    it("without minDomains, one replica per new node while a full node keeps the least at 0", function()
      local full = t.node{ name = "oldnode", cpu = "10m", memory = "1Gi", pods = 10,
                           labels = { ["topology.kubernetes.io/zone"] = "zone-jupiter" } }
      local r = t.engine{ policy = policy, groups = { group() } }
        :decide(t.cluster{ nodes = { full }, pods = replicas(4, "est") }, NOW)
      assert.is_nil(r.error)
      assert.are.equal(4, scaled(r), summary(r))
      -- with oldnode alone as a domain, the scheduler puts all four there
      r = t.engine{ policy = policy, groups = { group() } }
        :decide(t.cluster{ nodes = { OLD }, pods = replicas(4, "est") }, NOW)
      assert.is_nil(r.error)
      assert.are.equal(0, scaled(r), summary(r))
    end)

    it("buys nothing more while the nodes on their way let oldnode take the rest", function()
      -- the round after: two nodes on their way, one replica on oldnode,
      -- eleven pending; the scheduler fills the three to 4 each
      local pods = replicas(11, "est", 3, 1)
      pods[#pods + 1] = t.pod{ name = "est-1", node = "oldnode", cpu = "20m", memory = "100Mi",
                               labels = { app = "est" }, spec = host_spread("est", 3) }
      local r = t.engine{ policy = policy, groups = { group{ target = 2 } } }
        :decide(t.cluster{ nodes = { OLD }, pods = pods }, NOW)
      assert.is_nil(r.error)
      assert.are.equal(0, scaled(r), summary(r))
    end)
  end)
end

describe("cluster:pack", function()
  -- a policy that reports what the API answers, as a log line
  local probe = [[
local ls = require "luascale"
local P = {}
function P.reconcile(cluster)
  local plan = ls.plan()
  local pods = {}
  for _, p in ipairs(cluster.pending) do pods[#pods + 1] = p end
  table.sort(pods, function(a, b) return a.name < b.name end)
  local placed = cluster:place(pods)
  local g = cluster.groups.template
  local plain = cluster:pack(placed.unplaced, g, nil, { after = { placed } })
  local r = cluster:pack(placed.unplaced, g, nil, { after = { placed }, existing = true })
  local on = 0
  for _, name in ipairs(r.on_nodes or {}) do if name then on = on + 1 end end
  plan:log("place %d on %s; plain %d new, %d on existing; existing %d new, %d on existing (%d named), %d placed, %d left",
    placed.placed, placed.on_nodes[1] or "-", plain.new_nodes, plain.on_existing,
    r.new_nodes, r.on_existing, on, r.placed, #r.unplaced)
  local ok, err = pcall(cluster.pack, cluster, placed.unplaced, g, nil,
    { after = { { pods = { pods[1] }, on_nodes = { "no-such-node" } } } })
  plan:log("bad after: %s", ok and "accepted" or err)
  return plan
end
return P
]]

  it("leaves pods to existing nodes with 'existing', counts place results in 'after'", function()
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write(probe)
    f:close()
    local r = t.engine{ policy = path, groups = { group() } }
      :decide(t.cluster{ nodes = { OLD }, pods = replicas(12, "est", 3) }, NOW)
    os.remove(path)
    assert.is_nil(r.error)
    local line = table.concat(r.log, "\n")
    -- place puts est-1 on oldnode; packed alone the other 11 need 6 new
    -- nodes (oldnode stays at 1, the least count); with 'existing', 2
    -- new nodes and 3 more on oldnode
    assert.matches("place 1 on oldnode", line, 1, true)
    assert.matches("plain 6 new, 0 on existing", line, 1, true)
    assert.matches("existing 2 new, 3 on existing (3 named), 11 placed, 0 left", line, 1, true)
    assert.matches('bad after: [^\n]*after%[1%]%.on_nodes%[1%] names no node "no%-such%-node"', line)
  end)
end)
