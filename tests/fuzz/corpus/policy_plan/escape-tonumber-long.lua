local s = string.rep("1", 4 << 20)
while true do tonumber(s) local y = (" " .. s) + 0 end
