local co = coroutine.wrap(function() while true do coroutine.yield() end end)
local x <close> = setmetatable({}, {__close = function() while true do co() end end})
while true do end
