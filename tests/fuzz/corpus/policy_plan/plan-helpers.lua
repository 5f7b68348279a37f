local cluster, params, store, ls = ...
local plan = ls.plan()
local pending = ls.unschedulable(cluster)
local r = cluster:pack(pending, "workers", 2)
if r.new_nodes > 0 then plan:scale_up("workers", r.new_nodes, "pending") end
for _, n in ipairs(cluster.nodes) do
  local ok, why = cluster:drainable(n, { exclude = {} })
  plan:explain(n, ok, why or "ok")
  plan:label(n, "example.com/seen", "yes", "test")
  plan:taint(n, "k", "v", "NoSchedule", "t")
end
plan:log("%d pods %s", #cluster.pending, ls.format_bytes(ls.bytes("1.5Gi")))
return plan
