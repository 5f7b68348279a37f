-- schedule: proactive scaling for a weekly timetable (classes, office
-- hours).
--
-- During each of the weekly `windows`, `group` is kept at `min_nodes`
-- nodes or more, so the nodes are up before the students log in: set the
-- window's `from` a little ahead of the class. Outside the windows the
-- policy only adds what pending pods need: pods the scheduler marked
-- unschedulable are packed onto the group's template and the group grows by
-- the new nodes that takes. Inside a window it does both and takes the
-- larger count. It never removes nodes: this is an example to extend (see
-- policies/jupyterhub.lua for scale-down without evicting anyone).
--
-- Time: the windows are wall-clock times in a zone `utc_offset` from UTC.
-- The policy computes local time from cluster.now and that offset
-- (luascale.clock), never from the time zone of the machine luascale runs
-- on. Daylight saving time is the operator's concern: change `utc_offset`
-- when the clocks change (Paris: "+01:00" in winter, "+02:00" in summer).

local ls = require "luascale"
local clock = require "luascale.clock"

local P = {}

P.params = {
  group = "",          -- node group to keep warm; "" is the first configured group
  min_nodes = 10,      -- nodes to keep (registered or on their way) during a window
  -- local wall-clock windows: days "Mon-Fri", "Sat,Sun", "daily";
  -- from included, to excluded ("24:00" is midnight); to < from runs overnight
  windows = { { days = "Mon-Fri", from = "08:45", to = "17:00" } },
  utc_offset = "+00:00", -- the windows' zone: "+01:00", "-05:00", ...
}

function P.reconcile(cluster, params, store)
  local plan = ls.plan()
  local g = cluster.group_list[1]
  if params.group ~= "" then g = cluster.groups[params.group] end
  if not g then
    plan:log("no node group %q to scale", params.group)
    return plan
  end

  local now_text = clock.format(cluster.now, params.utc_offset)
  local window
  for _, w in ipairs(params.windows) do
    local parsed = clock.parse_window(w)
    if not window and clock.in_window(cluster.now, parsed, params.utc_offset) then
      window = parsed
    end
  end

  local size = math.max(g.target, g.current) -- registered or on their way
  local room = math.max(g.max - size, 0)
  local count, reasons = 0, {}

  if window then
    if params.min_nodes > g.max then
      plan:log("min_nodes %d is above group %s's max of %d: keeping %d", params.min_nodes,
        g.name, g.max, g.max)
    end
    local short = math.min(params.min_nodes, g.max) - size
    if short > 0 then
      count = short
      reasons[#reasons + 1] = string.format("%s is in window %s: keep %d nodes, %s has %d",
        now_text, window.text, params.min_nodes, g.name, size)
    end
  end

  local pending = ls.needing_capacity(cluster)
  if #pending > 0 then
    local r = cluster:pack(pending, g, room)
    if r.new_nodes > 0 then
      count = math.max(count, r.new_nodes)
      reasons[#reasons + 1] = string.format("%d pending pod(s) need %d new node(s)", #pending,
        r.new_nodes)
    end
    if #r.unplaced > 0 then
      plan:log("%d pending pod(s) fit no %s node within its max of %d", #r.unplaced, g.name, g.max)
    end
  end

  if count > 0 then
    plan:scale_up(g.name, count, table.concat(reasons, "; "))
  end
  for _, node in ipairs(cluster.nodes) do
    if node.group then
      plan:explain(node, false, "this policy never removes nodes (" ..
        (window and ("in window " .. window.text) or "outside the windows") .. ")")
    end
  end
  return plan
end

return P
