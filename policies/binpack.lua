-- binpack: pay for as few nodes as the pods need.
--
-- Scale up: the unschedulable pending pods are packed (first-fit
-- decreasing, onto nodes already on their way first) onto every node
-- group, within the nodes the group may still add. The group with the
-- lowest price per placed pod wins (price_per_hour * new nodes / pods
-- placed; ties go to more pods placed, then less waste, then the name).
-- The pods it cannot take are packed again onto the other groups, so a GPU
-- pod and some CPU pods grow two different groups in the same round. When
-- pods with relations are left, every group packed together replaces those
-- new nodes if it places more (a spread over capacity types: each group
-- alone stops at the skew). Pods that fit no group are logged with the
-- reason, not chased.
--
-- Scale down (consolidation): a managed, Ready, schedulable node older
-- than `min_node_age` whose larger of cpu and memory request utilization
-- is below `consolidate_below` is a candidate. Least utilized first, a
-- candidate is drained and deleted when its pods fit on the nodes that
-- stay (counting the pods of nodes already removed this round), at most
-- `max_removals_per_round` per round and `consolidation_candidates` tried
-- (each try walks the cluster), never below the group's min, and
-- not at all while unschedulable pods are pending (except pods that no
-- group could run even on an empty node: they wait for a config change,
-- not for capacity, and must not freeze consolidation forever). A node
-- being replaced and one the cloud is taking back are not candidates. An
-- empty node is removed under the disruption reason "empty", another
-- under "underutilized". A node annotated do-not-disrupt or
-- scale-down-disabled, or running a pod annotated do-not-disrupt, is left
-- to the safety checks, which refuse its removal (`decide` shows why).
--
-- Replacement (`consolidation`, on by default): in a round that removes
-- nothing, with nothing pending and no node being replaced or removed,
-- the nodes are taken in order of disruption cost (fewest pods to move,
-- then least utilized; at most `consolidation_candidates` of them) and
--   * several of them are replaced by one new node, cheaper than all of
--     them together: the longest prefix of that order whose pods one new
--     node of some group (or instance type) takes, found by binary search;
--   * or one of them by one new, cheaper node of any group or instance
--     type that takes its pods;
-- whichever saves the most per hour, if it saves at least
-- `consolidation_min_savings` of what its nodes cost now. The new node
-- is launched first and the node drained only once it is Ready
-- (plan:replace); the other nodes of a multi-node set are removed in the
-- rounds after, once their pods fit elsewhere. Prices are the groups'
-- (and instance types') price_per_hour: a node of unknown price is never
-- replaced, nor an opted-out one. See luascale.consolidation. The safety
-- limits in the config (protected pods, PDBs, opt-out annotations,
-- disruption budgets, max_scale_down_per_round) apply on top of all of
-- this and may cut it.

local ls = require "luascale"
local packing = require "luascale.packing"
local consolidation = require "luascale.consolidation"

local P = {}

P.params = {
  consolidate_below = 0.6,    -- fraction of allocatable requested (larger of cpu, memory)
  min_node_age = "10m",       -- younger nodes are never consolidated
  max_removals_per_round = 1, -- nodes drained and deleted per reconcile
  consolidation = true,         -- replace nodes with fewer or cheaper ones
  consolidation_min_savings = 0.1, -- fraction of the nodes' price a replacement must save
  consolidation_candidates = 100,  -- nodes tried per round for a removal, and for a replacement
}

local scale_up = packing.scale_up

-- Why a managed node is not a candidate, or nil when it is one.
local function not_a_candidate(node, u, params, min_age, follower)
  if node.removing then return "being drained and deleted" end
  if node.replacing then return "being replaced" end
  if node.interruption then return "the cloud takes it back (" .. node.interruption.kind .. ")" end
  if not node.ready then return "not Ready" end
  if node.unschedulable then return "cordoned" end
  if node.age < min_age then
    return string.format("age %s is under min_node_age %s", ls.format_duration(node.age),
      ls.format_duration(min_age))
  end
  if u >= params.consolidate_below and not follower then
    return string.format("utilization %.2f is not below %.2f", u, params.consolidate_below)
  end
  return nil
end

function P.reconcile(cluster, params, store)
  local plan = ls.plan()
  local min_age = ls.duration(params.min_node_age)

  local pending, placed = ls.needing_capacity(cluster)
  if #pending > 0 then scale_up(cluster, plan, pending, { placed }) end
  local waiting = 0 -- pending pods some group could run
  for _, pod in ipairs(pending) do
    if not packing.fits_no_group(cluster, pod) then waiting = waiting + 1 end
  end

  -- the rest of an earlier multi-node replacement: removed first, whatever
  -- their utilization, once their pods fit elsewhere (on the new node)
  local followers = params.consolidation and consolidation.followers(cluster, store) or {}
  local candidates = {}
  for _, node in ipairs(cluster.nodes) do
    local u = ls.utilization(node)
    if not node.group then
      plan:explain(node, false, "not in a managed node group")
    else
      local follower = followers[node.name] or false
      local why = not_a_candidate(node, u, params, min_age, follower)
      if why then
        plan:explain(node, false, why)
      else
        candidates[#candidates + 1] = { node = node, u = u, first = follower }
      end
    end
  end
  table.sort(candidates, function(a, b)
    if a.first ~= b.first then return a.first end
    if a.u ~= b.u then return a.u < b.u end
    return a.node.name < b.node.name
  end)

  local removed, shrink, tried = {}, {}, 0
  for _, c in ipairs(candidates) do
    local node, g = c.node, cluster.groups[c.node.group]
    local under = string.format("utilization %.2f below %.2f", c.u, params.consolidate_below)
    local ok, why
    if waiting > 0 then
      ok, why = false, string.format("%d unschedulable pod(s) pending", waiting)
    elseif g.current - g.removing - (shrink[g.name] or 0) <= g.min then
      ok, why = false, string.format("group %s is at its min of %d", g.name, g.min)
    elseif #removed >= params.max_removals_per_round then
      ok, why = false, string.format("max_removals_per_round (%d) reached", params.max_removals_per_round)
    elseif tried >= params.consolidation_candidates then
      ok, why = false, string.format("not tried: consolidation_candidates (%d) tried this round",
        params.consolidation_candidates)
    else
      tried = tried + 1
      ok, why = cluster:drainable(node, { exclude = removed })
    end
    if c.first then under = "the rest of a consolidation" end
    if ok then
      local d = { disruption = node.live_requests.pods == 0 and "empty" or "underutilized" }
      plan:explain(node, true, under .. "; its pods fit elsewhere")
      plan:drain(node, under .. "; its pods fit on the other nodes", d)
      plan:delete(node, under .. "; drained", d)
      removed[#removed + 1] = node
      shrink[g.name] = (shrink[g.name] or 0) + 1
    else
      plan:explain(node, false, under .. ", but " .. why)
    end
  end

  -- replacements: only in a calm round (nothing removed, nothing pending,
  -- nothing under way)
  if params.consolidation and #removed == 0 and waiting == 0 then
    local busy = consolidation.busy(cluster)
    if busy then
      plan:log("consolidation waits: node %s is being %s", busy.name,
        busy.replacing and "replaced" or "removed")
    else
      consolidation.replace(cluster, plan, consolidation.candidates(cluster, params), params, store)
    end
  end
  return plan
end

return P
