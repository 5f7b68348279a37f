-- jupyterhub: the classroom JupyterHub autoscaler. No user pod is ever
-- evicted: nodes are emptied by waiting, not by draining.
--
-- Utilization is the sum of requests over the sum of allocatable of the
-- schedulable (not cordoned), Ready nodes of the managed groups (`groups`,
-- default every group), the larger of cpu and memory. Nothing happens while
-- it stays inside [`low`, `high`]; outside, the policy aims at `target`.
--
-- Scale up, when utilization is above `high` or pods are unschedulable:
-- first uncordon nodes luascale cordoned for scale-down (they carry the
-- `cordon_annotation`), the most loaded first, until the pending pods have
-- room and utilization is back at `target`. Only when that is not enough,
-- add nodes: what packing the remaining pending pods needs, plus what
-- brings utilization to `target`, within each group's max, skipping a
-- group backed off after a failed launch (no capacity, quota). Nodes already
-- on their way (requested from the cloud, or registered but not Ready for
-- less than `boot_grace`) count as capacity. Pending pods that fit no
-- managed group are logged; they neither scale up nor hold back scale-down.
--
-- Scale down, when utilization is below `low`, no pod is pending and no
-- scale-up happened for `scale_down_delay_after_up`: cordon the least
-- loaded nodes that run no critical pod (label `critical_label`, any
-- value), at most `max_cordon_per_round`, while the rest stays at or
-- below `target` — counting the pods of every node cordoned for
-- scale-down as coming back to the rest, since students log in again —
-- and never below a group's min counting cordoned nodes as gone. The node
-- is marked with `cordon_annotation` = the unix time of the cordon.
--
-- Removal: a marked node is drained and deleted once nothing is left on
-- it but omittable pods — labelled `omit_label`, DaemonSet, mirror or
-- static, completed (Succeeded or Failed), or in `omit_namespaces` — at
-- most `max_delete_per_round` per round. A critical pod always keeps its
-- node. Nodes cordoned by someone else (no mark) are never touched.
--
-- Every managed node gets a one-line why (`luascale decide` shows it).

local ls = require "luascale"
local packing = require "luascale.packing"

local P = {}

P.params = {
  groups = {},                 -- node group names to manage; empty: every group
  low = 0.65,                  -- utilization (fraction of allocatable) below which to scale down
  high = 0.85,                 -- utilization above which to scale up
  target = 0.75,               -- utilization both directions aim at
  critical_label = "hub.jupyter.org/autoscaler-critical", -- pod label: its node is never cordoned
  omit_label = "hub.jupyter.org/autoscaler-omit",         -- pod label: does not keep a node alive
  omit_namespaces = { "kube-system" },                    -- pods there do not keep a node alive
  cordon_annotation = "luascale.io/cordoned-for-scale-down", -- node mark: unix seconds of the cordon
  max_cordon_per_round = 1,    -- nodes cordoned per reconcile
  max_delete_per_round = 1,    -- nodes drained and deleted per reconcile
  scale_down_delay_after_up = "10m", -- no cordoning this long after a scale-up or uncordon
  boot_grace = "10m",          -- a registered node not Ready yet counts as coming capacity this long
}

local EPS = 1e-9

-- ---- resources (cpu in cores, memory in bytes) --------------------------

local function res(cpu, memory) return { cpu = cpu or 0, memory = memory or 0 } end

local function add(a, b, times)
  times = times or 1
  a.cpu = a.cpu + (b.cpu or 0) * times
  a.memory = a.memory + (b.memory or 0) * times
  return a
end

local function plus(a, b) return add(res(a.cpu, a.memory), b) end

-- requested / allocatable, the larger of cpu and memory; math.huge when
-- there is demand and no capacity.
local function ratio(demand, capacity)
  local worst = 0
  for _, k in ipairs({ "cpu", "memory" }) do
    local d, c = demand[k], capacity[k]
    if c > 0 then
      worst = math.max(worst, d / c)
    elseif d > 0 then
      return math.huge
    end
  end
  return worst
end

local function fmt_ratio(u)
  return u == math.huge and "unbounded (no capacity)" or string.format("%.2f", u)
end

