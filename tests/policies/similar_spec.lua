-- Spec for luascale.packing.alike / similar: when two node groups count
-- as alike but for their zone, so that a scale-up is balanced over them.
--
-- The cases are the Cluster Autoscaler's comparator tests, restated as
-- data (facts, not code):
--   kubernetes/autoscaler@f7bb0c3623750695e1bb7f9f52269590f2974cbf:
--   cluster-autoscaler/processors/nodegroupset/compare_nodegroups_test.go,
--   aws_nodegroups_test.go, azure_nodegroups_test.go
-- Each is named after its source test and step. A node there
-- (BuildTestNode: cpu in millicores, memory in bytes, 100 pods, capacity =
-- allocatable) is a group's template here; the pods on it (BuildTestPod)
-- are its DaemonSets' requests. Left out: "capacity cpu 1001" (only
-- capacity differs; templates have allocatable only) and Azure's "Same
-- values" agentpool step (the same AKS pool is one group here).
local packing = require "luascale.packing"

-- A group whose template is CA's test node: (millicpu, memory bytes).
local function node(cpu_m, memory, o)
  o = o or {}
  local alloc = { cpu = cpu_m / 1000, memory = memory, ["ephemeral-storage"] = 0, pods = 100 }
  for k, v in pairs(o.extra or {}) do alloc[k] = v end
  local ds = { cpu = 0, memory = 0, ["ephemeral-storage"] = 0, pods = 0 }
  if o.pod then ds.cpu, ds.memory, ds.pods = o.pod[1] / 1000, o.pod[2], 1 end
  return { template = { allocatable = alloc, labels = o.labels or {}, taints = o.taints or {} },
           daemonset_requests = ds }
end

local function Ki(n) return n * 1024 end

local pooh = { ["test-label"] = "test-value", character = "winnie the pooh" }
local function with(base, more)
  local out = {}
  for k, v in pairs(base) do out[k] = v end
  for k, v in pairs(more or {}) do out[k] = v ~= false and v or nil end
  return out
end

local CASES = {
  { "TestIdenticalNodesSimilar", node(1000, 2000), node(1000, 2000), true },

  { "TestNodesSimilarVariousRequirements/same cpu capacity, allocatable 999m",
    node(1000, 2000), node(999, 2000), true },
  { "TestNodesSimilarVariousRequirements/same cpu capacity, allocatable 500m",
    node(1000, 2000), node(500, 2000), false },
  { "TestNodesSimilarVariousRequirements/one with GPU, one without",
    node(1000, 2000), node(1000, 2000, { extra = { ["nvidia.com/gpu"] = 1 } }), false },

  { "TestNodesSimilarVariousRequirementsAndPods/different allocatable, same free",
    node(1000, 2000, { pod = { 500, 1000 } }), node(500, 1000), false },
  { "TestNodesSimilarVariousRequirementsAndPods/same requests of pods",
    node(1000, 2000, { pod = { 500, 1000 } }), node(1000, 2000, { pod = { 500, 1000 } }), true },
  { "TestNodesSimilarVariousRequirementsAndPods/similar allocatable, similar pods",
    node(1000, 2000, { pod = { 500, 1000 } }), node(999, 2000, { pod = { 501, 1001 } }), true },

  { "TestNodesSimilarVariousMemoryRequirements/within tolerance",
    node(1000, 1000), node(1000, 1000 - 1000 * 0.015 + 1), true },
  { "TestNodesSimilarVariousMemoryRequirements/exceeds tolerance",
    node(1000, 1000), node(1000, 1000 - 1000 * 0.015 - 1), false },

  { "TestNodesSimilarVariousLargeMemoryRequirementsM5XLarge/15944120Ki is similar to 16116152Ki",
    node(1000, Ki(16116152)), node(1000, Ki(15944120)), true },
  { "TestNodesSimilarVariousLargeMemoryRequirementsM5XLarge/16438475Ki is not similar to 16116152Ki",
    node(1000, Ki(16116152)), node(1000, Ki(16438475)), false },
  { "TestNodesSimilarVariousLargeMemoryRequirementsM516XLarge/257217528Ki is similar to 259970052Ki",
    node(1000, Ki(259970052)), node(1000, Ki(257217528)), true },
  { "TestNodesSimilarVariousLargeMemoryRequirementsM516XLarge/265169453Ki is not similar to 259970052Ki",
    node(1000, Ki(259970052)), node(1000, Ki(265169453)), false },

}

