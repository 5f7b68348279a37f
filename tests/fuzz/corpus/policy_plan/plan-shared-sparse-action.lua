-- one action table with a large, mostly empty hash part, listed many times
local t = { type = "cordon", node = "w-1", reason = "r" }
for i = 1, 40000 do t[i * 2 + 0.5] = true end
for i = 1, 40000 do t[i * 2 + 0.5] = nil end
local l = {}
for i = 1, 100000 do l[i] = t end
return { actions = l }
