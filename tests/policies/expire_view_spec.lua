-- g.expire_after: the config's disruption.expire_after of the group (its
-- own, else the top level's) in seconds, nil when its nodes never expire.
local t = require "luascale.testing"

describe("g.expire_after", function()
  it("is the group's expiry in seconds, nil without one", function()
    local a = t.group{ name = "a" }
    a.disruption = { expire_after = "720h" }
    local b = t.group{ name = "b" }
    local c = t.group{ name = "c" }
    c.disruption = { expire_after = "Never" }
    local e = t.engine{ policy = "fixtures/expire_view.lua", groups = { a, b, c } }
    local r = e:decide(t.cluster{}, t.time("2026-11-30T10:00:00Z"))
    assert.no_error(r)
    table.sort(r.log)
    assert.are.same({ "a 2592000", "b nil", "c nil" }, r.log)
  end)
end)