-- TestNodesSimilarVariousLabels, step by step (the labels accumulate as
-- in the test; "example.com/ready" is its extra ignored label).
do
  local opts = { ignore_labels = { "example.com/ready" } }
  local l1, l2 = pooh, { ["test-label"] = "test-value" }
  local function step(name, want)
    CASES[#CASES + 1] = { "TestNodesSimilarVariousLabels/" .. name, node(1000, 2000, { labels = l1 }),
                          node(1000, 2000, { labels = l2 }), want, opts }
  end
  step("missing character label", false)
  l2 = with(l2, { character = "winnie the pooh" })
  step("the same labels", true)
  l1, l2 = with(l1, { ["kubernetes.io/hostname"] = "node1" }), with(l2, { ["kubernetes.io/hostname"] = "node2" })
  step("different hostname labels", true)
  l1 = with(l1, { ["failure-domain.beta.kubernetes.io/zone"] = "mars-olympus-mons1-b" })
  l2 = with(l2, { ["failure-domain.beta.kubernetes.io/zone"] = "us-houston1-a" })
  step("different zone", true)
  l1 = with(l1, { ["beta.kubernetes.io/fluentd-ds-ready"] = "true" })
  l2 = with(l2, { ["beta.kubernetes.io/fluentd-ds-ready"] = "false" })
  step("different beta.kubernetes.io/fluentd-ds-ready", true)
  l2 = with(l2, { ["beta.kubernetes.io/fluentd-ds-ready"] = false })
  step("beta.kubernetes.io/fluentd-ds-ready on one only", true)
  l1, l2 = with(l1, { ["example.com/ready"] = "true" }), with(l2, { ["example.com/ready"] = "false" })
  step("different custom labels", true)
end

-- TestIsAwsNodeInfoSimilar: each AWS label empty on both, different, or
-- on one node only, is ignored.
for _, label in ipairs{ "alpha.eksctl.io/instance-id", "alpha.eksctl.io/nodegroup-name",
                        "eks.amazonaws.com/nodegroup", "k8s.amazonaws.com/eniConfig", "lifecycle",
                        "topology.ebs.csi.aws.com/zone", "topology.k8s.aws/zone-id" } do
  CASES[#CASES + 1] = { "TestIsAwsNodeInfoSimilar/" .. label .. " empty value",
    node(1000, 2000, { labels = { [label] = "" } }), node(1000, 2000, { labels = { [label] = "" } }), true }
  CASES[#CASES + 1] = { "TestIsAwsNodeInfoSimilar/" .. label .. " different values",
    node(1000, 2000, { labels = { [label] = "foo" } }), node(1000, 2000, { labels = { [label] = "bar" } }), true }
  CASES[#CASES + 1] = { "TestIsAwsNodeInfoSimilar/" .. label .. " one node labeled",
    node(1000, 2000, { labels = { [label] = "foo" } }), node(1000, 2000), true }
end

