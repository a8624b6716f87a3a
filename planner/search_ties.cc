#include "planner/search_ties.h"

#include <stdexcept>
#include <string>

#include "common/index.h"

namespace layerplan {

namespace {

// The group that holds each node (-1: none), after checking every group.
std::vector<int> group_of_nodes(const CostGraph& graph, const std::vector<std::vector<int>>& groups) {
  std::vector<int> group_of(static_cast<size_t>(graph.num_nodes()), -1);
  for (size_t g = 0; g < groups.size(); ++g) {
    for (int v : groups[g]) {
      if (v < 0 || v >= graph.num_nodes()) {
        throw std::invalid_argument("tied group " + std::to_string(g) + " names node " + std::to_string(v) +
                                    ", not one of the " + std::to_string(graph.num_nodes()) + " nodes");
      }
      if (group_of[static_cast<size_t>(v)] >= 0) {
        throw std::invalid_argument("tied group " + std::to_string(g) + " names node " + std::to_string(v) +
                                    ", which group " + std::to_string(group_of[static_cast<size_t>(v)]) +
                                    " already holds");
      }
      if (graph.configs(v) != graph.configs(groups[g].front())) {
        throw std::invalid_argument(
            "tied group " + std::to_string(g) + " mixes node " + std::to_string(groups[g].front()) + " (" +
            std::to_string(graph.configs(groups[g].front())) + " configurations) and node " + std::to_string(v) + " (" +
            std::to_string(graph.configs(v)) + "): expected equal counts");
      }
      group_of[static_cast<size_t>(v)] = static_cast<int>(g);
    }
  }
  return group_of;
}

}  // namespace

void check_tied_groups(const CostGraph& graph, const std::vector<std::vector<int>>& groups) {
  group_of_nodes(graph, groups);
}

TiedGraph tie_nodes(const CostGraph& graph, const std::vector<std::vector<int>>& groups) {
  const std::vector<int> group_of = group_of_nodes(graph, groups);
  TiedGraph out;
  out.node_of.assign(static_cast<size_t>(graph.num_nodes()), -1);
  std::vector<int> node_of_group(groups.size(), -1);
  for (int v = 0; v < graph.num_nodes(); ++v) {
    const std::vector<double>& cost = graph.node_cost[static_cast<size_t>(v)];
    const int g = group_of[static_cast<size_t>(v)];
    int& merged = g < 0 ? out.node_of[static_cast<size_t>(v)] : node_of_group[static_cast<size_t>(g)];
    if (merged < 0) {
      merged = out.graph.add_node(cost);
    } else {
      std::vector<double>& sum = out.graph.node_cost[static_cast<size_t>(merged)];
      for (size_t a = 0; a < sum.size(); ++a) sum[a] += cost[a];
    }
    out.node_of[static_cast<size_t>(v)] = merged;
  }
  for (const CostEdge& e : graph.edges) {
    const int src = out.node_of[static_cast<size_t>(e.src)];
    const int dst = out.node_of[static_cast<size_t>(e.dst)];
    if (src != dst) {
      out.graph.add_edge(src, dst, e.cost);
      continue;
    }
    // Both ends in one group: only the pairs of equal configurations remain.
    std::vector<double>& sum = out.graph.node_cost[static_cast<size_t>(src)];
    const int k = static_cast<int>(sum.size());
    for (int a = 0; a < k; ++a) sum[static_cast<size_t>(a)] += e.cost[flat_index(a, k, a)];
  }
  return out;
}

}  // namespace layerplan
