local function nest(d) return coroutine.wrap(function() local x <close> = setmetatable({}, {__close = function() while true do end end}) if d > 0 then pcall(nest(d - 1)) end while true do pcall(function() while true do end end) end end) end
pcall(nest(4))
