-- luascale: the library every policy requires.
--
--   local ls = require "luascale"
--   local plan = ls.plan()
--   plan:scale_up("workers", 2, "3 pods pending")
--   plan:cordon(node, "underused for 12m")
--   return plan
--
-- It builds plans (checked again in C before anything happens) and offers
-- the small helpers every policy would otherwise write. Units: cpu in
-- cores, memory and storage in bytes, time in seconds.

-- The globals this library uses, captured now: a policy that replaces a
-- global later does not change how plans are built.
local error, ipairs, math, next, pairs, select, setmetatable, string, table, tostring, type =
  error, ipairs, math, next, pairs, select, setmetatable, string, table, tostring, type

local native = require "luascale.native"

local M = {}

-- ---- units --------------------------------------------------------------

M.cpu = native.cpu             -- "500m" -> 0.5 (cores); numbers pass through
M.bytes = native.bytes         -- "1.5Gi" -> 1610612736; integers pass through
M.duration = native.duration   -- "1m30s" -> 90 (seconds); numbers pass through
M.format_cpu = native.format_cpu     -- 0.5 -> "500m"
M.format_bytes = native.format_bytes -- 1610612736 -> "1536Mi"

-- The wall-clock time at unix time t in a named zone of the system's
-- zoneinfo, daylight saving included: ls.local_time(cluster.now,
-- "Europe/Berlin") -> { year, month, day, hour, min, sec, wday = 1 (Monday)
-- .. 7, yday, day_name, offset = seconds east of UTC, abbr = "CEST",
-- isdst, zone }. An unknown or malformed name raises an error.
M.local_time = native.local_time

-- "12m", "1h5m", "40s": a duration in seconds, for reasons and logs.
function M.format_duration(seconds)
  seconds = math.floor(seconds + 0.5)
  if seconds < 60 then return string.format("%ds", seconds) end
  local h, m, s = seconds // 3600, (seconds % 3600) // 60, seconds % 60
  local out = ""
  if h > 0 then out = out .. h .. "h" end
  if m > 0 then out = out .. m .. "m" end
  if s > 0 and h == 0 then out = out .. s .. "s" end
  return out
end

-- ---- nodes and pods -----------------------------------------------------

-- max(cpu, memory) request utilization of a node, 0..1 (may exceed 1).
-- In C: a node of the cluster view is read without building a table.
M.utilization = native.utilization

-- Request utilization of a set of nodes taken together: the sums of their
-- requests over the sums of their allocatable, {cpu = 0..1, memory = 0..1}.
function M.pool_utilization(nodes)
  local req_cpu, req_mem, cap_cpu, cap_mem = 0, 0, 0, 0
  for _, n in ipairs(nodes) do
    local r, a = n.requested, n.allocatable
    req_cpu, req_mem = req_cpu + r.cpu, req_mem + r.memory
    cap_cpu, cap_mem = cap_cpu + a.cpu, cap_mem + a.memory
  end
  return { cpu = cap_cpu > 0 and req_cpu / cap_cpu or 0,
           memory = cap_mem > 0 and req_mem / cap_mem or 0 }
end

-- Nodes of a group (by name), in cluster order.
function M.nodes_of(cluster, group)
  local out = {}
  for _, n in ipairs(cluster.nodes) do
    if n.group == group then out[#out + 1] = n end
  end
  return out
end

-- Does the label selector (a table of key = value) match these labels?
function M.matches(selector, labels)
  for k, v in pairs(selector) do
    if labels[k] ~= v then return false end
  end
  return true
end

-- Pending pods that need new capacity: marked Unschedulable by the
-- scheduler, and not placeable on the Ready nodes as they are now (a node
-- may have registered, or pods finished, since the scheduler last tried).
-- Second: the cluster:place result, for packing.cheapest's 'before' (the
-- pods placed count on their nodes: spread, affinity, room).
function M.needing_capacity(cluster)
  local r = cluster:place(M.unschedulable(cluster))
  return r.unplaced, r
end

