-- luascale.testing: run a policy in a busted spec through the real engine.
--
--   local t = require "luascale.testing"
--   local engine = t.engine{ policy = "policies/default.lua",
--                            groups = { t.group{ name = "workers", max = 10 } } }
--   local cluster = t.cluster{
--     nodes = { t.node{ name = "w-1", group = "workers" } },
--     pods  = { t.pod{ name = "web-1", cpu = "3", pending = true } },
--   }
--   local result = engine:decide(cluster, t.time("2026-11-30T10:00:00Z"))
--   assert.is_true(t.scales_up(result, "workers", 1))
--
-- Mocks are turned into the Kubernetes JSON the daemon reads and go through
-- the same decoder, sandbox, limits and safety checks. An engine keeps the
-- policy's store between decide() calls, so "for 10 minutes" rules can be
-- tested by calling decide() again with a later time.

local cjson = require "cjson"
local core = require "luascale.core"

local T = {}

local DEFAULT_NOW = 1796032800 -- 2026-11-30T10:00:00Z

local function rfc3339(t)
  return os.date("!%Y-%m-%dT%H:%M:%SZ", t)
end

-- "2026-11-30T10:00:00Z" -> unix seconds (UTC only).
function T.time(text)
  local y, mo, d, h, mi, s = text:match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)Z$")
  assert(y, "T.time: expected YYYY-MM-DDTHH:MM:SSZ, got " .. tostring(text))
  -- days from civil (proleptic Gregorian), UTC
  y, mo, d = tonumber(y), tonumber(mo), tonumber(d)
  if mo <= 2 then y = y - 1 end
  local era = (y >= 0 and y or y - 399) // 400
  local yoe = y - era * 400
  local doy = (153 * (mo + (mo > 2 and -3 or 9)) + 2) // 5 + d - 1
  local doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
  local days = era * 146097 + doe - 719468
  return days * 86400 + tonumber(h) * 3600 + tonumber(mi) * 60 + tonumber(s)
end

local function copy(t)
  local out = {}
  for k, v in pairs(t or {}) do out[k] = v end
  return out
end

-- A node group for the engine's config.
--   t.group{ name = "workers", min = 0, max = 10, cpu = "4", memory = "16Gi",
--            pods = 110, labels = {}, taints = {}, price = 0.2, extra = {["nvidia.com/gpu"] = 1} }
function T.group(o)
  assert(o.name, "t.group: name is required")
  local alloc = { cpu = tostring(o.cpu or "4"), memory = tostring(o.memory or "16Gi"),
                  pods = o.pods or 110 }
  for k, v in pairs(o.extra or {}) do alloc[k] = tostring(v) end
  local template = { allocatable = alloc }
  if o.labels and next(o.labels) then template.labels = o.labels end
  if o.taints and #o.taints > 0 then template.taints = o.taints end
  local g = { name = o.name, min = o.min or 0, max = o.max or 10,
              price_per_hour = o.price or 0, template = template }
  if o.target then g.target = o.target end
  return g
end

-- A Node object. age in seconds (default one day), relative to the time
-- passed to decide().
function T.node(o)
  assert(o.name, "t.node: name is required")
  local labels = copy(o.labels)
  labels["kubernetes.io/hostname"] = labels["kubernetes.io/hostname"] or o.name
  if o.group then labels["luascale.io/node-group"] = o.group end
  local alloc = { cpu = tostring(o.cpu or "4"), memory = tostring(o.memory or "16Gi"),
                  pods = tostring(o.pods or 110) }
  for k, v in pairs(o.extra or {}) do alloc[k] = tostring(v) end
  local spec = { providerID = o.provider_id or ("mock:///" .. o.name) }
  if o.unschedulable then spec.unschedulable = true end
  if o.taints and #o.taints > 0 then spec.taints = o.taints end
  return { kind = "Node", apiVersion = "v1", _age = o.age or 86400,
           metadata = { name = o.name, labels = labels,
                        annotations = (o.annotations and next(o.annotations)) and o.annotations or nil },
           spec = spec,
           status = { allocatable = alloc,
                      conditions = { { type = "Ready", status = (o.ready == false) and "False" or "True" } } } }
end

