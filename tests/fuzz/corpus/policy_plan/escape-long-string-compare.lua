local a = string.rep(string.rep("x", 64), 1 << 16) local b = a:sub(1, -2) .. "y"
while true do local _ = a < b or a == b end
