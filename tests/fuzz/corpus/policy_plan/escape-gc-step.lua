local t = {} for i = 1, 100000 do t[i] = {} end
while true do collectgarbage("step") end