-- A Pod object.
--   t.pod{ name = "web-1", namespace = "default", node = "w-1" | nil, cpu = "500m",
--          memory = "1Gi", labels = {}, phase = "Running", controller = "ReplicaSet" | false,
--          daemonset = false, pending = false (unschedulable), local_storage = false,
--          safe_to_evict = nil | false, priority = 0, tolerations = {}, node_selector = {},
--          extra = {["nvidia.com/gpu"] = 1}, annotations = {}, host_port = nil | 80,
--          spec = {affinity = ..., topologySpreadConstraints = ..., volumes = ...} }
-- ('spec' fields are merged into the Pod's spec as written)
function T.pod(o)
  assert(o.name, "t.pod: name is required")
  local ns = o.namespace or "default"
  local requests = {}
  if o.cpu then requests.cpu = tostring(o.cpu) end
  if o.memory then requests.memory = tostring(o.memory) end
  for k, v in pairs(o.extra or {}) do requests[k] = tostring(v) end
  local container = { name = "main", image = "example/app" }
  if next(requests) then container.resources = { requests = requests } end
  local md = { name = o.name, namespace = ns }
  if o.labels and next(o.labels) then md.labels = o.labels end
  local ann = copy(o.annotations)
  if o.safe_to_evict == false then ann["cluster-autoscaler.kubernetes.io/safe-to-evict"] = "false" end
  if next(ann) then md.annotations = ann end
  local kind = o.daemonset and "DaemonSet" or o.controller
  if kind == nil then kind = "ReplicaSet" end
  if kind then
    md.ownerReferences = { { apiVersion = "apps/v1", kind = kind, name = o.owner or (o.name .. "-owner"),
                             uid = "uid-" .. o.name, controller = true } }
  end
  local spec = { containers = { container }, priority = o.priority }
  if o.node then spec.nodeName = o.node end
  if o.tolerations and #o.tolerations > 0 then spec.tolerations = o.tolerations end
  if o.node_selector and next(o.node_selector) then spec.nodeSelector = o.node_selector end
  if o.local_storage then spec.volumes = { { name = "scratch", emptyDir = {} } } end
  if o.host_port then
    container.ports = { { containerPort = o.host_port, hostPort = o.host_port } }
  end
  -- what relates it to other pods and zones, as the API writes it:
  -- spec = { affinity = {podAntiAffinity = ...}, topologySpreadConstraints = {...}, ... }
  for k, v in pairs(o.spec or {}) do spec[k] = v end
  local status = { phase = o.phase or (o.node and "Running" or "Pending") }
  if o.pending then
    status.conditions = { { type = "PodScheduled", status = "False", reason = "Unschedulable",
                            message = "0/1 nodes are available" } }
  end
  return { kind = "Pod", apiVersion = "v1", _age = o.age or 3600,
           metadata = md, spec = spec, status = status }
end

-- A PodDisruptionBudget. allowed = status.disruptionsAllowed.
function T.pdb(o)
  assert(o.name, "t.pdb: name is required")
  return { kind = "PodDisruptionBudget", apiVersion = "policy/v1",
           metadata = { name = o.name, namespace = o.namespace or "default" },
           spec = { selector = { matchLabels = o.selector or {} } },
           status = { disruptionsAllowed = o.allowed or 0 } }
end

-- A cluster: { nodes = {...}, pods = {...}, pdbs = {...} }. backoff marks
-- groups whose last launch failed, as the runtime does:
--   backoff = { spot = { ["for"] = "5m", reason = "no capacity" } }
-- (the policy sees group.backed_off_until = now + 5m and backoff_reason).
function T.cluster(o)
  return { nodes = o.nodes or {}, pods = o.pods or {}, pdbs = o.pdbs or {},
           backoff = o.backoff }
end

local function encode_state(cluster, now)
  local items = {}
  for _, list in ipairs({ cluster.nodes, cluster.pods, cluster.pdbs }) do
    for _, obj in ipairs(list) do
      local o = copy(obj)
      o.metadata = copy(obj.metadata)
      o.metadata.creationTimestamp = rfc3339(now - (obj._age or 0))
      o._age = nil
      items[#items + 1] = o
    end
  end
  local doc = { apiVersion = "v1", kind = "List", metadata = {} }
  if #items > 0 then doc.items = items end
  return cjson.encode(doc)
end

local function readable(path)
  local f = io.open(path, "r")
  if f then f:close() end
  return f ~= nil
end

-- A path as given when it exists from the working directory, else relative
-- to the folder of the spec file that asked ('level' up the stack), so specs
-- run from anywhere.
function T.resolve(path, level)
  if path:sub(1, 1) == "/" or readable(path) then return path end
  local info = debug.getinfo((level or 1) + 1, "S")
  local src = info and info.source or ""
  if src:sub(1, 1) == "@" then
    local dir = src:sub(2):match("^(.*)/[^/]*$")
    if dir and readable(dir .. "/" .. path) then return dir .. "/" .. path end
  end
  return path
end

local Engine = {}
Engine.__index = Engine

-- An engine: the policy loaded once, its store kept across decide() calls.
--   t.engine{ policy = PATH, groups = { t.group{...} }, params = {...},
--             safety = { max_nodes_total = 0, max_scale_down_per_round = 1,
--                        protected_pod_selector = "" },
--             limits = { instructions = N, memory = "64Mi", timeout = "2s" } }
-- (the config's policy.instructions, policy.memory and policy.timeout: the
-- budget, the heap cap and the CPU-time deadline of each call)
-- Returns the engine, or raises with the config or policy error.
function T.engine(o)
  assert(o.policy, "t.engine: policy is required")
  o.policy = T.resolve(o.policy, 2)
  local config = { cluster = { kubeconfig = "/dev/null", context = "spec" },
                   policy = { path = o.policy } }
  if o.groups and #o.groups > 0 then config.node_groups = o.groups end
  if o.params and next(o.params) then config.policy.params = o.params end
  if o.limits then
    config.policy.instructions = o.limits.instructions
    config.policy.memory = o.limits.memory
    config.policy.timeout = o.limits.timeout
  end
  if o.safety and next(o.safety) then config.safety = o.safety end
  if o.disruption then config.disruption = o.disruption end
  local e, err = core.engine{ config = cjson.encode(config) }
  if not e then error(err, 2) end
  local now = o.now
  if type(now) == "string" then now = T.time(now) end
  return setmetatable({ core = e, now = now or DEFAULT_NOW }, Engine)
end

local function seconds(d)
  if type(d) == "number" then return d end
  local total, rest = 0, d
  for n, unit in d:gmatch("(%d+)([smhd])") do
    total = total + tonumber(n) * ({ s = 1, m = 60, h = 3600, d = 86400 })[unit]
    rest = rest:gsub(n .. unit, "", 1)
  end
  assert(rest == "" and d ~= "", "expected a duration like 90s, 10m, 1h30m, got " .. tostring(d))
  return total
end

-- Moves the engine's clock forward ("10m", "1h30m" or seconds).
function Engine:advance(d)
  self.now = self.now + seconds(d)
  return self
end

-- Runs one reconcile on 'cluster' at the engine's clock (or at 'now', unix
-- seconds or "YYYY-MM-DDTHH:MM:SSZ", which also sets the clock).
-- Returns { actions = {...}, rejected = {{action=, why=}}, nodes = {...},
--           node = {name -> node report}, log = {...}, error = string|nil }.
function Engine:decide(cluster, now)
  if type(now) == "string" then now = T.time(now) end
  if now then self.now = now end
  local backoff
  for name, b in pairs(cluster.backoff or {}) do
    backoff = backoff or {}
    backoff[name] = { ["until"] = self.now + seconds(b["for"] or "5m"),
                      reason = b.reason or "launch failed" }
  end
  local out, err = self.core:decide(encode_state(cluster, self.now), self.now, backoff)
  if not out then error(err, 2) end
  self.last_cluster = cluster
  local r = cjson.decode(out)
  r.node = {}
  for _, n in ipairs(r.nodes) do r.node[n.name] = n end
  r.error = r.error ~= cjson.null and r.error or nil
  return r
end

-- Hot reload, as the daemon does on SIGHUP: the new policy is loaded in a
-- fresh sandbox, tried once on 'cluster' (default: the last one decided),
-- and swapped in only if that works; the store is carried over.
-- Returns true (and the store entries that could not be carried, if any),
-- or false and why — the old policy then stays in place.
function Engine:reload(policy, cluster)
  cluster = cluster or self.last_cluster
  local state = cluster and encode_state(cluster, self.now) or nil
  local ok, info = self.core:reload(T.resolve(policy, 2), state, self.now)
  if not ok then return false, info end
  return true, info ~= "" and info or nil
end

-- ---- assertions helpers: return true/false so specs read naturally ----

-- Actions of 'result' matching type (and node or group).
function T.find(result, type_, target)
  local out = {}
  for _, a in ipairs(result.actions) do
    if a.type == type_ and (target == nil or a.node == target or a.group == target) then
      out[#out + 1] = a
    end
  end
  return out
end

-- Does the plan scale 'group' up by exactly 'count' (any count when nil)?
function T.scales_up(result, group, count)
  for _, a in ipairs(T.find(result, "scale_up", group)) do
    if count == nil or a.count == count then return true end
  end
  return false
end

function T.cordons(result, node) return #T.find(result, "cordon", node) > 0 end
function T.uncordons(result, node) return #T.find(result, "uncordon", node) > 0 end
function T.drains(result, node) return #T.find(result, "drain", node) > 0 end
function T.deletes(result, node) return #T.find(result, "delete", node) > 0 end

-- Does the plan replace 'node' (with a node of 'group', when given)?
function T.replaces(result, node, group)
  for _, a in ipairs(T.find(result, "replace", node)) do
    if a.node == node and (group == nil or a.group == group) then return true end
  end
  return false
end

-- Was an action of this type (and node/group) rejected? Returns the why.
function T.rejected(result, type_, target)
  for _, r in ipairs(result.rejected) do
    local a = r.action
    if a.type == type_ and (target == nil or a.node == target or a.group == target) then
      return r.why
    end
  end
  return nil
end

-- Neither drained, deleted nor replaced.
function T.never_deletes(result, node)
  return not T.deletes(result, node) and not T.drains(result, node)
    and #T.find(result, "replace", node) == 0
end

-- Does the plan set label key (= value, when given) on node?
function T.labels(result, node, key, value)
  for _, a in ipairs(T.find(result, "label", node)) do
    if a.key == key and (value == nil or a.value == value) then return true end
  end
  return false
end

-- Does the plan add (not remove) the taint key (:effect, when given) on node?
function T.taints(result, node, key, effect)
  for _, a in ipairs(T.find(result, "taint", node)) do
    if a.key == key and not a.remove and (effect == nil or a.effect == effect) then return true end
  end
  return false
end

-- Does the plan remove the taint key (:effect, when given) from node?
function T.untaints(result, node, key, effect)
  for _, a in ipairs(T.find(result, "taint", node)) do
    if a.key == key and a.remove and (effect == nil or a.effect == effect) then return true end
  end
  return false
end

-- Does the plan set annotation key (= value, when given) on node?
function T.annotates(result, node, key, value)
  for _, a in ipairs(T.find(result, "annotate", node)) do
    if a.key == key and not a.remove and (value == nil or a.value == value) then return true end
  end
  return false
end

-- Does the plan remove annotation key from node?
function T.removes_annotation(result, node, key)
  for _, a in ipairs(T.find(result, "annotate", node)) do
    if a.key == key and a.remove then return true end
  end
  return false
end

-- A one-line summary of a result's actions, for failure messages.
function T.describe(result)
  local parts = {}
  for _, a in ipairs(result.actions) do
    local count = a.count and (math.tointeger(a.count) or a.count)
    if a.type == "replace" then
      parts[#parts + 1] = "replace " .. tostring(a.node) .. " with a node of " .. tostring(a.group)
    else
      parts[#parts + 1] = a.type .. " " .. (a.group or a.node or "?") .. (count and (" +" .. count) or "")
    end
  end
  local s = #parts > 0 and table.concat(parts, ", ") or "no actions"
  if result.error then s = s .. " (policy error: " .. result.error .. ")" end
  return s
end

-- A simulated day, in virtual time, through the same engine, safety
-- checks and actuator as the daemon (see docs/simulation.md):
--   local run = t.simulate{ scenario = "../../examples/scenarios/classroom-day.yaml",
--                           policy = "../../policies/jupyterhub.lua", seed = 7 }
--   assert.keeps_invariants(run)
--   assert.are.equal(0, run.lost)
-- Paths are relative to the spec's folder (or absolute). The run has
-- node_hours, cost, wait_p50/p95/max (seconds), peak_nodes, launches,
-- removed, evictions, killed, lost, protected, policy_failures, rejected,
-- replaces, replaced, replace_failed (plan:replace: started, done, failed),
-- rounds, violations {total, over_max, over_total, under_min,
-- over_removals, over_budget, protected_hit, extra_instances, stuck_pending, first}
-- and series {t, pending, util_cpu, util_mem, cost, nodes = {GROUP = {...}},
-- booting = {GROUP = {...}}}. Raises when the scenario or policy cannot run.
function T.simulate(o)
  assert(type(o) == "table" and o.scenario and o.policy,
    "t.simulate: scenario and policy are required")
  local run, err = core.simulate{ scenario = T.resolve(o.scenario, 2),
                                  policy = T.resolve(o.policy, 2), seed = o.seed }
  if not run then error(err, 2) end
  return run
end

-- luassert assertions, when running under busted:
--   assert.scales_up(result, "workers", 2)   assert.is_not.scales_up(result, "gpu")
--   assert.cordons(result, "node-3")          assert.uncordons / drains / deletes
--   assert.replaces(result, "node-2", "small")
--   assert.never_deletes(result, "node-1")   assert.no_actions(result)
--   assert.rejected(result, "delete", "node-1")   assert.no_error(result)
local ok_luassert, luassert = pcall(require, "luassert")
local ok_say, say = pcall(require, "say")
if ok_luassert and ok_say then
  local function register(name, test, what)
    say:set("assertion.luascale_" .. name .. ".positive",
      "Expected the plan to " .. what .. ".\nPlan: %s")
    say:set("assertion.luascale_" .. name .. ".negative",
      "Expected the plan not to " .. what .. ".\nPlan: %s")
    luassert:register("assertion", name, function(_, args)
      local ok = test(table.unpack(args, 1, args.n))
      args[1] = T.describe(args[1])
      args.n = 1
      return ok
    end, "assertion.luascale_" .. name .. ".positive", "assertion.luascale_" .. name .. ".negative")
  end
  register("scales_up", T.scales_up, "scale a group up (by the given count)")
  register("cordons", T.cordons, "cordon the node")
  register("uncordons", T.uncordons, "uncordon the node")
  register("drains", T.drains, "drain the node")
  register("deletes", T.deletes, "delete the node")
  register("replaces", T.replaces, "replace the node (with a node of the given group)")
  register("never_deletes", T.never_deletes, "leave the node in place (no drain, delete or replace)")
  register("labels", T.labels, "set the label on the node")
  register("taints", T.taints, "taint the node")
  register("untaints", T.untaints, "remove the taint from the node")
  register("annotates", T.annotates, "annotate the node")
  register("no_actions", function(r) return #r.actions == 0 end, "have no actions")
  register("no_error", function(r) return r.error == nil end, "run without a policy error")
  register("rejected", function(...) return T.rejected(...) ~= nil end,
    "have the action rejected by the safety checks")

  -- assert.keeps_invariants(run): a t.simulate run broke no safety invariant
  say:set("assertion.luascale_keeps_invariants.positive",
    "Expected the simulated run to keep every invariant.\nBroken: %s")
  say:set("assertion.luascale_keeps_invariants.negative",
    "Expected the simulated run to break an invariant.\n%s")
  luassert:register("assertion", "keeps_invariants", function(_, args)
    local run = args[1]
    local ok = type(run) == "table" and run.violations and run.violations.total == 0
    args[1] = type(run) == "table" and run.violations
      and string.format("%d violation(s), the first %s", run.violations.total,
        tostring(run.violations.first))
      or "not a t.simulate run"
    args.n = 1
    return ok
  end, "assertion.luascale_keeps_invariants.positive",
    "assertion.luascale_keeps_invariants.negative")
end

return T
