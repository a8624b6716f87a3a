#pragma once
// Tied search nodes: a group of cost-graph nodes that must take one configuration index
// between them (docs/planner.md, §7 "Tied concatenations"). tie_nodes() merges each group
// into one node, so the elimination search runs over the restricted space directly.
#include <vector>

#include "planner/search.h"

namespace layerplan {

struct TiedGraph {
  CostGraph graph;           // one node per group and per untied node
  std::vector<int> node_of;  // original node -> its node in `graph`
};

// Throws std::invalid_argument when a group names a missing node, names a node another
// group already holds, or mixes configuration counts.
void check_tied_groups(const CostGraph& graph, const std::vector<std::vector<int>>& groups);

// Merges every group of `groups` into one node: its cost per configuration is the sum of
// its members', an edge from or to a member becomes an edge from or to the group's node
// with the same table, and an edge between two members of a group adds its diagonal
// (both ends in configuration i) to the group's cost. Nodes keep their order, a group
// taking the place of its first member. Throws as check_tied_groups() does.
TiedGraph tie_nodes(const CostGraph& graph, const std::vector<std::vector<int>>& groups);

}  // namespace layerplan
