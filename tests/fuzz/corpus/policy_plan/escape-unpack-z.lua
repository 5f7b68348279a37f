local s = string.rep("x", 4 << 20)
while true do pcall(string.unpack, "z", s) end
