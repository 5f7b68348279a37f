-- Spec for policies/default.lua's expiry and drift: a node older than its
-- group's expire_after (disruption.expire_after), or drifted from its
-- group's template (unless the param replace_drifted is false), is replaced by a node of its group (plan:replace),
-- under the disruption reason "expired" or "drifted"; at most one of each
-- per group and round, never a protected node.
local t = require "luascale.testing"

local POLICY = "../../policies/default.lua"
local NOW = t.time("2026-11-30T10:00:00Z")
local DAY = 86400

local function group(name, expire)
  local g = t.group{ name = name, max = 10, cpu = "4", memory = "16Gi", price = 0.2,
                     labels = { pool = name } }
  if expire then g.disruption = { expire_after = expire } end
  return g
end

-- the policy's own pace is under test: no disruption budget beyond it,
-- unless 'disruption' gives one
local function engine(groups, safety, disruption, params)
  return t.engine{ policy = POLICY, groups = groups, params = params,
                   safety = safety or { max_scale_down_per_round = 5 },
                   disruption = disruption or { budgets = { { nodes = "100%" } } } }
end

-- a busy node (utilization above the scale-down threshold) of 'g'
local function node(name, g, age, labels)
  return t.node{ name = name, group = g, age = age, labels = labels or { pool = g } }
end

local function busy(nodes)
  local pods = {}
  for _, n in ipairs(nodes) do
    pods[#pods + 1] = t.pod{ name = "app-" .. n.metadata.name, node = n.metadata.name, cpu = "3",
                             memory = "4Gi", labels = { app = "web" } }
  end
  return t.cluster{ nodes = nodes, pods = pods }
end

local function replaces(r)
  return t.find(r, "replace")
end

describe("default policy: expiry and drift", function()
  it("replaces a node older than its group's expire_after with one of its group", function()
    local r = engine{ group("web", "720h") }:decide(busy{
      node("old", "web", 31 * DAY), node("young", "web", 2 * DAY) }, NOW)
    assert.no_error(r)
    assert.replaces(r, "old", "web")
    assert.never_deletes(r, "young")
    local a = replaces(r)[1]
    assert.are.equal("expired", a.disruption)
    assert.matches("expired: 744h old, the group's expire_after is 720h", a.reason, 1, true)
    assert.are.equal(1, #r.actions)
  end)

  it("replaces nothing in a group without expire_after, however old", function()
    local r = engine{ group("web") }:decide(busy{ node("old", "web", 400 * DAY) }, NOW)
    assert.no_error(r)
    assert.no_actions(r)
  end)

  it("replaces one expired and one drifted node per group and round", function()
    local r = engine{ group("web", "720h"), group("api", "24h") }:decide(busy{
      node("web-1", "web", 40 * DAY), node("web-2", "web", 35 * DAY),
      node("web-3", "web", DAY, { pool = "old-pool" }), node("web-4", "web", DAY, { pool = "old-pool" }),
      node("api-1", "api", 3 * DAY), node("api-2", "api", 2 * DAY) }, NOW)
    assert.no_error(r)
    local by = {}
    for _, a in ipairs(replaces(r)) do by[a.node] = a.disruption end
    -- the first of each in the nodes' order: web-1 expired, web-3 drifted
    assert.are.same({ ["web-1"] = "expired", ["web-3"] = "drifted", ["api-1"] = "expired" }, by)
    local drift = t.find(r, "replace", "web-3")[1]
    assert.matches("drifted: label pool is \"old-pool\", the template's is web", drift.reason, 1, true)
  end)

  it("is held by the disruption budgets: the default 10 % lets one node of four go at once", function()
    local r = engine({ group("web", "720h") }, nil, {}):decide(busy{
      node("web-1", "web", 40 * DAY), node("web-2", "web", DAY),
      node("web-3", "web", DAY, { pool = "old-pool" }), node("web-4", "web", DAY) }, NOW)
    assert.no_error(r)
    assert.replaces(r, "web-1", "web")
    assert.is_false(t.replaces(r, "web-3"))
    assert.matches("disruption budget of group web for drifted (nodes 10%) allows 1 of its 4 nodes at once",
      t.rejected(r, "replace", "web-3"), 1, true)
  end)

  it("replaces drifted nodes by default, and leaves them alone with replace_drifted = false", function()
    local c = busy{ node("web-3", "web", DAY, { pool = "old-pool" }) }
    local r = engine({ group("web") }, nil, nil, { replace_drifted = false }):decide(c, NOW)
    assert.no_error(r)
    assert.no_actions(r)
    r = engine({ group("web") }, nil, nil, {}):decide(c, NOW)
    assert.replaces(r, "web-3", "web")
  end)

  it("stops replacing a group's nodes drifted a way its new nodes drift too, and says why", function()
    -- the template says tier=2, but the group's nodes never get that label:
    -- a node made well after the replacements began drifts the same way
    local old = { pool = "web", tier = "1" }
    local g = group("web")
    g.template.labels.tier = "2"
    local e = engine({ g }, nil, nil, {})
    local r = e:decide(busy{ node("web-1", "web", DAY, old), node("web-2", "web", DAY, old) }, NOW)
    assert.replaces(r, "web-1", "web")
    -- 20 minutes on: web-1 is gone, its replacement web-3 (made 5 minutes
    -- ago, 15 minutes after the replacements began) lacks the label as well
    r = e:decide(busy{ node("web-2", "web", DAY + 1200, old), node("web-3", "web", 300, old) }, NOW + 1200)
    assert.no_error(r)
    assert.no_actions(r)
    assert.matches("group web: web-3 was made after its drift replacements began and drifts the same way "
      .. "(label tier is \"1\", the template's is 2)", table.concat(r.log, "\n"), 1, true)
    -- a node made before the replacements began settled is not evidence
    local e2 = engine({ g }, nil, nil, {})
    e2:decide(busy{ node("web-1", "web", DAY, old), node("web-2", "web", DAY, old) }, NOW)
    r = e2:decide(busy{ node("web-2", "web", DAY + 300, old), node("web-3", "web", 200, old) }, NOW + 300)
    assert.replaces(r, "web-2", "web")
    -- the template changed again: a new reason is replaced again
    r = e:decide(busy{ node("web-4", "web", 900, { pool = "web", tier = "3" }) }, NOW + 1500)
    assert.replaces(r, "web-4", "web")
  end)

  it("never replaces a node that runs a protected pod", function()
    local nodes = { node("old", "web", 40 * DAY) }
    local c = t.cluster{ nodes = nodes, pods = {
      t.pod{ name = "hub", node = "old", cpu = "3", memory = "4Gi", labels = { app = "hub" } } } }
    local r = engine({ group("web", "720h") }, { max_scale_down_per_round = 5,
                       protected_pod_selector = "app=hub" }):decide(c, NOW)
    assert.no_error(r)
    assert.never_deletes(r, "old")
  end)

  it("leaves an interrupted node to the interruption's answer", function()
    local n = node("old", "web", 40 * DAY)
    n.status.conditions[#n.status.conditions + 1] = { type = "PreemptScheduled", status = "True",
      message = "Scheduled : Mon, 30 Nov 2026 10:00:30 GMT" }
    local c = busy{ n }
    c.nodes[#c.nodes + 1] = node("other", "web", DAY) -- idle: room for the evicted pod
    local r = engine{ group("web", "720h") }:decide(c, NOW)
    assert.no_error(r)
    assert.are.equal(0, #replaces(r))
    assert.drains(r, "old")
  end)
end)
