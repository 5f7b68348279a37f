CO = CO or coroutine.create(function() local x <close> = setmetatable({}, {__close = function() while true do end end}) while true do end end)
pcall(coroutine.resume, CO)
coroutine.close(CO)
