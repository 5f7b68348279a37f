local s, p = string.rep("a", 1000000), string.rep("a", 3999) .. "b" while true do s:find(p, 1, true) end
