local cluster, params, store, ls = ...
if store.node then
  local ok, why = pcall(function() return store.node.name, store.pod.requests.cpu end)
  local ok2 = pcall(cluster.fits, cluster, store.pod, store.node)
  local ok3 = pcall(cluster.drainable, cluster, store.node, { exclude = { store.node } })
end
store.node = cluster.nodes[1]
store.pod = cluster.pending[1]
store.labels = cluster.nodes[1].labels
store.fn = function() end
store.co = coroutine.create(function() end)
store.deep = {}
local t = store.deep
for i = 1, 200 do t.next = { i = i, s = string.rep("s", i) } t = t.next end
store.cycle = {}
store.cycle.self = store.cycle
store[1.5] = true
store[true] = "b"
return nil
