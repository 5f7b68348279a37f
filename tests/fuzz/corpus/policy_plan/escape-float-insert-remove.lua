local t = {} for i = 1, 100000 do t[i] = i end
while true do table.insert(t, 1.0, 0) table.remove(t, 1.0) end
