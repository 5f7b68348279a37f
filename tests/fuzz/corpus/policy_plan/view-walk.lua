local cluster = ...
local n = cluster:node("w-1")
local t = {}
for k, v in pairs(n) do t[#t + 1] = tostring(k) .. tostring(v) end
for _, p in ipairs(n.pods) do t[#t + 1] = p.name .. p.requests.cpu end
for _, b in ipairs(cluster:pdbs()) do t[#t + 1] = b.name end
local ok, why = cluster:fits(cluster.pending[1], cluster.groups.workers)
return nil
