-- luascale.consolidation: which nodes to remove or replace so the cluster
-- costs less, Karpenter's way, with the arithmetic in C
-- (cluster:replacement_for, cluster:drainable).
--
--   local consolidation = require "luascale.consolidation"
--   local candidates = consolidation.candidates(cluster, params)
--   consolidation.replace(cluster, plan, candidates, params, store)
--
-- Three decisions, in the order Karpenter takes them:
--   * delete a node that is empty or whose pods fit on the other nodes
--     (binpack.lua does this itself, as it always has);
--   * multi-node: replace several underused nodes with one new, cheaper
--     node (the largest prefix of the candidates, in order of disruption
--     cost, whose pods one new node takes, found by binary search);
--   * single-node: replace one node with one cheaper node of any group, or
--     instance type, that takes its pods.
-- The one that saves the most per hour wins, if it saves at least
-- params.consolidation_min_savings of what its nodes cost now. One
-- replacement is under way at a time: while a node is being replaced or
-- removed nothing new starts. The other nodes of a multi-node set are
-- kept in the store and removed (when their pods fit elsewhere: on the
-- new node) once the replaced node is gone. Protected nodes, opted-out
-- nodes and pods, nodes being replaced or removed are never candidates;
-- the disruption budgets in C may still cut what is planned.
--
-- It only reads the cluster; the plan's actions point at the policy line
-- that called it.

local ls = require "luascale"

local M = {}