-- Nodes of 'template' allocatable needed so that demand/capacity <= target.
local function nodes_needed(demand, capacity, target, template)
  local need = 0
  for _, k in ipairs({ "cpu", "memory" }) do
    local per = template[k] or 0
    if per > 0 then
      local deficit = demand[k] / target - capacity[k]
      if deficit > EPS then need = math.max(need, math.ceil(deficit / per - EPS)) end
    end
  end
  return need
end

local function set_of(list)
  local out = {}
  for _, v in ipairs(list or {}) do out[v] = true end
  return out
end

local function pod_names(pods, limit)
  local parts = {}
  for i = 1, math.min(limit or 3, #pods) do
    parts[i] = pods[i].namespace .. "/" .. pods[i].name
  end
  if #pods > (limit or 3) then parts[#parts + 1] = string.format("and %d more", #pods - (limit or 3)) end
  return table.concat(parts, ", ")
end

-- ---- pods -----------------------------------------------------------------

local function is_critical(pod, params)
  return not pod.finished and pod.labels[params.critical_label] ~= nil
end

-- Why a pod does not keep its node alive, or nil when it does.
local function omittable(pod, params, omit_ns)
  if is_critical(pod, params) then return nil end
  if pod.finished then return "completed" end
  if pod.daemonset then return "DaemonSet" end
  if pod.mirror or pod.static then return "static" end
  if pod.labels[params.omit_label] ~= nil then return params.omit_label end
  if omit_ns[pod.namespace] then return "namespace " .. pod.namespace end
  return nil
end

-- The node's first critical pod (unfinished, labelled `critical_label`:
-- selector { [critical_label] = true }), or nil; found in C, no pod table
-- built.
local function critical_pod(cluster, node, selector)
  local _, first = cluster:pods_matching(node, selector)
  return first
end

