-- Hot reload: a new policy is tried before it replaces the running one.
local t = require "luascale.testing"

local function cluster()
  return t.cluster{ nodes = { t.node{ name = "w-1", group = "workers" } } }
end

local function engine()
  return t.engine{ policy = "fixtures/counter.lua", groups = { t.group{ name = "workers" } },
                   now = "2026-11-30T10:00:00Z" }
end

describe("hot reload", function()
  it("swaps in a good policy and carries the store over", function()
    local e = engine()
    e:decide(cluster())
    e:advance("1m")
    assert.are.equal("v1 call 2", e:decide(cluster()).log[1])
    local ok, dropped = e:reload("fixtures/counter_v2.lua")
    assert.is_true(ok)
    assert.matches("store.callback %(function%)", dropped)
    -- the trial run's store writes were undone: the count goes on from 2
    assert.are.equal("v2 call 3, 2 earlier times", e:decide(cluster()).log[1])
  end)

  it("keeps the old policy when the new one does not compile", function()
    local e = engine()
    e:decide(cluster())
    local ok, why = e:reload("fixtures/syntax_error.lua")
    assert.is_false(ok)
    assert.matches("cannot load the new policy: .*syntax_error.lua:3:", why)
    assert.are.equal("v1 call 2", e:decide(cluster()).log[1])
  end)

  it("keeps the old policy when the new one fails on the current cluster", function()
    local e = engine()
    e:decide(cluster())
    local ok, why = e:reload("fixtures/fails_on_nodes.lua")
    assert.is_false(ok)
    assert.matches("the new policy failed its trial run: .*fails_on_nodes.lua:5:", why)
    assert.are.equal("v1 call 2", e:decide(cluster()).log[1])
  end)

  it("keeps the old policy when the new file is missing", function()
    local e = engine()
    local ok, why = e:reload("fixtures/does_not_exist.lua")
    assert.is_false(ok)
    assert.matches("does_not_exist.lua", why)
    assert.are.equal("v1 call 1", e:decide(cluster()).log[1])
  end)
end)
