-- batch: autoscaling for batch jobs, which must not be killed half way.
--
-- A job pod is a pod whose controller kind is in `job_kinds` ("Job") and
-- that has not finished. A node that runs one is never drained, with one
-- exception below.
--
-- Scale up: pending pods first go back to nodes that are draining (see
-- below) and could take them: those nodes are untainted instead of buying
-- new ones. The rest are packed onto the node groups like binpack does:
-- the lowest price per placed pod wins, and the pods it cannot take go to
-- the next group. Pods that fit no group are logged with the reason.
--
-- Scale down, in two steps:
--   1. A managed, Ready, schedulable node older than `min_node_age`, with
--      no job pods, whose larger of cpu and memory request utilization is
--      below `idle_below`, and whose other pods could move elsewhere, is
--      tainted luascale.io/draining=true:NoSchedule and annotated
--      luascale.io/draining-since=<unix seconds>, so no new job lands on
--      it. Not while unschedulable pods are pending (pods that no group
--      could run even on an empty node do not count), never below the
--      group's min. (An operator may taint a node by hand to retire it;
--      the clock then starts when the policy first sees the taint.)
--   2. A draining node is terminated (drained, then deleted):
--      * after `soft_grace`, once it runs no job pods and its other pods
--        fit on the nodes that stay;
--      * after `hard_grace`, REGARDLESS of its pods: no waiting for job
--        pods, no check that they fit elsewhere. This is the one case
--        where running job pods are evicted (their Job starts them again
--        elsewhere, scaling up if it must): it bounds how long a stuck or
--        endless job can hold a node. The C safety checks still apply: a
--        PodDisruptionBudget that allows no disruption, a protected pod or
--        safe-to-evict=false holds the node back.
--   Up to `fast_removals_per_round` nodes go per round while the managed
--   nodes' request utilization (larger of cpu and memory) is below
--   `fast_below`, else `slow_removals_per_round`; the config's
--   safety.max_scale_down_per_round caps both.

local ls = require "luascale"
local packing = require "luascale.packing"

local P = {}

P.params = {
  job_kinds = { "Job" },        -- controller kinds whose pods are batch jobs
  idle_below = 0.5,             -- fraction of allocatable requested (larger of cpu, memory)
  min_node_age = "10m",         -- younger nodes are never tainted
  soft_grace = "5m",            -- tainted this long and no job pods left: terminate
  hard_grace = "1h",            -- tainted this long: terminate even with job pods
  fast_below = 0.3,             -- cluster utilization under which removals go fast
  fast_removals_per_round = 5,  -- nodes terminated per round when fast
  slow_removals_per_round = 1,  -- nodes terminated per round otherwise
}

local TAINT = "luascale.io/draining"
local SINCE = "luascale.io/draining-since"
local EPS = 1e-9

local function is_draining(node)
  for _, x in ipairs(node.taints) do
    if x.key == TAINT and x.effect == "NoSchedule" then return true end
  end
  return false
end

-- Unfinished pods of the node whose controller is a job kind.
local function job_pods(node, kinds)
  local n = 0
  if node.pod_count == 0 then return 0 end
  for _, p in ipairs(node.pods) do
    if not p.finished and p.controller and kinds[p.controller] then n = n + 1 end
  end
  return n
end

-- Request utilization of all managed, Ready nodes (larger of cpu, memory).
local function cluster_utilization(cluster)
  local req, alloc = { cpu = 0, memory = 0 }, { cpu = 0, memory = 0 }
  for _, n in ipairs(cluster.nodes) do
    if n.group and n.ready then
      for k in pairs(req) do
        req[k] = req[k] + n.requested[k]
        alloc[k] = alloc[k] + n.allocatable[k]
      end
    end
  end
  local u = 0
  for k in pairs(req) do
    if alloc[k] > 0 then u = math.max(u, req[k] / alloc[k]) end
  end
  return u
end