-- Pending pods the scheduler has marked Unschedulable.
function M.unschedulable(cluster)
  local out = {}
  for _, p in ipairs(cluster.pending) do
    if p.unschedulable then out[#out + 1] = p end
  end
  return out
end

-- ---- plans --------------------------------------------------------------

local Plan = {}
Plan.__index = Plan

-- Plans of a reconcile whose notes nobody reads (the daemon's): explain
-- records nothing. The same methods otherwise.
local QuietPlan = {}
QuietPlan.__index = QuietPlan

-- A new, empty plan.
function M.plan()
  return setmetatable({ actions = {}, notes = {}, messages = {} },
    native.explaining() and Plan or QuietPlan)
end

-- Nodes and groups of the cluster view are read-only userdata; a policy's
-- own tables with a name work as well.
local function is_object(v)
  local t = type(v)
  return t == "table" or t == "userdata"
end

local function node_name(node, fn)
  if type(node) == "string" and node ~= "" then return node end
  if is_object(node) and type(node.name) == "string" then return node.name end
  error(string.format("plan:%s: expected a node or a node name, got %s", fn, type(node)), 3)
end

local function check_reason(reason, fn)
  if type(reason) ~= "string" or reason == "" then
    error(string.format("plan:%s: every action needs a reason (a non-empty string)", fn), 3)
  end
end

local function check_string(v, what, fn)
  if type(v) ~= "string" or v == "" then
    error(string.format("plan:%s: %s must be a non-empty string, got %s", fn, what, type(v)), 3)
  end
end

local function add(plan, action)
  action.where = native.where()
  plan.actions[#plan.actions + 1] = action
  return plan
end

-- A list of instance types (names, or g.instance_types entries), copied;
-- nil when 'types' is nil.
local function instance_types_of(types, fn)
  if types == nil then return nil end
  if type(types) ~= "table" or #types == 0 then
    error("plan:" .. fn .. ": instance_types must be a non-empty list of names", 3)
  end
  local copy = {}
  for i, t in ipairs(types) do
    if type(t) == "table" then t = t.name end
    if type(t) ~= "string" or t == "" then
      error(string.format("plan:%s: instance_types[%d] must be a non-empty string, got %s",
        fn, i, type(t)), 3)
    end
    copy[i] = t
  end
  return copy
end

-- Add 'count' nodes to 'group' (a group table or its name). opts (may be
-- nil): { instance_types = { "m5.large", ... } }, the instance types the
-- new nodes may be, each one of the group's (g.instance_types; a pack
-- result's instance_types lists those that take its pods). Without it the
-- group launches any of its types.
function Plan:scale_up(group, count, reason, opts)
  if is_object(group) then group = group.name end
  check_string(group, "group", "scale_up")
  if math.type(count) ~= "integer" or count < 1 then
    error("plan:scale_up: count must be a positive integer, got " .. tostring(count), 2)
  end
  check_reason(reason, "scale_up")
  local a = { type = "scale_up", group = group, count = count, reason = reason }
  if opts ~= nil then
    if type(opts) ~= "table" then
      error("plan:scale_up: opts must be a table or nil, got " .. type(opts), 2)
    end
    for k in pairs(opts) do
      if k ~= "instance_types" then
        error("plan:scale_up: unknown option " .. tostring(k) .. " (expected instance_types)", 2)
      end
    end
    a.instance_types = instance_types_of(opts.instance_types, "scale_up")
  end
  return add(self, a)
end

-- The disruption reasons the budgets count (docs/configuration.md
-- "disruption"); nil: the safety check tells empty from underutilized.
local disruptions = { empty = true, underutilized = true, drifted = true, expired = true,
                      interrupted = true }

-- opts of a disrupting action: nil, or { disruption = "drifted" }.
local function disruption_of(opts, fn)
  if opts == nil then return nil end
  if type(opts) ~= "table" then
    error("plan:" .. fn .. ": opts must be a table or nil, got " .. type(opts), 3)
  end
  for k in pairs(opts) do
    if k ~= "disruption" then
      error("plan:" .. fn .. ": unknown option " .. tostring(k) .. " (expected disruption)", 3)
    end
  end
  local d = opts.disruption
  if d ~= nil and not disruptions[d] then
    error("plan:" .. fn .. ": disruption must be empty, underutilized, drifted, expired or interrupted, got "
      .. tostring(d), 3)
  end
  return d
end

local function node_action(type_, disrupts)
  return function(self, node, reason, opts)
    local name = node_name(node, type_)
    check_reason(reason, type_)
    if not disrupts and opts ~= nil then
      error("plan:" .. type_ .. ": takes no options", 2)
    end
    return add(self, { type = type_, node = name, reason = reason,
                       disruption = disruption_of(opts, type_) })
  end
end

-- Replace 'node' with a new node of 'group' (a group, its name, or nil:
-- the node's own group). The new node is launched first; only once it is
-- Ready is the old one cordoned, drained and deleted. When the new node
-- fails to launch or to be Ready in max_provision_time, the old node is
-- left as it was. opts (may be nil): { disruption = "drifted",
-- instance_types = { ... } } (the types the new node may be).
function Plan:replace(node, group, reason, opts)
  local name = node_name(node, "replace")
  if group == nil and is_object(node) then group = node.group end
  if group == nil then
    error("plan:replace: group must be given when the node is a name or has no group", 2)
  end
  if is_object(group) then group = group.name end
  check_string(group, "group", "replace")
  check_reason(reason, "replace")
  local a = { type = "replace", node = name, group = group, reason = reason }
  if opts ~= nil then
    if type(opts) ~= "table" then
      error("plan:replace: opts must be a table or nil, got " .. type(opts), 2)
    end
    for k in pairs(opts) do
      if k ~= "instance_types" and k ~= "disruption" then
        error("plan:replace: unknown option " .. tostring(k) ..
          " (expected disruption or instance_types)", 2)
      end
    end
    a.instance_types = instance_types_of(opts.instance_types, "replace")
    a.disruption = disruption_of({ disruption = opts.disruption }, "replace")
  end
  return add(self, a)
end

-- plan:cordon/drain/delete(node, reason [, {disruption = "drifted"}]):
-- the disruption reason the budgets count it under.
Plan.cordon = node_action("cordon", true)
Plan.uncordon = node_action("uncordon")
Plan.drain = node_action("drain", true)
Plan.delete = node_action("delete", true)

-- Set a label (value a string) or remove it (value nil).
function Plan:label(node, key, value, reason)
  local name = node_name(node, "label")
  check_string(key, "key", "label")
  check_reason(reason, "label")
  if value == nil then
    return add(self, { type = "label", node = name, key = key, remove = true, reason = reason })
  end
  if type(value) ~= "string" then error("plan:label: value must be a string or nil", 2) end
  return add(self, { type = "label", node = name, key = key, value = value, reason = reason })
end

-- Set an annotation (value a string) or remove it (value nil).
function Plan:annotate(node, key, value, reason)
  local name = node_name(node, "annotate")
  check_string(key, "key", "annotate")
  check_reason(reason, "annotate")
  if value == nil then
    return add(self, { type = "annotate", node = name, key = key, remove = true, reason = reason })
  end
  if type(value) ~= "string" then error("plan:annotate: value must be a string or nil", 2) end
  return add(self, { type = "annotate", node = name, key = key, value = value, reason = reason })
end

local effects = { NoSchedule = true, PreferNoSchedule = true, NoExecute = true }

-- Add a taint key=value:effect.
function Plan:taint(node, key, value, effect, reason, opts)
  local name = node_name(node, "taint")
  check_string(key, "key", "taint")
  if not effects[effect] then
    error("plan:taint: effect must be NoSchedule, PreferNoSchedule or NoExecute, got " .. tostring(effect), 2)
  end
  check_reason(reason, "taint")
  return add(self, { type = "taint", node = name, key = key, value = value or "",
                     effect = effect, reason = reason, disruption = disruption_of(opts, "taint") })
end

-- Remove the taint key:effect.
function Plan:untaint(node, key, effect, reason)
  local name = node_name(node, "untaint")
  check_string(key, "key", "untaint")
  if not effects[effect] then
    error("plan:untaint: effect must be NoSchedule, PreferNoSchedule or NoExecute, got " .. tostring(effect), 2)
  end
  check_reason(reason, "untaint")
  return add(self, { type = "taint", node = name, key = key, effect = effect, remove = true,
                     reason = reason })
end

-- Record a message with the plan (shown by `decide`, logged by the daemon):
-- things the policy noticed but did not act on.
function Plan:log(fmt, ...)
  if type(fmt) ~= "string" then error("plan:log: expected a string", 2) end
  local text = select("#", ...) > 0 and string.format(fmt, ...) or fmt
  self.messages[#self.messages + 1] = text
  return self
end

-- Say whether a node is a scale-down candidate and why (shown by `decide`).
-- With more arguments, 'why' is a string.format format for them, formatted
-- only when the notes are read: a policy that explains every node pays
-- for the text only in `luascale decide` and in specs, not in the daemon.
function Plan:explain(node, candidate, why, ...)
  local name = node_name(node, "explain")
  if type(candidate) ~= "boolean" then error("plan:explain: candidate must be a boolean", 2) end
  if select("#", ...) > 0 then why = string.format(why, ...) end
  self.notes[name] = { candidate = candidate, why = tostring(why or "") }
  return self
end

-- Are this plan's notes read? A policy may skip work that only builds a
-- note's text when not.
function Plan:explaining() return true end

for k, f in pairs(Plan) do QuietPlan[k] = f end
QuietPlan.__index = QuietPlan
function QuietPlan:explain(node, candidate)
  -- the same checks as when the notes are read, so a policy errs alike
  node_name(node, "explain")
  if type(candidate) ~= "boolean" then error("plan:explain: candidate must be a boolean", 2) end
  return self
end
function QuietPlan:explaining() return false end

return M
