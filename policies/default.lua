-- default: a plain, cautious autoscaler.
--
-- Scale up: when pods are unschedulable, first place them on nodes already
-- on their way (launched, not Ready yet; every group's in one packing), then pack the rest
-- onto each node group's template (first-fit decreasing) and grow the group
-- that fits the most pods and wastes the least capacity; what it cannot
-- take (another zone of a spread, a GPU pod) is packed again onto the
-- other groups, each packing counting the nodes planned before it. Groups
-- alike but for their zone are also packed together, each new node in the
-- smallest of them (`balance_similar_groups`: "always", "never", or "auto":
-- when a pending pod has spread, affinity, host ports or volumes), so a zone
-- spread gets a node per zone and the zones grow towards even sizes. A group grows once a round, so
-- a spread whose domains are groups (capacity types, a label they differ
-- in) stops each one at its skew: when pods with relations are left, every
-- group packed together, cheapest first, replaces the round's new nodes if
-- it places more. Pods that fit no group are reported, not chased.
--
-- Scale down: a node whose larger of cpu and memory request utilization has
-- stayed below `scale_down_utilization` for `unneeded_for`, and whose pods
-- can all move to other nodes, is drained and then deleted — at most
-- `max_scale_down` per round (the safety limit in the config caps this too).
-- No scale-down while pods are pending or for `scale_down_delay_after_add`
-- after a scale-up.
--
-- Interruptions: a node the cloud says it takes back soon (node.interruption:
-- a spot interruption, a stop or termination, a scheduled change, GKE's
-- shutdown, Azure's preempt or terminate) is cordoned, drained and deleted
-- at once under the disruption reason "interrupted" (never held by the
-- disruption budgets), and one node of its group is launched in its place,
-- once per node. A rebalance recommendation (only a raised risk) does the
-- same only with `drain_on_rebalance`; Azure's reboot, redeploy and freeze
-- keep the node and are left alone.
--
-- Expiry and drift, gently: a node older than its group's expire_after
-- (the config's disruption.expire_after), or, unless `replace_drifted` is
-- false, drifted from its group's template (node.drifted: a label or taint
-- the config's template has and the node lacks, another instance type, or
-- an image the cloud says is older than the group's), is replaced — a new node of its group first, the
-- old one drained and deleted once that one is Ready (plan:replace), under
-- the disruption reason "expired" or "drifted", so the budgets for them
-- apply. At most one expired and one drifted node per group and round,
-- never a protected node, and only while no replace of the group is under
-- way. Drift reads only what the operator wrote and what the cloud says
-- of the instance, never the labels the cloud's description guessed, the
-- zone or the group's selector keys, so a replacement does not drift in
-- turn; with `replace_drifted = false` drift is only shown (node.drifted).
--
-- Consolidation (param `consolidation`, off by default; binpack.lua has it
-- on): in a quiet round that removed nothing, the nodes under
-- `scale_down_utilization` for `unneeded_for` are offered to
-- luascale.consolidation, which replaces one node with a cheaper one, or
-- several with one, when that saves `consolidation_min_savings` of what
-- they cost; the rest of a multi-node set is removed once its pods fit
-- elsewhere.

local ls = require "luascale"
local packing = require "luascale.packing"
local consolidation = require "luascale.consolidation"

local P = {}

P.params = {
  scale_down_utilization = 0.5,      -- fraction of allocatable requested
  unneeded_for = "10m",               -- how long a node must stay under it
  scale_down_delay_after_add = "10m", -- quiet time after a scale-up
  max_scale_down = 1,                 -- nodes removed per round
  balance_similar_groups = "auto",    -- "always", "never", or "auto": when constrained pods pend
  drain_on_rebalance = false,         -- treat a rebalance recommendation as an interruption
  replace_drifted = true,             -- replace nodes drifted from their group's template
  consolidation = false,              -- replace underused nodes with fewer or cheaper ones
  consolidation_min_savings = 0.1,    -- fraction of their price a replacement must save
}

-- The interruption kinds that take the node away (see node.interruption).
local GOING = {
  spot_interruption = true, stopping = true, terminated = true, scheduled_change = true,
  shutdown = true, preempt = true, terminate = true,
}

-- Nodes the cloud takes back soon: cordoned, drained and deleted now, and
-- a node of the same group asked for in place of each, once per node
-- (store.interrupted remembers which were replaced while they exist).
-- Returns the set of their names, for scale-down to leave them out.
local function answer_interruptions(cluster, plan, store, params)
  local answered, seen = store.interrupted or {}, {}
  store.interrupted = answered
  local going = {}
  for _, node in ipairs(cluster.nodes) do
    local it = node.interruption
    if it and node.group and (GOING[it.kind] or (it.kind == "rebalance" and params.drain_on_rebalance)) then
      local name = node.name
      seen[name], going[name] = true, true
      local why = it.deadline
        and string.format("interrupted: %s, the cloud takes it at %s", it.kind,
          os.date("!%Y-%m-%dT%H:%M:%SZ", it.deadline))
        or string.format("interrupted: %s", it.kind)
      if not answered[name] then
        -- the replacement first: the group keeps its size while the node goes
        if packing.room(cluster.groups[node.group]) > 0 then
          plan:scale_up(node.group, 1, string.format("in place of %s (%s)", name, why))
          answered[name] = true
        else
          plan:log("%s: %s; no room in its group %s for a node in its place (at its max or backed off)",
            name, why, node.group)
        end
      end
      if node.removing then
        plan:explain(node, true, "%s; being drained and deleted", why)
      elseif node.protected then
        plan:explain(node, false, "%s, but it runs a protected pod", why)
      else
        plan:explain(node, true, why)
        if not node.unschedulable then plan:cordon(node, why, { disruption = "interrupted" }) end
        plan:drain(node, why, { disruption = "interrupted" })
        plan:delete(node, why .. "; drained", { disruption = "interrupted" })
      end
    end
  end
  for name in pairs(answered) do
    if not seen[name] then answered[name] = nil end
  end
  return going
end

-- Picks the group to grow for pending pods that nodes on their way cannot
-- take: most pods placed on new nodes, then least waste, then cheapest per
-- hour, then name.
local function best_group(cluster, pods, used, done, sets)
  local best, best_result
  local opts = { upcoming = 0, after = done, existing = true }
  local candidates = {}
  for _, set in ipairs(sets) do
    local free = true
    for _, g in ipairs(set) do free = free and not used[g.name] end
    if free then candidates[#candidates + 1] = { set = set } end
  end
  for _, g in ipairs(cluster.group_list) do candidates[#candidates + 1] = { group = g } end
  for _, c in ipairs(candidates) do
    local g, r = c.group, nil
    if c.set then
      g = c.set[1]
      r = packing.balanced(cluster, pods, c.set, done)
      r.set = c.set
    elseif not used[g.name] then
      -- within its max; none while a failed launch (no capacity, quota) backs it off
      r = packing.pack_group(cluster, pods, g, packing.room(g), opts)
    end
    if r and r.placed > 0 then
      local waste = math.max(r.waste.cpu, r.waste.memory)
      local better = not best
        or r.placed > best_result.placed
        or (r.placed == best_result.placed and waste < best_result.waste_max - 1e-9)
        or (r.placed == best_result.placed and math.abs(waste - best_result.waste_max) <= 1e-9
            and (r.price_per_hour or g.price_per_hour)
              < (best_result.price_per_hour or best.price_per_hour))
      if better then
        best, best_result = g, r
        best_result.waste_max = waste
      end
    end
  end
  return best, best_result
end

-- "ns/a (workers: insufficient cpu ...; gpu: backed off until
-- 2026-11-30T10:05:00Z (InsufficientInstanceCapacity: ...); spot: at its max
-- of 10), ns/b (...)" for the first few pods that no group could take: a
-- group the pod fits is backed off (after a failed launch), at its max, or
-- was left out by this round's packing.
local function why_unplaced(cluster, pods)
  local parts = {}
  for i = 1, math.min(3, #pods) do
    local pod, reasons = pods[i], {}
    for _, g in ipairs(cluster.group_list) do
      local ok, why = cluster:fits(pod, g)
      if ok and (g.backed_off_until or 0) > cluster.now then
        why = string.format("backed off until %s (%s)", os.date("!%Y-%m-%dT%H:%M:%SZ", g.backed_off_until),
          g.backoff_reason or "a launch failed")
      elseif ok and packing.room(g) == 0 then
        why = string.format("at its max of %d", g.max)
      elseif ok then
        why = string.format("room for %d more node(s), but this round's packing left the pod out",
          packing.room(g))
      end
      reasons[#reasons + 1] = g.name .. ": " .. why
    end
    if #reasons == 0 then reasons[1] = "no node groups configured" end
    parts[#parts + 1] = string.format("%s/%s (%s)", pod.namespace, pod.name,
      table.concat(reasons, "; "))
  end
  if #pods > 3 then parts[#parts + 1] = string.format("and %d more", #pods - 3) end
  return table.concat(parts, ", ")
end

-- A node made this long after its group's drift replacements began was
-- made from the template as it is now.
local DRIFT_SETTLE = 600

-- Expired and drifted nodes replaced by a node of their group, one of each
-- per group and round, while the group has no replace under way. 'skip':
-- nodes answered already this round. Adds the nodes replaced to 'skip'.
-- store.drift[group] remembers when its drift replacements began and for
-- which reasons: a node made since then (DRIFT_SETTLE after) that drifts
-- for one of them means the group's nodes never get what the template says
-- (a label or taint the kubelet is not told to set): replacing would go on
-- for ever, so the group's nodes drifted that way are left alone and that
-- is said once a round.
local function renew(cluster, plan, store, skip, params)
  local busy, done, drifting = {}, {}, {}
  local drift = store.drift or {}
  store.drift = drift
  for _, node in ipairs(cluster.nodes) do
    if node.replacing and node.group then busy[node.group] = true end
    if node.drifted and node.group then drifting[node.group] = true end
  end
  for gname in pairs(drift) do
    if not drifting[gname] then drift[gname] = nil end
  end
  for _, node in ipairs(cluster.nodes) do
    local gname = node.group
    local dg = gname and drift[gname]
    local reason = node.drift_reason or ""
    if node.drifted and dg and not dg.futile[reason] and dg.reasons[reason]
        and cluster.now - node.age > dg.since + DRIFT_SETTLE then
      dg.futile[reason] = node.name
    end
  end
  for gname, dg in pairs(drift) do
    for reason, made in pairs(dg.futile) do
      plan:log("group %s: %s was made after its drift replacements began and drifts the same way (%s): "
        .. "its nodes never get what the template says; fix the template or set replace_drifted = false "
        .. "(its nodes drifted this way are left alone)", gname, made, reason)
    end
  end
  local expire_after = {}
  for _, node in ipairs(cluster.nodes) do
    local gname = node.group
    if gname and not busy[gname] then
      -- the group's expire_after once a round, and node.protected (a walk
      -- of the node's pods) only for a node that would be replaced
      local exp = expire_after[gname]
      if exp == nil then
        exp = cluster.groups[gname].expire_after or false
        expire_after[gname] = exp
      end
      local d = done[gname] or {}
      done[gname] = d
      local expired = exp and not d.expired and node.age >= exp
      local drifted = not expired and not d.drifted and params.replace_drifted and node.drifted
        and not (drift[gname] and drift[gname].futile[node.drift_reason or ""])
      local name = node.name
      if not (expired or drifted) or skip[name] or node.removing or node.protected then
        expired, drifted = false, false
      end
      if expired then
        local why = string.format("expired: %s old, the group's expire_after is %s",
          ls.format_duration(node.age), ls.format_duration(exp))
        plan:explain(node, true, why)
        plan:replace(node, gname, why, { disruption = "expired" })
        d.expired, skip[name] = true, true
      elseif drifted then
        local dg = drift[gname] or { since = cluster.now, reasons = {}, futile = {} }
        drift[gname] = dg
        dg.reasons[node.drift_reason or ""] = true
        local why = "drifted: " .. (node.drift_reason or "not what its group launches now")
        plan:explain(node, true, why)
        plan:replace(node, gname, why, { disruption = "drifted" })
        d.drifted, skip[name] = true, true
      end
    end
  end
end

local function scale_up(cluster, plan, store, pods, params, placed_now)
  -- pods that nodes already on their way will take need nothing new; the
  -- pods placed on the nodes as they are count there (spread, affinity)
  local steps, rest = packing.on_the_way(cluster, pods, { placed_now })
  if #rest == 0 then return end
  local done, used, grown = { placed_now }, {}, false
  for _, s in ipairs(steps) do done[#done + 1] = s.result end
  local ways = { table.unpack(done) }
  pods = rest
  local sets = {}
  local mode, balance = params.balance_similar_groups, false
  if mode == "always" then
    balance = true
  elseif mode == "auto" then
    for _, pod in ipairs(pods) do
      if pod.constrained then balance = true break end
    end
  elseif mode ~= "never" then
    error(string.format('balance_similar_groups must be "always", "never" or "auto", not %q', tostring(mode)))
  end
  if balance then sets = packing.similar(cluster) end
  local chosen, placed = {}, 0
  while #pods > 0 do
    local g, r = best_group(cluster, pods, used, done, sets)
    if not g then break end
    used[g.name], done[#done + 1] = true, r
    for _, h in ipairs(r.set or { g }) do used[h.name] = true end
    chosen[#chosen + 1] = { group = g, result = r, set = r.set, pending = #pods }
    pods, grown, placed = r.unplaced, true, placed + r.placed
  end
  -- a spread whose domains are groups that differ in its key (capacity
  -- types, a custom label) stops each group, packed alone, at its skew:
  -- every group packed together, cheapest first, when that places more
  for _, pod in ipairs(pods) do
    if pod.constrained then
      local r, list = packing.together(cluster, rest, ways)
      if r and r.placed > placed then
        chosen = { { group = list[1], result = r, set = list, together = true, pending = #rest } }
        pods, grown = r.unplaced, true
      end
      break
    end
  end
  for _, c in ipairs(chosen) do
    local r = c.result
    for _, h in ipairs(c.set or { c.group }) do
      local count = c.set and r.new_nodes_by_group[h.name] or r.new_nodes
      if count > 0 then
        plan:scale_up(h.name, count, string.format(
          "%d pending pod(s): %d fit %d new %s node(s)%s%s (waste cpu %.0f%%, memory %.0f%%)",
          c.pending, r.placed, count, h.name,
          (r.instance_type and string.format(" (packed as %s)", r.instance_type) or "")
            .. packing.on_existing(r),
          c.together and string.format(", of %d in groups packed together", r.new_nodes)
            or c.set and string.format(", of %d balanced over %d similar groups", r.new_nodes, #c.set)
            or "",
          r.waste.cpu * 100, r.waste.memory * 100),
          not c.set and packing.launch_opts(r, h) or nil)
        store.last_scale_up = cluster.now
      end
    end
  end
  if #pods > 0 and not grown then
    plan:log("%d pending pod(s) fit no node group: %s", #pods, why_unplaced(cluster, pods))
  elseif #pods > 0 then
    plan:log("%d pending pod(s) fit no group within its max: %s", #pods,
      why_unplaced(cluster, pods))
  end
end

-- Consolidation, in a quiet round: first the rest of an earlier
-- multi-node replacement (drained and deleted once their pods fit
-- elsewhere), then, when nothing was removed and no replace or removal is
-- under way, one replacement of the candidates. Returns how many nodes
-- the round removes.
local function consolidate(cluster, plan, store, params, candidates, removed, excluded)
  local followers = consolidation.followers(cluster, store) or {}
  for name in pairs(followers) do
    local node = cluster:node(name)
    if node and not node.removing and not node.replacing and removed < params.max_scale_down
        and cluster:drainable(node, { exclude = excluded }) then
      local why = "the rest of a consolidation; its pods fit elsewhere"
      plan:drain(node, why, { disruption = "underutilized" })
      plan:delete(node, why .. "; drained", { disruption = "underutilized" })
      removed = removed + 1
      excluded[#excluded + 1] = node
    end
  end
  if removed > 0 or #candidates == 0 then return removed end
  local busy = consolidation.busy(cluster)
  if busy then
    plan:log("consolidation waits: node %s is being %s", busy.name,
      busy.replacing and "replaced" or "removed")
    return removed
  end
  local eligible = {}
  for _, node in ipairs(candidates) do eligible[node.name] = true end
  local mine = { min_node_age = params.unneeded_for, consolidation_candidates = 100,
                 consolidation_min_savings = params.consolidation_min_savings }
  local offered = {}
  for _, node in ipairs(consolidation.candidates(cluster, mine)) do
    if eligible[node.name] then offered[#offered + 1] = node end
  end
  consolidation.replace(cluster, plan, offered, mine, store)
  return removed
end

function P.reconcile(cluster, params, store)
  local plan = ls.plan()
  local threshold = params.scale_down_utilization
  local unneeded_for = ls.duration(params.unneeded_for)
  local delay_after_add = ls.duration(params.scale_down_delay_after_add)
  store.under_since = store.under_since or {}

  -- pods the scheduler could not place, less those that fit the nodes as
  -- they are now (one registered or pods finished since it tried)
  local unschedulable = ls.unschedulable(cluster)
  local placed = cluster:place(unschedulable)
  local pending = placed.unplaced
  if placed.placed > 0 then
    plan:log("%d unschedulable pod(s) fit the nodes as they are now: no new capacity for them",
      placed.placed)
  end
  local answered = answer_interruptions(cluster, plan, store, params)
  renew(cluster, plan, store, answered, params)
  if #pending > 0 then
    scale_up(cluster, plan, store, pending, params, placed)
  end

  local now = cluster.now
  local quiet = #pending == 0
    and (not store.last_scale_up or now - store.last_scale_up >= delay_after_add)

  -- one pass over the nodes: track how long each has been under the
  -- threshold, and collect the candidates (under it long enough)
  local under_since, seen, candidates = store.under_since, {}, {}
  local explaining = plan:explaining()
  for _, node in ipairs(cluster.nodes) do
    local name, group = node.name, node.group
    local u = ls.utilization(node)
    local since = nil
    if u < threshold and group and not node.unschedulable then
      since = under_since[name] or now
    end
    under_since[name], seen[name] = since, true
    -- the notes are built only when something reads them (decide, specs)
    if not group then
      if explaining then plan:explain(node, false, "not in a managed node group") end
    elseif answered[name] then
      -- answered above (interrupted, expired or drifted)
    elseif node.replacing then
      if explaining then plan:explain(node, true, "being replaced") end
    elseif node.removing then
      if explaining then plan:explain(node, true, "being drained and deleted") end
    elseif not since then
      if explaining then
        plan:explain(node, false, "utilization %.2f is not below %.2f", u, threshold)
      end
    elseif now - since < unneeded_for then
      if explaining then
        plan:explain(node, false, "utilization %.2f below %.2f for %s of %s", u, threshold,
          ls.format_duration(now - since), ls.format_duration(unneeded_for))
      end
    else
      candidates[#candidates + 1] = node
    end
  end
  for name in pairs(under_since) do
    if not seen[name] then under_since[name] = nil end
  end
  -- least utilized first, then by name
  cluster:sort_by_utilization(candidates)

  local removed, excluded = 0, {}
  local shrink = {}
  for _, node in ipairs(candidates) do
    local g = cluster.groups[node.group]
    -- the drain simulation is the costly part: only run it for nodes that
    -- could be removed this round
    local ok, why, last
    if g.current - g.removing - (shrink[g.name] or 0) <= g.min then
      ok, why = false, "group " .. g.name .. " is at its min"
    elseif not quiet then
      ok, why, last = false, "waiting: pods are pending or a scale-up was recent", true
    elseif removed >= params.max_scale_down then
      ok, why, last = false, "waiting: max_scale_down reached this round", true
    else
      ok, why = cluster:drainable(node, { exclude = excluded })
    end
    -- from here on no candidate can go this round: only the notes, when
    -- something reads them, would tell the rest apart
    if last and not explaining then break end
    if ok or explaining then
      local unneeded = string.format("utilization %.2f below %.2f for %s", ls.utilization(node),
        threshold, ls.format_duration(now - under_since[node.name]))
      if ok then
        plan:explain(node, true, unneeded)
        plan:drain(node, unneeded)
        plan:delete(node, unneeded .. "; drained")
        removed = removed + 1
        shrink[g.name] = (shrink[g.name] or 0) + 1
        excluded[#excluded + 1] = node
      else
        plan:explain(node, false, unneeded .. ", but " .. why)
      end
    end
  end
  if params.consolidation and quiet then
    removed = consolidate(cluster, plan, store, params, candidates, removed, excluded)
  end
  return plan
end

return P
