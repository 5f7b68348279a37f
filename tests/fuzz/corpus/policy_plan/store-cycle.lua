local cluster, params, store = ...
store.t = store.t or {}
store.t.self = store.t
local t = store.t for i = 1, 40 do t = { left = t, right = t } end
store.graph = t
return nil
