local s = string.rep("a", 100000)
while true do select("#", s:byte(1.0, 100000.0)) end
