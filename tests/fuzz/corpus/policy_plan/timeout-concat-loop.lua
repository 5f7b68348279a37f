local s = string.rep("x", 1000000) while true do local y = s .. s end
