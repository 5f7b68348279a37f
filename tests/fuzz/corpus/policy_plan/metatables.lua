local plan = setmetatable({ actions = setmetatable({}, { __index = function() error("no") end }) }, { __len = function() return 1e9 end })
return plan