-- The annotations that opt a node, or a pod on it, out of disruption (the
-- safety checks' defaults: safety.do_not_disrupt_annotations). A policy
-- that should not even try reads them; the C checks refuse anyway.
M.node_opt_outs = {
  ["cluster-autoscaler.kubernetes.io/scale-down-disabled"] = "true",
  ["karpenter.sh/do-not-disrupt"] = "true",
}
M.pod_opt_outs = { ["karpenter.sh/do-not-disrupt"] = true }

-- Why 'node' must not be disrupted: an opt-out annotation on it or on
-- one of its unfinished pods, or nil. Reads the node's pods: call it for
-- the few nodes about to be acted on, not for every node.
function M.opted_out(node)
  local ann = node.annotations
  for k, v in pairs(M.node_opt_outs) do
    if ann[k] == v then return string.format("annotated %s: %q", k, v) end
  end
  for _, pod in ipairs(node.pods) do
    if not pod.finished then
      local pa = pod.annotations
      for k in pairs(M.pod_opt_outs) do
        local v = pa[k]
        if v ~= nil and v ~= "false" then
          return string.format("pod %s/%s is annotated %s: %q", pod.namespace, pod.name, k, v)
        end
      end
    end
  end
  return nil
end

-- Why a managed node is no candidate for a replacement, or nil.
local function not_eligible(node, min_age)
  if node.removing then return "being drained and deleted" end
  if node.replacing then return "being replaced" end
  if node.interruption then return "the cloud takes it back (" .. node.interruption.kind .. ")" end
  if not node.ready then return "not Ready" end
  if node.unschedulable then return "cordoned" end
  if node.protected then return "runs a protected pod" end
  if node.age < min_age then return "younger than min_node_age" end
  return nil
end

-- Is a replacement result worth it: a group that takes every pod, prices
-- known, and at least 'margin' of the nodes' price saved?
local function worth(r, margin)
  return r.group ~= nil and r.price_known and r.price_per_hour > 0
    and r.savings >= margin * r.price_per_hour - 1e-9 and r.savings > 0
end

-- Does replacing 'nodes' by r.new_nodes nodes of r.group keep every
-- group at its min or above (the nodes being removed already counted)?
local function keeps_min(cluster, nodes, r)
  local out = {}
  for _, n in ipairs(nodes) do out[n.group] = (out[n.group] or 0) + 1 end
  if r.group then out[r.group] = (out[r.group] or 0) - r.new_nodes end
  for name, k in pairs(out) do
    local g = cluster.groups[name]
    if k > 0 and g.current - g.removing - k < g.min then return false end
  end
  return true
end

-- The candidates for a replacement, in order of disruption cost: fewest
-- pods to move first, then least utilized, then by name; at most
-- params.consolidation_candidates of them, each not blocked by a pod
-- (cluster:replacement_for with max_new = 0 checks only that). 'skip'
-- (a set of nodes) are left out: the ones this round removes already.
function M.candidates(cluster, params, skip)
  local min_age = ls.duration(params.min_node_age)
  local list = {}
  for _, node in ipairs(cluster.nodes) do
    if node.group and not (skip and skip[node]) and not not_eligible(node, min_age) then
      list[#list + 1] = { node = node, pods = node.live_requests.pods, u = ls.utilization(node) }
    end
  end
  table.sort(list, function(a, b)
    if a.pods ~= b.pods then return a.pods < b.pods end
    if a.u ~= b.u then return a.u < b.u end
    return a.node.name < b.node.name
  end)
  local out, max = {}, params.consolidation_candidates
  for _, c in ipairs(list) do
    if #out >= max then break end
    local r = cluster:replacement_for(c.node, { max_new = 0, elsewhere = false })
    if not r.blocked and r.price_known then out[#out + 1] = c.node end
  end
  return out
end

-- Single-node: the candidate whose replacement by one new node saves the
-- most (worth() it), as { nodes = {node}, result = r }, or nil.
function M.single(cluster, candidates, margin)
  local best
  for _, node in ipairs(candidates) do
    local r = cluster:replacement_for(node, { max_new = 1, elsewhere = false })
    if r.pods > 0 and worth(r, margin) and (not best or r.savings > best.result.savings + 1e-9)
      and keeps_min(cluster, { node }, r) then
      best = { nodes = { node }, result = r }
    end
  end
  return best
end

-- Multi-node: the largest prefix (two nodes or more) of the candidates
-- whose pods one new node takes, saving enough (worth()), found by binary
-- search as Karpenter does (a prefix that fails makes the search look at
-- shorter ones, one that works at longer ones); { nodes, result } or nil.
function M.multi(cluster, candidates, margin)
  local lo, hi, best = 2, #candidates, nil
  while lo <= hi do
    local mid = (lo + hi) // 2
    local set = table.move(candidates, 1, mid, 1, {})
    local r = cluster:replacement_for(set, { max_new = 1, elsewhere = false })
    if r.pods > 0 and worth(r, margin) and keeps_min(cluster, set, r) then
      best = { nodes = set, result = r }
      lo = mid + 1
    else
      hi = mid - 1
    end
  end
  return best
end

local function names(nodes)
  local out = {}
  for i, n in ipairs(nodes) do out[i] = n.name end
  return out
end

-- "2 nodes (1.00/h) by 1 new fleet node as large (0.50/h): saves 0.50/h (50%)"
function M.describe(choice)
  local r = choice.result
  local what = #choice.nodes == 1 and "node" or (#choice.nodes .. " nodes")
  local as = r.instance_type and (" as " .. r.instance_type) or ""
  return string.format("consolidation: replace %s (%.3f/h) by %d new %s node(s)%s (%.3f/h): saves %.3f/h (%.0f%%)",
    what, r.price_per_hour, r.new_nodes, r.group, as, r.new_price_per_hour, r.savings,
    100 * r.savings / r.price_per_hour)
end

-- The nodes of an earlier multi-node replacement that are still to go:
-- a set of names (store.consolidation.rest) once the node replaced for
-- them is gone; nil while it is being replaced, or when there are none.
-- Forgets the set when its replacement did not happen (the node is
-- there, neither being replaced nor removed: the launch failed or the
-- budgets cut it) or after an hour.
function M.followers(cluster, store)
  local c = store.consolidation
  if not c then return nil end
  local node = cluster:node(c.replaced)
  if cluster.now - c.since > 3600 or (node and not node.replacing and not node.removing) then
    store.consolidation = nil
    return nil
  end
  if node then return nil end -- still under way
  local rest, any = {}, false
  for _, name in ipairs(c.rest) do
    if cluster:node(name) then rest[name], any = true, true end
  end
  if not any then store.consolidation = nil return nil end
  return rest
end

-- Is a replacement or a removal under way anywhere? Then nothing new
-- starts: the cluster the next one is planned on is not the one it will
-- meet.
function M.busy(cluster)
  for _, node in ipairs(cluster.nodes) do
    if node.replacing or node.removing then return node end
  end
  return nil
end

-- Plans the replacement that saves the most per hour (multi-node or
-- single-node), if any saves params.consolidation_min_savings of its
-- nodes' price: plan:replace of its first node into the chosen group,
-- with the instance type chosen, under the disruption "underutilized";
-- for a multi-node set the others are kept in store.consolidation and
-- removed once the replaced node is gone (M.followers). Returns the
-- choice ({nodes, result}) or nil.
local function choose(cluster, candidates, margin)
  local best = M.multi(cluster, candidates, margin)
  local one = M.single(cluster, candidates, margin)
  if one and (not best or one.result.savings > best.result.savings + 1e-9) then best = one end
  return best
end

function M.replace(cluster, plan, candidates, params, store)
  local margin = params.consolidation_min_savings
  local best
  -- an opted-out node is found out only here (reading its pods costs):
  -- it leaves the candidates, and the choice is made again, twice at most
  for _ = 1, 3 do
    best = choose(cluster, candidates, margin)
    if not best then return nil end
    local out
    for _, node in ipairs(best.nodes) do
      local why = M.opted_out(node)
      if why then
        plan:log("consolidation skips %s: %s", node.name, why)
        out = node
        break
      end
    end
    if not out then break end
    local rest = {}
    for _, node in ipairs(candidates) do
      if node ~= out then rest[#rest + 1] = node end
    end
    candidates, best = rest, nil
  end
  if not best then return nil end
  local r, first = best.result, best.nodes[1]
  local reason = M.describe(best)
  plan:explain(first, true, "%s", reason)
  plan:replace(first, r.group, reason,
    { disruption = "underutilized", instance_types = r.instance_types })
  if #best.nodes > 1 then
    local rest = names(best.nodes)
    table.remove(rest, 1)
    for i = 2, #best.nodes do
      plan:explain(best.nodes[i], true, "%s; removed once %s is replaced", reason, first.name)
    end
    store.consolidation = { replaced = first.name, rest = rest, since = cluster.now }
  end
  return best
end

return M
