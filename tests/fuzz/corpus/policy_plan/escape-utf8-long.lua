local s = "a" .. string.rep("\x80", 4 << 20)
while true do utf8.len(s, 1, 1) utf8.len(s) utf8.offset(s, 2) end
