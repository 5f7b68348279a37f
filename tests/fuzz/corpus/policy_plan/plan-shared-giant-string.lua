local big = string.rep(string.rep("w", 4096), 2048)
local l = {}
for i = 1, 100 do l[i] = { type = "cordon", node = big, reason = big, where = big } end
return { actions = l, messages = { big, big, big } }
