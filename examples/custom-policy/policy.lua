-- headroom: always keep at least `free_cpu` cores free in one node group,
-- so that a new pod starts at once instead of waiting for a node to boot.
--
-- Free cores are counted on the group's Ready, schedulable nodes
-- (allocatable minus requests) plus the nodes already on their way (a full
-- node each). When they fall short of `free_cpu`, the group grows by the
-- nodes that make up the difference. Nothing is ever scaled down.
--
-- A starting point for your own policy: copy this folder, edit, then
-- `luascale test` the spec beside it.

local ls = require "luascale"

local P = {}

P.params = {
  group = "workers", -- the node group to keep headroom in
  free_cpu = "4",    -- cores to keep free: "4", "2.5" or "2500m"
}

function P.reconcile(cluster, params, store)
  local plan = ls.plan()
  for _, node in ipairs(cluster.nodes) do
    plan:explain(node, false, "the headroom policy never scales down")
  end

  local g = cluster.groups[params.group]
  if not g then
    plan:log("headroom: there is no node group named %q", params.group)
    return plan
  end

  local want = ls.cpu(params.free_cpu)
  local per_node = g.template.allocatable.cpu
  local free = g.upcoming * per_node
  for _, node in ipairs(ls.nodes_of(cluster, g.name)) do
    if node.ready and not node.unschedulable then
      free = free + math.max(0, node.free.cpu)
    end
  end

  if free < want and per_node > 0 then
    local add = math.ceil((want - free) / per_node)
    plan:scale_up(g.name, add, string.format("%s cpu free in %s, %s wanted",
      ls.format_cpu(free), g.name, ls.format_cpu(want)))
  end
  return plan
end

return P