-- Could 'pod' run on the draining 'node' once its taint is gone, within
-- 'room' (what is left of the node's free resources)? The node itself
-- answers for its cordon, labels and affinity (checked before taints); its
-- group's template for the other taints; 'room' for the resources.
local function fits_untainted(cluster, pod, node, room)
  local ok, why = cluster:fits(pod, node)
  if not ok then
    if not why:find(TAINT, 1, true) then return false end
    if not cluster:fits(pod, node.group) then return false end
  end
  for k, v in pairs(pod.requests) do
    if v > 0 and v > (room[k] or 0) + EPS then return false end
  end
  return true
end

-- Hands pending pods to draining nodes that could take them, most
-- recently tainted first. Returns the nodes to untaint (name -> list of
-- pods) and the pods left.
local function reclaim(cluster, draining, pods)
  local order = {}
  for _, d in ipairs(draining) do order[#order + 1] = d end
  table.sort(order, function(a, b)
    if a.since ~= b.since then return a.since > b.since end
    return a.node.name < b.node.name
  end)
  local rooms, taken, left = {}, {}, {}
  for _, pod in ipairs(pods) do
    local home
    for _, d in ipairs(order) do
      local room = rooms[d.node.name]
      if not room then
        room = {}
        for k, v in pairs(d.node.free) do room[k] = v end
        rooms[d.node.name] = room
      end
      if fits_untainted(cluster, pod, d.node, room) then home = d.node break end
    end
    if home then
      for k, v in pairs(pod.requests) do rooms[home.name][k] = (rooms[home.name][k] or 0) - v end
      taken[home.name] = taken[home.name] or {}
      table.insert(taken[home.name], pod)
    else
      left[#left + 1] = pod
    end
  end
  return taken, left
end

local function pod_names(pods)
  local out = {}
  for i, p in ipairs(pods) do
    if i > 3 then out[#out + 1] = string.format("and %d more", #pods - 3) break end
    out[#out + 1] = p.namespace .. "/" .. p.name
  end
  return table.concat(out, ", ")
end

local scale_up = packing.scale_up

function P.reconcile(cluster, params, store)
  local plan = ls.plan()
  local now = cluster.now
  local kinds = {}
  for _, k in ipairs(params.job_kinds) do kinds[k] = true end
  local min_age = ls.duration(params.min_node_age)
  local soft, hard = ls.duration(params.soft_grace), ls.duration(params.hard_grace)

  -- what each managed node is doing
  local draining, active, leaving = {}, {}, {}
  for _, node in ipairs(cluster.nodes) do
    if not node.group then
      plan:explain(node, false, "not in a managed node group")
    elseif is_draining(node) then
      local since = math.tointeger(tonumber(node.annotations[SINCE] or ""))
      draining[#draining + 1] = { node = node, since = since or now, unstamped = not since,
                                  jobs = job_pods(node, kinds) }
      leaving[node.group] = (leaving[node.group] or 0) + 1
    else
      active[#active + 1] = node
    end
  end

  -- scale up: draining nodes first, then new nodes
  local pending, placed = ls.needing_capacity(cluster)
  local reclaimed = {}
  if #pending > 0 then
    local taken, left = reclaim(cluster, draining, pending)
    for _, d in ipairs(draining) do
      local pods = taken[d.node.name]
      if pods then
        local why = string.format("%d pending pod(s) fit here: %s", #pods, pod_names(pods))
        plan:untaint(d.node, TAINT, "NoSchedule", why)
        plan:annotate(d.node, SINCE, nil, why)
        plan:explain(d.node, false, "untainted: " .. why)
        reclaimed[d.node.name] = true
      end
    end
    if #left > 0 then scale_up(cluster, plan, left, { placed }) end
  end
  local waiting = 0 -- pending pods some group could run
  for _, pod in ipairs(pending) do
    if not packing.fits_no_group(cluster, pod) then waiting = waiting + 1 end
  end

  -- step 1: taint idle nodes
  for _, node in ipairs(active) do
    local g = cluster.groups[node.group]
    local u = ls.utilization(node)
    local why
    if not node.ready then why = "not Ready"
    elseif node.unschedulable then why = "cordoned"
    elseif u >= params.idle_below then
      why = string.format("utilization %.2f is not below %.2f", u, params.idle_below)
    elseif job_pods(node, kinds) > 0 then -- after the cheap checks: reading node.pods builds them
      why = string.format("runs %d job pod(s)", job_pods(node, kinds))
    elseif node.age < min_age then
      why = string.format("idle, but age %s is under min_node_age %s", ls.format_duration(node.age),
        ls.format_duration(min_age))
    elseif waiting > 0 then
      why = string.format("idle, but %d unschedulable pod(s) pending", waiting)
    elseif g.current - (leaving[g.name] or 0) <= g.min then
      why = string.format("idle, but group %s is at its min of %d", g.name, g.min)
    else
      local ok, blocked = cluster:drainable(node)
      if not ok then why = "idle, but " .. blocked end
    end
    if why then
      plan:explain(node, false, why)
    else
      local reason = string.format("idle: no job pods, utilization %.2f below %.2f", u, params.idle_below)
      plan:taint(node, TAINT, "true", "NoSchedule", reason)
      plan:annotate(node, SINCE, tostring(now), reason)
      plan:explain(node, true, reason .. "; tainted, terminated after " .. ls.format_duration(soft))
      leaving[g.name] = (leaving[g.name] or 0) + 1
    end
  end

  -- step 2: terminate draining nodes past their grace; empty ones first,
  -- then the longest draining
  local util = cluster_utilization(cluster)
  local limit, pace
  if util < params.fast_below then
    limit, pace = params.fast_removals_per_round, string.format("utilization %.2f below %.2f", util, params.fast_below)
  else
    limit, pace = params.slow_removals_per_round, string.format("utilization %.2f not below %.2f", util, params.fast_below)
  end
  local queue = {}
  for _, d in ipairs(draining) do
    if not reclaimed[d.node.name] then queue[#queue + 1] = d end
  end
  table.sort(queue, function(a, b)
    if (a.jobs == 0) ~= (b.jobs == 0) then return a.jobs == 0 end
    if a.since ~= b.since then return a.since < b.since end
    return a.node.name < b.node.name
  end)
  local removed, shrink = {}, {}
  for _, d in ipairs(queue) do
    local node, g = d.node, cluster.groups[d.node.group]
    local age = now - d.since
    local state = string.format("draining for %s", ls.format_duration(age))
    local ok, why
    if d.unstamped then
      plan:annotate(node, SINCE, tostring(now), "tainted " .. TAINT .. " without a start time: starting now")
    end
    if node.removing then
      ok, why = false, "its drain and delete are under way"
    elseif age < soft then
      ok, why = false, string.format("soft_grace is %s", ls.format_duration(soft))
    elseif d.jobs > 0 and age < hard then
      ok, why = false, string.format("%d job pod(s) still running; hard_grace is %s", d.jobs,
        ls.format_duration(hard))
    elseif g.current - g.removing - (shrink[g.name] or 0) <= g.min then
      ok, why = false, string.format("group %s is at its min of %d", g.name, g.min)
    elseif #removed >= limit then
      ok, why = false, string.format("%d removal(s) per round reached (%s)", limit, pace)
    elseif age >= hard then
      -- the one case where running job pods are evicted; the C safety
      -- checks (PDBs, protected pods) can still refuse it
      ok, why = true, string.format("past hard_grace %s: terminating regardless of its pods (%d job pod(s))",
        ls.format_duration(hard), d.jobs)
    else
      ok, why = cluster:drainable(node, { exclude = removed })
      if ok then why = string.format("past soft_grace %s and no job pods left", ls.format_duration(soft)) end
    end
    if ok then
      plan:explain(node, true, state .. ", " .. why)
      plan:drain(node, state .. ", " .. why)
      plan:delete(node, state .. "; drained")
      removed[#removed + 1] = node
      shrink[g.name] = (shrink[g.name] or 0) + 1
    else
      plan:explain(node, false, state .. ", but " .. why)
    end
  end
  return plan
end

return P
