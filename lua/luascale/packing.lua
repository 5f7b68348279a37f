-- luascale.packing: which node groups to grow for a set of pending pods,
-- cheapest per placed pod first.
--
--   local packing = require "luascale.packing"
--   local pods, placed = ls.needing_capacity(cluster)
--   local steps, unplaced = packing.cheapest(cluster, pods, { placed })
--   for _, s in ipairs(steps) do
--     if s.new_nodes > 0 then plan:scale_up(s.group.name, s.new_nodes, packing.describe(s)) end
--   end
--   for _, pod in ipairs(unplaced) do plan:log("%s", packing.why_nowhere(cluster, pod)) end
--
-- It only reads the cluster (cluster:pack, cluster:fits); building the plan
-- is the policy's job, so `luascale decide` points at the policy's lines.

local M = {}

local EPS = 1e-9

-- Nodes a group may still add: max - max(target, current), never negative,
-- and none while the group is backed off after a failed launch
-- (cluster:pack reads a negative max_new as 0 too).
function M.room(group)
  if group.backed_off_until then return 0 end -- its last launch failed: wait
  return math.max(0, group.max - math.max(group.target, group.current))
end

-- Is candidate a better than b? Cheaper per placed pod, then more pods
-- placed, then less waste, then the group name.
local function better(a, b)
  if math.abs(a.cost - b.cost) > EPS * math.max(1, math.abs(b.cost)) then return a.cost < b.cost end
  if a.placed ~= b.placed then return a.placed > b.placed end
  if math.abs(a.waste - b.waste) > EPS then return a.waste < b.waste end
  return a.group.name < b.group.name
end

-- Is packing a, of one group as some instance type, better than b? More
-- pods placed, then the lower price of its new nodes (when both prices
-- are known; else fewer new nodes), then less waste.
local function better_type(a, b)
  if a.placed ~= b.placed then return a.placed > b.placed end
  local ca, cb = a.price_per_hour * a.new_nodes, b.price_per_hour * b.new_nodes
  if a.price_per_hour > 0 and b.price_per_hour > 0 and math.abs(ca - cb) > EPS * math.max(1, cb) then
    return ca < cb
  end
  if a.new_nodes ~= b.new_nodes then return a.new_nodes < b.new_nodes end
  return math.max(a.waste.cpu, a.waste.memory) < math.max(b.waste.cpu, b.waste.memory) - EPS
end

