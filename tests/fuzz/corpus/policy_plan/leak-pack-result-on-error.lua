local cluster = ...
local calls = 0
local pods = setmetatable({}, {
  __len = function() return 1 end,
  __index = function(_, i)
    calls = calls + 1
    if calls > 1 then error("second look") end
    return cluster.pending[1]
  end })
local r = cluster:pack(pods, "workers", 0)