-- Does the pod fit into 'free' (a node's free room, updated by the caller)?
-- Labels and taints are checked against the node's group template: a
-- cordoned node fails cluster:fits whatever its room.
local function fits_room(pod, free)
  for k, v in pairs(pod.requests) do
    if k ~= "pods" and v > 0 and (free[k] or 0) < v - EPS then return false end
  end
  return (free.pods or 0) >= math.max(pod.requests.pods or 1, 1)
end

local function take_room(pod, free)
  for k, v in pairs(pod.requests) do
    if k ~= "pods" then free[k] = (free[k] or 0) - v end
  end
  free.pods = (free.pods or 0) - math.max(pod.requests.pods or 1, 1)
end

-- ---- the groups this policy manages -------------------------------------

local function managed_groups(cluster, params, plan)
  local list, set = {}, {}
  if #params.groups == 0 then
    for _, g in ipairs(cluster.group_list) do list[#list + 1] = g; set[g.name] = true end
  else
    for _, name in ipairs(params.groups) do
      local g = cluster.groups[name]
      if not g then
        plan:log("param groups names %q, which is not a configured node group", tostring(name))
      elseif not set[name] then
        list[#list + 1] = g
        set[name] = true
      end
    end
  end
  return list, set
end

-- Pending pods split into those some managed group could run and those
-- none can (with why, for the log).
local function placeable(cluster, groups, pods)
  local ok_pods, fit_groups, unfit = {}, {}, {}
  for _, pod in ipairs(pods) do
    local fits, any = {}, false
    for _, g in ipairs(groups) do
      if cluster:fits(pod, g) then fits[g.name], any = true, true end
    end
    if any then
      ok_pods[#ok_pods + 1] = pod
      fit_groups[pod] = fits
    else
      -- why, asked again only for the pods no group takes
      local reasons = {}
      for _, g in ipairs(groups) do
        local _, why = cluster:fits(pod, g)
        reasons[#reasons + 1] = g.name .. ": " .. why
      end
      if #reasons == 0 then reasons[1] = "no managed node groups" end
      unfit[#unfit + 1] = string.format("%s/%s (%s)", pod.namespace, pod.name,
        table.concat(reasons, "; "))
    end
  end
  return ok_pods, fit_groups, unfit
end

-- ---- scale up -------------------------------------------------------------

-- Nodes group 'g' may still add this round beyond 'grow': none while it is
-- backed off after a failed launch (no capacity, quota), so another group
-- is tried.
local function room_left(g, grow)
  return packing.room(g) - (grow[g.name] or 0)
end

-- Packs 'pods' onto the group that places the most, then wastes the least,
-- then is cheapest; 'grow' holds nodes already added per group this round.
local function best_pack(cluster, groups, pods, grow, used)
  local best, best_r, best_waste
  for _, g in ipairs(groups) do
    if not used[g.name] then
      local room = room_left(g, grow)
      if room > 0 or g.upcoming > 0 then
        local r = cluster:pack(pods, g, math.max(room, 0))
        if r.placed > 0 then
          local waste = math.max(r.waste.cpu, r.waste.memory)
          if not best or r.placed > best_r.placed
            or (r.placed == best_r.placed and waste < best_waste - EPS)
            or (r.placed == best_r.placed and math.abs(waste - best_waste) <= EPS
                and g.price_per_hour < best.price_per_hour) then
            best, best_r, best_waste = g, r, waste
          end
        end
      end
    end
  end
  return best, best_r
end

local function scale_up(s)
  local cluster, params, plan = s.cluster, s.params, s.plan
  local target = params.target
  local demand = plus(s.requested, s.pending_requests)
  local capacity = plus(s.allocatable, s.coming)
  local unplaced = {}
  for i, pod in ipairs(s.pending) do unplaced[i] = pod end

  local function satisfied()
    return #unplaced == 0 and ratio(demand, capacity) <= target + EPS
  end

  if satisfied() then
    plan:log("%s: covered by the %s of capacity on its way", s.trigger,
      s.coming_count == 1 and "node" or (s.coming_count .. " nodes"))
    return false
  end

  -- 1. uncordon nodes cordoned for scale-down, most loaded first
  local marked = {}
  for _, node in ipairs(s.marked) do
    if node.ready then marked[#marked + 1] = node end
  end
  cluster:sort_by_utilization(marked, "desc") -- ties by name
  -- the pods some marked node has the free room for: a pod bigger than the
  -- most any of them has free, per resource, fits none, so the walk below
  -- skips it (and skips the pods altogether when none could fit)
  local most, could = {}, {}
  for _, node in ipairs(marked) do
    for k, v in pairs(node.free) do
      if not most[k] or v > most[k] then most[k] = v end
    end
  end
  for _, pod in ipairs(unplaced) do
    if fits_room(pod, most) then could[pod] = true end
  end
  for _, node in ipairs(marked) do
    if satisfied() then break end
    local free, placed, rest = {}, 0, unplaced
    if next(could) then
      rest = {}
      for k, v in pairs(node.free) do free[k] = v end
      for _, pod in ipairs(unplaced) do
        if could[pod] and s.fit_groups[pod][node.group] and fits_room(pod, free) then
          take_room(pod, free)
          placed = placed + 1
        else
          rest[#rest + 1] = pod
        end
      end
    end
    local before = ratio(demand, capacity)
    local after = ratio(plus(demand, node.requested), plus(capacity, node.allocatable))
    if placed > 0 or after < before - EPS then
      local why = string.format("capacity needed (%s)", s.trigger)
      if placed > 0 then why = why .. string.format("; room for %d pending pod(s)", placed) end
      -- uncordon first: a mark left on a schedulable node is cleaned up
      -- next round, a cordon without a mark would look like an admin's
      plan:uncordon(node, why)
      plan:annotate(node, params.cordon_annotation, nil, "uncordoned: no longer being emptied")
      plan:explain(node, false, "uncordoned: " .. why)
      add(demand, node.requested)
      add(capacity, node.allocatable)
      unplaced = rest
      s.uncordoned[node.name] = true
    end
  end
  if satisfied() then return true end -- something was uncordoned

  -- 2. new nodes: what the pending pods need, then what reaches the target
  local grow, used, order = {}, {}, {}
  while #unplaced > 0 do
    local g, r = best_pack(cluster, s.groups, unplaced, grow, used)
    if not g then break end
    used[g.name] = true
    order[#order + 1] = g
    if r.new_nodes > 0 then
      grow[g.name] = (grow[g.name] or 0) + r.new_nodes
      add(capacity, g.template.allocatable, r.new_nodes)
    end
    unplaced = r.unplaced
  end
  if #unplaced > 0 then
    plan:log("%d pending pod(s) fit no managed group within its max: %s", #unplaced,
      pod_names(unplaced))
  end
  local for_pods = {}
  for name, n in pairs(grow) do for_pods[name] = n end

  if ratio(demand, capacity) > target + EPS then
    for _, g in ipairs(s.groups) do
      if not used[g.name] then order[#order + 1] = g end
    end
    for _, g in ipairs(order) do
      local room = room_left(g, grow)
      local need = nodes_needed(demand, capacity, target, g.template.allocatable)
      local n = math.min(need, math.max(room, 0))
      if n > 0 then
        grow[g.name] = (grow[g.name] or 0) + n
        add(capacity, g.template.allocatable, n)
      end
      if ratio(demand, capacity) <= target + EPS then break end
    end
    if ratio(demand, capacity) > target + EPS then
      local g, maxes = order[1], {}
      for _, x in ipairs(order) do maxes[#maxes + 1] = string.format("%s %d", x.name, x.max) end
      plan:log("managed groups at their max (%s): %d more %s node(s) would be needed to bring utilization to %.2f",
        table.concat(maxes, ", "), nodes_needed(demand, capacity, target, g.template.allocatable),
        g.name, target)
    end
  end

  local any = next(s.uncordoned) ~= nil
  for _, g in ipairs(s.groups) do
    local n = grow[g.name]
    if n and n > 0 then
      local parts = {}
      if (for_pods[g.name] or 0) > 0 then
        parts[#parts + 1] = string.format("%d node(s) for the pending pods", for_pods[g.name])
      end
      if n - (for_pods[g.name] or 0) > 0 then
        parts[#parts + 1] = string.format("%d node(s) to bring utilization from %s to %.2f",
          n - (for_pods[g.name] or 0), fmt_ratio(s.util), target)
      end
      plan:scale_up(g.name, n, string.format("%s: %s", s.trigger, table.concat(parts, ", ")))
      any = true
    end
  end
  if not any and #unplaced == 0 and ratio(demand, capacity) <= target + EPS then
    plan:log("%s: covered by capacity on its way", s.trigger)
  elseif not any then
    plan:log("%s, but no node can be added: every managed group is at its max", s.trigger)
  end
  return any
end

-- ---- reconcile ------------------------------------------------------------

local function check_params(params)
  local low, high, target = params.low, params.high, params.target
  if not (low >= 0 and low <= target and target <= high and target > 0) then
    error(string.format("params: need 0 <= low <= target <= high and target > 0, got low=%s target=%s high=%s",
      tostring(low), tostring(target), tostring(high)), 2)
  end
  if math.type(params.max_cordon_per_round) ~= "integer" or params.max_cordon_per_round < 0
    or math.type(params.max_delete_per_round) ~= "integer" or params.max_delete_per_round < 0 then
    error("params: max_cordon_per_round and max_delete_per_round must be integers >= 0", 2)
  end
end

function P.reconcile(cluster, params, store)
  check_params(params)
  local plan = ls.plan()
  local now = cluster.now
  local mark = params.cordon_annotation
  local omit_ns = set_of(params.omit_namespaces)
  local boot_grace = ls.duration(params.boot_grace)
  local groups, managed = managed_groups(cluster, params, plan)
  local explaining = plan:explaining()

  -- classify the managed nodes
  local s = { cluster = cluster, params = params, plan = plan, groups = groups,
              requested = res(), allocatable = res(), coming = res(), pending_requests = res(),
              marked = {}, uncordoned = {} }
  local active, stale = {}, {}
  local marked_in, coming_count = {}, 0
  for _, node in ipairs(cluster.nodes) do
    local group = node.group
    if not group then
      if explaining then plan:explain(node, false, "not in a managed node group") end
    elseif not managed[group] then
      if explaining then plan:explain(node, false, "group " .. group .. " is not in params.groups") end
    elseif node.unschedulable then
      if node.annotations[mark] then
        s.marked[#s.marked + 1] = node
        marked_in[group] = (marked_in[group] or 0) + 1
      elseif explaining then
        plan:explain(node, false, "cordoned by someone else (no " .. mark .. " annotation): left alone")
      end
    else
      if node.annotations[mark] then stale[#stale + 1] = node end
      if node.ready then
        active[#active + 1] = node
      elseif node.age < boot_grace then
        add(s.coming, node.allocatable)
        coming_count = coming_count + 1
        plan:explain(node, false, "not Ready yet: counted as capacity on its way")
      else
        plan:explain(node, false, string.format("not Ready for %s: not counted",
          ls.format_duration(node.age)))
      end
    end
  end
  for _, g in ipairs(groups) do
    if g.upcoming > 0 then
      add(s.coming, g.template.allocatable, g.upcoming)
      coming_count = coming_count + g.upcoming
    end
  end
  s.coming_count = coming_count
  -- the active nodes' requests and allocatable, added up in C
  local req, alloc = cluster:sum(active, "requested"), cluster:sum(active, "allocatable")
  s.requested, s.allocatable = res(req.cpu, req.memory), res(alloc.cpu, alloc.memory)
  local util = ratio(s.requested, s.allocatable)
  s.util = util
  local util_text = string.format("utilization %s", fmt_ratio(util))

  -- pending pods
  local unfit
  s.pending, s.fit_groups, unfit = placeable(cluster, groups, ls.needing_capacity(cluster))
  for _, pod in ipairs(s.pending) do add(s.pending_requests, pod.requests) end
  if #unfit > 0 then
    plan:log("%d pending pod(s) fit no managed node group, not scaling up for them: %s", #unfit,
      table.concat(unfit, ", ", 1, math.min(3, #unfit))
        .. (#unfit > 3 and string.format(", and %d more", #unfit - 3) or ""))
  end

  -- scale up
  local scaled = false
  if #s.pending > 0 or util > params.high then
    local why = {}
    if util > params.high then
      why[#why + 1] = string.format("%s above %.2f", util_text, params.high)
    end
    if #s.pending > 0 then why[#why + 1] = string.format("%d pending pod(s)", #s.pending) end
    s.trigger = table.concat(why, " and ")
    scaled = scale_up(s)
    if scaled then store.last_scale_up = now end
  end

  -- removal of marked nodes that only hold omittable pods
  local size, gone = {}, {}
  for _, g in ipairs(groups) do size[g.name] = math.max(g.target, g.current) - g.removing end
  local deleted = 0
  table.sort(s.marked, function(a, b) return a.name < b.name end)
  for _, node in ipairs(s.marked) do
    if node.removing then
      plan:explain(node, false, "being drained and deleted")
    elseif not s.uncordoned[node.name] then
      local since = math.tointeger(tonumber(node.annotations[mark]))
      local cordoned = since and ("cordoned for scale-down " .. ls.format_duration(math.max(now - since, 0))
        .. " ago") or "cordoned for scale-down"
      local users, omitted = {}, {}
      for _, pod in ipairs(node.pods) do
        local why = omittable(pod, params, omit_ns)
        if why then
          omitted[why] = (omitted[why] or 0) + 1
        else
          users[#users + 1] = pod
          -- one user pod keeps the node; the others only fill its note
          if not explaining then break end
        end
      end
      local g = cluster.groups[node.group]
      if #users > 0 then
        plan:explain(node, false, string.format("%s; waiting for %d pod(s) to finish: %s", cordoned,
          #users, pod_names(users)))
      elseif deleted >= params.max_delete_per_round then
        plan:explain(node, false, cordoned .. "; empty, waiting: max_delete_per_round reached")
      elseif size[g.name] - (gone[g.name] or 0) - 1 < g.min then
        plan:explain(node, false, string.format("%s; empty, but group %s is at its min of %d",
          cordoned, g.name, g.min))
      else
        local left = {}
        for why, n in pairs(omitted) do left[#left + 1] = string.format("%d %s", n, why) end
        table.sort(left)
        local reason = cordoned .. "; no user pods left"
          .. (#left > 0 and (" (only omittable: " .. table.concat(left, ", ") .. ")") or "")
        plan:drain(node, reason)
        plan:delete(node, reason .. "; drained")
        deleted = deleted + 1
        gone[g.name] = (gone[g.name] or 0) + 1
      end
    end
  end

  -- scale down by cordoning
  local not_now
  if scaled then
    not_now = "scaling up this round"
  elseif #s.pending > 0 then
    not_now = string.format("%d pod(s) pending", #s.pending)
  elseif s.allocatable.cpu <= 0 and s.allocatable.memory <= 0 then
    not_now = "no schedulable Ready nodes"
  elseif util >= params.low then
    not_now = string.format("%s is not below %.2f", util_text, params.low)
  elseif coming_count > 0 then
    not_now = string.format("%d node(s) on their way", coming_count)
  elseif store.last_scale_up
    and now - store.last_scale_up < ls.duration(params.scale_down_delay_after_up) then
    not_now = string.format("scaled up %s ago (scale_down_delay_after_up %s)",
      ls.format_duration(now - store.last_scale_up), params.scale_down_delay_after_up)
  end

  -- the pods on nodes being emptied come back to the rest (live_requests:
  -- not finished, not DaemonSet, mirror or static)
  local demand = res(s.requested.cpu, s.requested.memory)
  for _, node in ipairs(s.marked) do
    if not s.uncordoned[node.name] then add(demand, node.live_requests) end
  end
  local capacity = res(s.allocatable.cpu, s.allocatable.memory)
  local going = {}
  for name, n in pairs(marked_in) do going[name] = n end
  -- when nothing can be cordoned this round, walking the nodes only
  -- builds their notes: skip it unless something reads them
  if not_now and not explaining then active = {} end
  -- least loaded first, ties by name (sorted in C)
  cluster:sort_by_utilization(active)
  local cordoned = 0
  local recordoned = {}
  -- the notes' texts are formatted only when something reads them
  local critical = { [params.critical_label] = true }
  for _, node in ipairs(active) do
    -- no node after this one can be cordoned either: the same
    if cordoned >= params.max_cordon_per_round and not explaining then break end
    local nu = ls.utilization(node)
    local crit = critical_pod(cluster, node, critical)
    local g = cluster.groups[node.group]
    if crit then
      if explaining then
        plan:explain(node, false, "node utilization %.2f; runs critical pod %s/%s (%s): never cordoned",
          nu, crit.namespace, crit.name, params.critical_label)
      end
    elseif not_now then
      plan:explain(node, false, "node utilization %.2f; no scale-down: %s", nu, not_now)
    elseif size[g.name] - (going[g.name] or 0) - 1 < g.min then
      plan:explain(node, false, "node utilization %.2f; group %s is at its min of %d (counting %d node(s) cordoned for scale-down)",
        nu, g.name, g.min, going[g.name] or 0)
    elseif cordoned >= params.max_cordon_per_round then
      plan:explain(node, false, "node utilization %.2f; waiting: max_cordon_per_round reached", nu)
    else
      local rest = res(capacity.cpu, capacity.memory)
      add(rest, node.allocatable, -1)
      local projected = ratio(demand, rest)
      if projected > params.target + EPS then
        if explaining then
          plan:explain(node, false, "node utilization %.2f; cordoning it would bring the rest to %s, above %.2f",
            nu, fmt_ratio(projected), params.target)
        end
      else
        local reason = string.format("%s below %.2f; least loaded (%.2f); the rest projected at %.2f",
          util_text, params.low, nu, projected)
        -- mark first: a mark without a cordon is cleaned up next round,
        -- a cordon without a mark would look like an admin's
        plan:annotate(node, mark, tostring(now), "cordoned for scale-down")
        plan:cordon(node, reason)
        plan:explain(node, false, "cordoned for scale-down: " .. reason)
        capacity = rest
        cordoned = cordoned + 1
        going[g.name] = (going[g.name] or 0) + 1
        recordoned[node.name] = true
      end
    end
  end

  -- a mark left on a node someone uncordoned is stale
  for _, node in ipairs(stale) do
    if not recordoned[node.name] then
      plan:annotate(node, mark, nil, "node is schedulable: not being emptied any more")
    end
  end
  return plan
end

return P
