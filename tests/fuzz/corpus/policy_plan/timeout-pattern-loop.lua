local s = string.rep("a", 460) while true do s:match("a*a*b") end