-- TestIsAzureNodeInfoSimilar, step by step (the labels accumulate as in
-- the test; "example.com/ready" is its extra ignored label).
do
  local az = { ignore_labels = { "example.com/ready" } }
  local l1 = { ["test-label"] = "test-value", character = "thing" }
  local l2 = { ["test-label"] = "test-value" }
  local function step(name, a, b, want)
    CASES[#CASES + 1] = { "TestIsAzureNodeInfoSimilar/" .. name, node(1000, 2000, { labels = a }),
                          node(1000, 2000, { labels = b }), want, az }
  end
  step("no node-pool labels", l1, l2, false)
  l1, l2 = with(l1, { agentpool = "" }), with(l2, { agentpool = "" })
  step("empty agentpool labels", l1, l2, false)
  l1 = with(l1, { ["kubernetes.azure.com/agentpool"] = "foo" })
  l2 = with(l2, { ["kubernetes.azure.com/agentpool"] = "bar" })
  step("AKS agentpool labels", l1, l2, false)
  l1, l2 = with(l1, { agentpool = "" }), with(l2, { agentpool = "foo" })
  step("only one non empty", l1, l2, false)
  l1 = with(l1, { agentpool = false })
  step("only one present", l1, l2, false)
  l1, l2 = with(l1, { agentpool = "foo1" }), with(l2, { agentpool = "foo2" })
  step("different values", l1, l2, false)
  l1, l2 = with(l1, { character = false, agentpool = "foo" }), with(l2, { agentpool = "bar" })
  step("same labels except for agentpool", l1, l2, true)
  l1 = with(l1, { creationSource = "aks-aks-nodepool2-vmss" })
  l2 = with(l2, { creationSource = "aks-aks-nodepool3-vmss" })
  step("different creationSource", l1, l2, true)
  l1 = with(l1, { ["kubernetes.azure.com/node-image-version"] = "AKSUbuntu-1804gen2-2021.01.28" })
  l2 = with(l2, { ["kubernetes.azure.com/node-image-version"] = "AKSUbuntu-1804gen2-2022.01.30" })
  step("different node image version", l1, l2, true)
  l1, l2 = with(l1, { ["example.com/ready"] = "true" }), with(l2, { ["example.com/ready"] = "false" })
  step("custom label", l1, l2, true)
  local props = "kubernetes.azure.com/consolidated-additional-properties"
  l1 = with(l1, { [props] = "foo" })
  step("one node with aksConsolidatedAdditionalProperties label", l1, l2, true)
  l2 = with(l2, { [props] = "foo" })
  step("same aksConsolidatedAdditionalProperties", l1, l2, true)
  l2 = with(l2, { [props] = "bar" })
  step("different aksConsolidatedAdditionalProperties label", l1, l2, true)
end

describe("packing.alike (the Cluster Autoscaler's comparator tests)", function()
  for _, c in ipairs(CASES) do
    local name, a, b, want, opts = c[1], c[2], c[3], c[4], c[5]
    it(name, function()
      local got, why = packing.alike(a, b, opts)
      assert.are.equal(want, got, why)
      -- the comparison is symmetric
      assert.are.equal(want, (packing.alike(b, a, opts)))
    end)
  end

  it("says what differs", function()
    local ok, why = packing.alike(node(1000, 2000), node(500, 2000))
    assert.is_false(ok)
    assert.matches("cpu", why)
    ok, why = packing.alike(node(1000, 2000, { labels = pooh }), node(1000, 2000))
    assert.is_false(ok)
    assert.matches("label", why)
  end)

  it("tells taints apart", function()
    local taint = { { key = "dedicated", value = "gpu", effect = "NoSchedule" } }
    assert.is_false((packing.alike(node(1000, 2000, { taints = taint }), node(1000, 2000))))
    assert.is_true((packing.alike(node(1000, 2000, { taints = taint }),
                                  node(1000, 2000, { taints = taint }))))
  end)
end)

describe("packing.similar", function()
  local function cluster(groups)
    for i, g in ipairs(groups) do g.name = "g" .. i end
    return { group_list = groups }
  end

  it("puts each group in the first set whose first group it is alike", function()
    -- g2 is within 5 % of g1's cpu, g3 within 5 % of g2's but not of g1's
    local sets = packing.similar(cluster{ node(1000, 2000), node(960, 2000), node(920, 2000),
                                          node(920, 2000) })
    assert.are.equal(2, #sets)
    assert.are.same({ "g1", "g2" }, { sets[1][1].name, sets[1][2].name })
    assert.are.same({ "g3", "g4" }, { sets[2][1].name, sets[2][2].name })
  end)

  it("ignores more labels when asked", function()
    local c = cluster{ node(1000, 2000, { labels = { team = "a" } }),
                       node(1000, 2000, { labels = { team = "b" } }) }
    assert.are.equal(0, #packing.similar(c))
    assert.are.equal(1, #packing.similar(c, { ignore_labels = { "team" } }))
  end)
end)