-- cluster:pack(pods, g, max_new, opts) at the group's best: a group that
-- launches one of several instance types (g.instance_types: an AWS fleet
-- group) is packed as each of them too, and the packing that places the
-- most pods, then costs least, then wastes least wins; its instance_type
-- names the type packed (nil: the group's template). Sets the result's
-- price_per_hour: one of its new nodes'.
function M.pack_group(cluster, pods, g, max_new, opts)
  local best = cluster:pack(pods, g, max_new, opts)
  best.price_per_hour = g.price_per_hour
  for _, t in ipairs(g.instance_types or {}) do
    if t.name ~= g.instance_type then -- the template is that type's already
      local o = { instance_type = t.name }
      for k, v in pairs(opts or {}) do o[k] = v end
      local r = cluster:pack(pods, g, max_new, o)
      r.price_per_hour = t.price_per_hour
      if better_type(r, best) then best = r end
    end
  end
  return best
end

-- The pack results of 'steps', after the results in 'before' (cluster:place
-- results, earlier packings), for cluster:pack's 'after': what earlier
-- steps placed counts where it was planned (topology spread, anti-affinity),
-- and what they left to existing nodes takes those nodes' room.
local function results(steps, before)
  local done = {}
  for _, r in ipairs(before or {}) do done[#done + 1] = r end
  for _, s in ipairs(steps) do done[#done + 1] = s.result end
  return done
end

-- The pods of pack result 'r' (of 'pods') it placed: on its bins, and on
-- existing nodes (r.on_nodes).
local function placed_pods(r, pods)
  local out, on = {}, r.on_nodes
  for i, bin in ipairs(r.placement) do
    if bin or (on and on[i]) then out[#out + 1] = pods[i] end
  end
  return out
end

-- Packs 'pods' onto the nodes already on their way (the groups' upcoming
-- nodes: launched, not yet Ready) before anything is bought, every group's
-- in one packing (cluster:pack_together): capacity in flight is never
-- bought twice, and a spread over zones fills the nodes on their way in
-- every zone before any is bought. Returns one step per group that took
-- pods (as cheapest() does, new_nodes = 0, cost = 0; its result counts
-- where they went for cluster:pack's 'after') and the pods still left.
-- 'before': results cluster:pack's 'after' counts first (the pods
-- cluster:place put on existing nodes). A pod those nodes on their way
-- let an existing node take (a spread whose least count rises) goes
-- there: a last step, of no group's nodes, holds those.
function M.on_the_way(cluster, pods, before)
  local groups = {}
  for _, g in ipairs(cluster.group_list) do
    if g.upcoming > 0 and #groups < 64 then groups[#groups + 1] = g end
  end
  if #groups == 0 or #pods == 0 then return {}, pods end
  local r = cluster:pack_together(pods, groups, 0, { upcoming = true, existing = true, after = before })
  if r.placed == 0 then return {}, pods end
  -- the bins on their way come group after group: a group's first bin
  -- and how many it has turn a bin into that group's own bin
  local first, count, by = {}, {}, {}
  local bin_groups = r.bin_groups
  for b = 1, r.upcoming do
    local name = bin_groups[b]
    first[name] = first[name] or b
    count[name] = (count[name] or 0) + 1
  end
  for i, bin in ipairs(r.placement) do
    if bin then
      local name = bin_groups[bin]
      local s = by[name]
      if not s then
        s = { pods = {}, placement = {}, bins = {}, used = 0 }
        by[name] = s
      end
      local n = #s.pods + 1
      s.pods[n], s.placement[n] = pods[i], bin - first[name] + 1
      if not s.bins[bin] then s.bins[bin], s.used = true, s.used + 1 end
    end
  end
  local steps = {}
  for _, g in ipairs(groups) do
    local s = by[g.name]
    if s then
      local result = { group = g.name, upcoming = count[g.name], pods = s.pods,
                       placement = s.placement, placed = #s.pods, new_nodes = 0,
                       upcoming_used = s.used, unplaced = {}, waste = { cpu = 0, memory = 0 } }
      steps[#steps + 1] = { group = g, result = result, new_nodes = 0, upcoming_used = s.used,
                            placed = #s.pods, cost = 0, waste = 0, pods = s.pods }
    end
  end
  if r.on_existing > 0 then
    local on, names = {}, {}
    for i, name in ipairs(r.on_nodes) do
      if name then on[#on + 1], names[#on + 1] = pods[i], name end
    end
    local result = { group = groups[1].name, pods = on, on_nodes = names, placed = #on,
                     on_existing = #on, new_nodes = 0, upcoming_used = 0, unplaced = {},
                     waste = { cpu = 0, memory = 0 } }
    steps[#steps + 1] = { group = groups[1], result = result, new_nodes = 0, upcoming_used = 0,
                          placed = #on, cost = 0, waste = 0, pods = on, on_existing = true }
  end
  return steps, r.unplaced
end

-- Packs 'pods' onto new nodes of every group with room (M.room) at once,
-- cheapest first (cluster:pack_together): each new node opens in the
-- cheapest group whose template and the pod's relations take it. A spread
-- whose domains are the groups themselves (capacity types, a label the
-- groups differ in) stops each group, packed alone, at its skew; packed
-- together, a group takes pods again once the others have some. 'after'
-- as for cluster:pack. Returns the result and the groups, or nil when no
-- group has room.
function M.together(cluster, pods, after)
  local list, room = {}, {}
  for _, g in ipairs(cluster.group_list) do
    local n = M.room(g)
    if n > 0 then list[#list + 1], room[g.name] = g, n end
  end
  if #list == 0 then return nil end
  table.sort(list, function(a, b)
    if a.price_per_hour ~= b.price_per_hour then return a.price_per_hour < b.price_per_hour end
    return a.name < b.name
  end)
  for i = #list, 65, -1 do list[i] = nil end -- a packing takes at most 64
  return cluster:pack_together(pods, list, room, { after = after, existing = true }), list
end

-- The steps after the first 'n_ways' (those on nodes on their way) and
-- the pods they left, or every group packed together (M.together) onto
-- what the nodes on their way left, when that places more pods.
local function or_together(cluster, steps, left, n_ways, before)
  local placed, rest, ways = 0, {}, {}
  for i = n_ways + 1, #steps do
    for _, pod in ipairs(steps[i].pods) do rest[#rest + 1] = pod end
    placed = placed + steps[i].placed
  end
  for _, pod in ipairs(left) do rest[#rest + 1] = pod end
  for i = 1, n_ways do ways[i] = steps[i] end
  local r, list = M.together(cluster, rest, results(ways, before))
  if not r or r.placed <= placed then return steps, left end
  local price = 0
  for _, g in ipairs(list) do price = price + g.price_per_hour * r.new_nodes_by_group[g.name] end
  local s = { group = list[1], set = list, together = true, result = r, new_nodes = r.new_nodes,
              upcoming_used = 0, placed = r.placed, cost = price / r.placed,
              waste = math.max(r.waste.cpu, r.waste.memory), pods = placed_pods(r, rest) }
  ways[#ways + 1] = s
  return ways, r.unplaced
end

-- Places 'pods' on nodes on their way first (on_the_way), then packs the
-- rest onto new nodes of every group (within its room) and picks the cheapest
-- per placed pod: price_per_hour * new_nodes / placed (0 when the pods fit
-- on nodes already on their way). The pods that group leaves unplaced are
-- packed again onto the remaining groups, until every pod is placed or no
-- group takes any. Each packing counts what the steps before it placed
-- (cluster:pack's 'after'), so pods spread over zones take a group per
-- zone. When a pod has relations (pod.constrained), each set of similar
-- groups (M.similar: alike but for their zone) is a candidate too, packed
-- together, each new node in the smallest (M.balanced): a zone spread is
-- met in one step and the zones grow evenly. When pods with relations are
-- left at the end, every group packed together (M.together) replaces the
-- steps that bought nodes if it places more: a spread over groups that
-- differ in its key stops each group early when packed alone. Returns the
-- steps in order, each
--   { group = <group>, new_nodes, upcoming_used, placed, pods = {placed pods},
--     cost (per pod per hour), waste (larger of cpu and memory, 0..1), result = <pack result>,
--     set = <the similar groups> for a balanced step, or the groups packed
--     together (then together = true); its new nodes per group in
--     result.new_nodes_by_group }
-- and the list of pods no group took. 'before' (optional): results that
-- every packing counts first, as cluster:pack's 'after' (the pods
-- cluster:place put on existing nodes: their spread and affinity count
-- there). A pod that no new node takes but an existing node does once
-- the new ones count (a spread with minDomains, a least count that
-- rises) is placed there, not bought for: result.on_nodes.
function M.cheapest(cluster, pods, before)
  local steps, left = M.on_the_way(cluster, pods, before)
  local n_ways = #steps
  local used = {}
  local sets = {}
  for _, pod in ipairs(left) do
    if pod.constrained then sets = M.similar(cluster) break end
  end
  while #left > 0 do
    local best
    -- what nodes on their way could take, on_the_way placed already
    local done = results(steps, before)
    local opts = { upcoming = 0, after = done, existing = true }
    for _, set in ipairs(sets) do
      local free = true
      for _, g in ipairs(set) do free = free and not used[g.name] end
      if free then
        local r = M.balanced(cluster, left, set, done)
        if r.placed > 0 then
          local price = 0
          for _, g in ipairs(set) do price = price + g.price_per_hour * r.new_nodes_by_group[g.name] end
          local c = { group = set[1], set = set, result = r, new_nodes = r.new_nodes, upcoming_used = 0,
                      placed = r.placed, cost = price / r.placed,
                      waste = math.max(r.waste.cpu, r.waste.memory) }
          if not best or better(c, best) then best = c end
        end
      end
    end
    for _, g in ipairs(cluster.group_list) do
      if not used[g.name] then
        local r = M.pack_group(cluster, left, g, M.room(g), opts)
        if r.placed > 0 then
          local c = { group = g, result = r, new_nodes = r.new_nodes, upcoming_used = r.upcoming_used,
                      placed = r.placed, cost = r.price_per_hour * r.new_nodes / r.placed,
                      waste = math.max(r.waste.cpu, r.waste.memory) }
          if not best or better(c, best) then best = c end
        end
      end
    end
    if not best then break end
    best.pods = placed_pods(best.result, left)
    steps[#steps + 1] = best
    for _, g in ipairs(best.set or { best.group }) do used[g.name] = true end
    left = best.result.unplaced
  end
  if #left > 0 then
    for _, pod in ipairs(left) do
      if pod.constrained then
        steps, left = or_together(cluster, steps, left, n_ways, before)
        break
      end
    end
  end
  return steps, left
end

-- Labels that tell similar groups apart without making their nodes
-- different to a pod that does not ask for them. The Cluster Autoscaler's
-- --balance-similar-node-groups ignores the same: its BasicIgnoredLabels
-- (hostname, zone, region, fluentd-ds-ready, kops' instance group), and
-- the labels its AWS, GCE and Azure comparators add (node group names,
-- CSI zone keys, image versions); luascale ignores all of them whatever the
-- cloud, and its own group label. The one list; docs/scheduling.md shows it.
M.ignored_labels = {
  -- every cloud
  ["kubernetes.io/hostname"] = true,
  ["topology.kubernetes.io/zone"] = true, ["topology.kubernetes.io/region"] = true,
  ["failure-domain.beta.kubernetes.io/zone"] = true,
  ["failure-domain.beta.kubernetes.io/region"] = true,
  ["beta.kubernetes.io/fluentd-ds-ready"] = true, ["kops.k8s.io/instancegroup"] = true,
  ["luascale.io/node-group"] = true,
  -- AWS
  ["alpha.eksctl.io/instance-id"] = true, ["alpha.eksctl.io/nodegroup-name"] = true,
  ["eks.amazonaws.com/nodegroup"] = true, ["k8s.amazonaws.com/eniConfig"] = true,
  ["lifecycle"] = true, ["topology.ebs.csi.aws.com/zone"] = true,
  ["topology.k8s.aws/zone-id"] = true,
  -- GCE
  ["topology.gke.io/zone"] = true,
  -- Azure
  ["agentpool"] = true, ["kubernetes.azure.com/agentpool"] = true,
  ["topology.disk.csi.azure.com/zone"] = true, ["aksEngineVersion"] = true,
  ["creationSource"] = true, ["poolName"] = true, ["resourceNameSuffix"] = true,
  ["kubernetes.azure.com/node-image-version"] = true,
  ["kubernetes.azure.com/consolidated-additional-properties"] = true,
}

-- How far two similar groups' new nodes may differ, as a share of the
-- larger (the Cluster Autoscaler's defaults): allocatable cpu and
-- ephemeral storage, and the room DaemonSets leave, 5 %; memory 1.5 % (its
-- capacity rule: a template's memory is the nearest luascale has to a
-- node's capacity); pods and extended resources, which no kubelet
-- reserves, not at all.
M.similar_ratio = { allocatable = 0.05, free = 0.05, memory = 0.015 }

-- 'a' and 'b' (cpu in cores, as the view gives it) within 'ratio' of the
-- larger; cpu compared in millicores.
local function within(a, b, ratio, cpu)
  if cpu then a, b = math.floor(a * 1000 + 0.5), math.floor(b * 1000 + 0.5) end
  local larger, smaller = math.max(a, b), math.min(a, b)
  return larger - smaller <= larger * ratio
end

local PLAIN = { cpu = true, memory = true, ["ephemeral-storage"] = true, pods = true }

local function resources_alike(a, b, da, db)
  for k in pairs(b) do
    if a[k] == nil then return false, "extended resource " .. k .. " on one only" end
  end
  for k, v in pairs(a) do
    local w = b[k]
    if w == nil then return false, "extended resource " .. k .. " on one only" end
    if k == "memory" then
      if not within(v, w, M.similar_ratio.memory) then return false, "memory differs" end
    elseif k == "cpu" or k == "ephemeral-storage" then
      if not within(v, w, M.similar_ratio.allocatable, k == "cpu") then
        return false, k .. " differs"
      end
    elseif v ~= w then
      return false, k .. " differs"
    end
    -- what DaemonSets leave of it
    if k ~= "pods" and PLAIN[k] and not within(v - ((da or {})[k] or 0), w - ((db or {})[k] or 0),
                                            M.similar_ratio.free, k == "cpu") then
      return false, k .. " left by DaemonSets differs"
    end
  end
  return true
end

local function taints_key(g)
  local parts = {}
  for _, x in ipairs(g.template.taints or {}) do
    parts[#parts + 1] = x.key .. "=" .. (x.value or "") .. ":" .. x.effect
  end
  table.sort(parts)
  return table.concat(parts, "\0")
end

local function ignored_of(opts)
  local extra = opts and opts.ignore_labels
  if not extra or #extra == 0 then return M.ignored_labels end
  local ig = {}
  for k in pairs(M.ignored_labels) do ig[k] = true end
  for _, k in ipairs(extra) do ig[k] = true end
  return ig
end

-- The labels and taints that must match, as one string.
local function signature(g, ignored)
  local parts = {}
  for k, v in pairs(g.template.labels or {}) do
    if not ignored[k] then parts[#parts + 1] = k .. "=" .. v end
  end
  table.sort(parts)
  return table.concat(parts, "\0") .. "\1" .. taints_key(g)
end

-- Are the new nodes of groups 'a' and 'b' alike but for their zone? The
-- same labels but those in M.ignored_labels (and opts.ignore_labels, as
-- the Cluster Autoscaler's --balancing-ignore-label), the same taints, the
-- same resources within M.similar_ratio, allocatable and less their
-- DaemonSets' requests. true, or false and what differs.
function M.alike(a, b, opts)
  local ignored = ignored_of(opts)
  if signature(a, ignored) ~= signature(b, ignored) then
    local la, lb = a.template.labels or {}, b.template.labels or {}
    for k, v in pairs(la) do
      if not ignored[k] and lb[k] ~= v then return false, "label " .. k .. " differs" end
    end
    for k in pairs(lb) do
      if not ignored[k] and la[k] == nil then return false, "label " .. k .. " differs" end
    end
    return false, "taints differ"
  end
  return resources_alike(a.template.allocatable, b.template.allocatable,
                         a.daemonset_requests, b.daemonset_requests)
end

-- Groups whose new nodes are alike but for their zone (M.alike): each
-- group joins the first set whose first group it is alike, so every group
-- of a set is within the tolerances of that one. Returns a list of sets
-- (lists of groups, in cluster.group_list order) of two or more. 'opts':
-- { ignore_labels = {"example.com/ready", ...} } ignores more labels.
function M.similar(cluster, opts)
  local ignored = ignored_of(opts)
  local sets, by_sig = {}, {}
  for _, g in ipairs(cluster.group_list) do
    local sig, placed = signature(g, ignored), false
    for _, set in ipairs(by_sig[sig] or {}) do
      local h = set[1]
      if resources_alike(h.template.allocatable, g.template.allocatable,
                         h.daemonset_requests, g.daemonset_requests) then
        set[#set + 1] = g
        placed = true
        break
      end
    end
    if not placed then
      local set = { g }
      by_sig[sig] = by_sig[sig] or {}
      table.insert(by_sig[sig], set)
      sets[#sets + 1] = set
    end
  end
  local out = {}
  for _, set in ipairs(sets) do
    if #set > 1 then out[#out + 1] = set end
  end
  return out
end

-- Packs 'pods' onto new nodes of a set of similar groups (M.similar), each
-- new node in the smallest group that takes the pod, each with its own
-- group's room (cluster:pack_balanced), each group within its room
-- (M.room). 'after' as for cluster:pack. Returns the result.
function M.balanced(cluster, pods, set, after)
  local room = {}
  for _, g in ipairs(set) do room[g.name] = M.room(g) end
  return cluster:pack_balanced(pods, set, room, { after = after, existing = true })
end

-- ", N of them on existing nodes once the new ones count" for a pack
-- result that left pods to existing nodes (result.on_existing), else "".
function M.on_existing(result)
  local n = result.on_existing or 0
  if n == 0 then return "" end
  return string.format(", %d of them on existing nodes once the new ones count", n)
end

-- "3 pending pod(s) fit 1 new workers node(s) at 0.067/h per pod (waste cpu 10%, memory 44%)"
-- For a balanced step, 'group' and 'count' name one of its groups
-- ("..., of 3 balanced over 3 similar groups").
function M.describe(step, group, count)
  local r = step.result
  local balanced = ""
  if step.together then
    balanced = string.format(", of %d in groups packed together", step.new_nodes)
  elseif step.set then
    balanced = string.format(", of %d balanced over %d similar groups", step.new_nodes, #step.set)
  end
  local as = r.instance_type and string.format(" (packed as %s)", r.instance_type) or ""
  return string.format("%d pending pod(s) fit %d new %s node(s)%s%s%s at %.3g/h per pod (waste cpu %.0f%%, memory %.0f%%)",
    step.placed, count or step.new_nodes, (group or step.group).name, as, balanced, M.on_existing(r),
    step.cost, r.waste.cpu * 100, r.waste.memory * 100)
end

-- Could no node group ever run 'pod', even on an empty node of its own
-- (resources, labels, affinity, taints of every template)? Such a pod is
-- waiting for a config change, not for capacity.
function M.fits_no_group(cluster, pod)
  for _, g in ipairs(cluster.group_list) do
    if cluster:fits(pod, g) then return false end
  end
  return true
end

-- Why group 'g' takes no new node for 'pod': cluster:fits' answer against
-- the group's template when an empty node would not take it; else what
-- holds the group back: "backed off until <time> (<reason>)" after a
-- failed launch, or "no room left within its max of N" (the round's
-- other scale-ups may have taken the room it had).
function M.why_not_group(cluster, pod, g)
  local ok, why = cluster:fits(pod, g)
  if not ok then return why end
  if (g.backed_off_until or 0) > cluster.now then
    return string.format("backed off until %s (%s)", os.date("!%Y-%m-%dT%H:%M:%SZ", g.backed_off_until),
      g.backoff_reason or "a launch failed")
  end
  return string.format("no room left within its max of %d", g.max)
end

-- "pending pod ns/p fits no node group: workers: insufficient cpu ...; gpu: ..."
-- with M.why_not_group's reason for each group.
function M.why_nowhere(cluster, pod)
  local reasons = {}
  for _, g in ipairs(cluster.group_list) do
    reasons[#reasons + 1] = g.name .. ": " .. M.why_not_group(cluster, pod, g)
  end
  if #reasons == 0 then reasons[1] = "no node groups configured" end
  return string.format("pending pod %s/%s fits no node group: %s", pod.namespace, pod.name,
    table.concat(reasons, "; "))
end

-- plan:scale_up's options for the new nodes of a cluster:pack result of
-- 'group': the instance types that take their pods, when the group
-- launches several types (an AWS fleet group) and not every one does;
-- nil otherwise (the group launches any of its types).
function M.launch_opts(result, group)
  local types = result and result.instance_types
  if not types or #types == 0 or not group.instance_types
    or #types >= #group.instance_types then
    return nil
  end
  return { instance_types = types }
end

-- Adds to 'plan' the scale-ups packing.cheapest() chose for 'pods' ('before'
-- as for M.cheapest), and logs (at most ten of) the pods no group can take,
-- with why. The actions point at the policy line that called this.
function M.scale_up(cluster, plan, pods, before)
  local steps, unplaced = M.cheapest(cluster, pods, before)
  for _, s in ipairs(steps) do
    for _, g in ipairs(s.set or { s.group }) do
      local count = s.set and s.result.new_nodes_by_group[g.name] or s.new_nodes
      if count > 0 then
        plan:scale_up(g.name, count, M.describe(s, g, count),
          not s.set and M.launch_opts(s.result, g) or nil)
      end
    end
  end
  for i, pod in ipairs(unplaced) do
    if i > 10 then
      plan:log("and %d more pending pod(s) that fit no node group", #unplaced - 10)
      break
    end
    plan:log("%s", M.why_nowhere(cluster, pod))
  end
end

return M
