local s = string.rep("\1", 1 << 20)
while true do local q = string.format("%q", s) end
