local t = {} while true do t[0] = string.rep("x", 100000) end
