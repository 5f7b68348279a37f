local co = coroutine.wrap(function() while true do pcall(function() for i = 1, 1e9 do end end) coroutine.yield() end end)
for i = 1, 10 do co() end
