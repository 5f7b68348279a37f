-- luascale.drain: may this node be emptied, after the nodes already chosen
-- for removal this round?
--
--   local drain = require "luascale.drain"
--   local removed = {}
--   for _, node in ipairs(candidates) do
--     local ok, why = drain.check(cluster, node, removed)
--     if ok then removed[#removed + 1] = node; plan:drain(node, ...) end
--   end
--
-- cluster:drainable(node, {exclude = removed}) looks at one node: what
-- blocks it (protected pods, PDBs, safe-to-evict, local storage, bare pods)
-- and whether its pods fit on the nodes left. It does not know that the
-- pods of the nodes removed before it need room too: two nodes whose pods
-- would each fit on the same last free core both pass. drain.check adds
-- that: the pods of every removed node and of this one must fit together
-- on the nodes that stay (first-fit decreasing, each node's free room
-- shared across all of them). Read-only; the policy builds the plan.

local M = {}

local EPS = 1e-9

local function evictable(pod)
  return not (pod.daemonset or pod.mirror or pod.static or pod.terminating or pod.finished)
end

-- Does 'req' fit in 'room' (a resource table, updated by take())?
local function room_fits(room, req)
  for k, v in pairs(req) do
    if v > 0 and v > (room[k] or 0) + EPS then return false end
  end
  return true
end

local function take(room, req)
  for k, v in pairs(req) do room[k] = (room[k] or 0) - v end
end

-- The pods of 'nodes' that a drain would evict, largest first.
local function pods_to_move(nodes)
  local out = {}
  for _, n in ipairs(nodes) do
    for _, p in ipairs(n.pods) do
      if evictable(p) then out[#out + 1] = p end
    end
  end
  table.sort(out, function(a, b)
    local ra, rb = a.requests, b.requests
    if ra.cpu ~= rb.cpu then return ra.cpu > rb.cpu end
    if ra.memory ~= rb.memory then return ra.memory > rb.memory end
    if a.namespace ~= b.namespace then return a.namespace < b.namespace end
    return a.name < b.name
  end)
  return out
end

-- Can the evictable pods of 'nodes' all move, together, onto the Ready,
-- schedulable nodes not in 'nodes'? Returns true, or false and why.
function M.fit_together(cluster, nodes)
  local leaving = {}
  for _, n in ipairs(nodes) do leaving[n.name] = true end
  local dests, rooms = {}, {}
  for _, n in ipairs(cluster.nodes) do
    if not leaving[n.name] and n.ready and not n.unschedulable then dests[#dests + 1] = n end
  end
  for _, pod in ipairs(pods_to_move(nodes)) do
    local placed = false
    for _, d in ipairs(dests) do
      local room = rooms[d.name]
      if not room then
        room = {}
        for k, v in pairs(d.free) do room[k] = v end
        rooms[d.name] = room
      end
      if room_fits(room, pod.requests) and cluster:fits(pod, d) then
        take(room, pod.requests)
        placed = true
        break
      end
    end
    if not placed then
      return false, string.format("no room for pod %s/%s once %d other node(s) go this round too",
        pod.namespace, pod.name, #nodes - 1)
    end
  end
  return true
end

-- cluster:drainable(node, {exclude = removed}), then, when other nodes are
-- already being removed this round, the joint check above.
function M.check(cluster, node, removed)
  local ok, why = cluster:drainable(node, { exclude = removed })
  if not ok or #removed == 0 then return ok, why end
  local all = { node }
  for _, n in ipairs(removed) do all[#all + 1] = n end
  return M.fit_together(cluster, all)
end

return M
