local c = "--" .. string.rep("x", 4 << 20)
while true do load(c) end
