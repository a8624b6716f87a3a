#pragma once
// An independent brute-force reference for planner/search.h.
//
// It uses nothing from planner/search.cc (not evaluate(), not add_node()/add_edge()):
// only the CostGraph/CostEdge data layout. Every assignment of one configuration per
// node is visited with a mixed-radix counter and its objective
//   Σ_v node_cost[v][choice[v]] + Σ_e e.cost[choice[e.src] * configs(e.dst) + choice[e.dst]]
// is formed directly from the raw tables (brute_force_minimum() hoists the terms that do
// not involve its innermost node out of the innermost loop; oracle_cost_of() is the
// plain formula for one assignment). Only use it on graphs whose assignment space is
// small (see assignment_count()).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "planner/search.h"

namespace layerplan::testing {

struct OracleResult {
  double cost = std::numeric_limits<double>::infinity();
  std::vector<int> choice;  // one argmin (the first one met in counter order)
  int64_t assignments = 0;  // how many assignments were enumerated
};

// Number of assignments of the graph (product of configuration counts), saturated at
// `cap + 1` so callers can check "too big to enumerate" without overflow.
inline int64_t assignment_count(const CostGraph& graph, int64_t cap = int64_t{1} << 40) {
  int64_t total = 1;
  for (const auto& costs : graph.node_cost) {
    const auto k = static_cast<int64_t>(costs.size());
    if (k == 0) return 0;
    if (total > cap / k) return cap + 1;
    total *= k;
  }
  return total;
}

// The objective of one full assignment, computed directly from the raw tables.
// Independent of layerplan::evaluate(). Throws std::invalid_argument on a malformed
// graph or choice, so a broken test input fails loudly instead of reading garbage.
inline double oracle_cost_of(const CostGraph& graph, const std::vector<int>& choice) {
  const std::size_t n = graph.node_cost.size();
  if (choice.size() != n) throw std::invalid_argument("oracle: choice has wrong length");
  double total = 0.0;
  for (std::size_t v = 0; v < n; ++v) {
    const auto& costs = graph.node_cost[v];
    if (choice[v] < 0 || static_cast<std::size_t>(choice[v]) >= costs.size()) {
      throw std::invalid_argument("oracle: choice index out of range at node " + std::to_string(v));
    }
    total += costs[static_cast<std::size_t>(choice[v])];
  }
  for (const auto& e : graph.edges) {
    if (e.src < 0 || e.dst < 0 || static_cast<std::size_t>(e.src) >= n || static_cast<std::size_t>(e.dst) >= n) {
      throw std::invalid_argument("oracle: edge endpoint out of range");
    }
    const std::size_t ks = graph.node_cost[static_cast<std::size_t>(e.src)].size();
    const std::size_t kd = graph.node_cost[static_cast<std::size_t>(e.dst)].size();
    if (e.cost.size() != ks * kd) throw std::invalid_argument("oracle: edge table has wrong size");
    const auto a = static_cast<std::size_t>(choice[static_cast<std::size_t>(e.src)]);
    const auto b = static_cast<std::size_t>(choice[static_cast<std::size_t>(e.dst)]);
    total += e.cost[a * kd + b];
  }
  return total;
}

// Exhaustive minimum over every assignment. Throws std::length_error when the
// assignment space exceeds `max_assignments` (a guard against accidental blow-ups).
inline OracleResult brute_force_minimum(const CostGraph& graph, int64_t max_assignments = 20'000'000) {
  const std::size_t n = graph.node_cost.size();
  const int64_t space = assignment_count(graph, max_assignments);
  if (space == 0) throw std::invalid_argument("oracle: a node has no configurations");
  if (space > max_assignments) throw std::length_error("oracle: assignment space too large");

  // Validate the edges once and precompute flat offsets for the inner loop.
  struct FlatEdge {
    std::size_t src, dst, stride;
    const double* table;
  };
  std::vector<FlatEdge> flat;
  flat.reserve(graph.edges.size());
  for (const auto& e : graph.edges) {
    if (e.src < 0 || e.dst < 0 || static_cast<std::size_t>(e.src) >= n || static_cast<std::size_t>(e.dst) >= n) {
      throw std::invalid_argument("oracle: edge endpoint out of range");
    }
    const std::size_t ks = graph.node_cost[static_cast<std::size_t>(e.src)].size();
    const std::size_t kd = graph.node_cost[static_cast<std::size_t>(e.dst)].size();
    if (e.cost.size() != ks * kd) throw std::invalid_argument("oracle: edge table has wrong size");
    flat.push_back({static_cast<std::size_t>(e.src), static_cast<std::size_t>(e.dst), kd, e.cost.data()});
  }

  OracleResult best;
  if (n == 0) {
    best.cost = 0.0;
    best.assignments = 1;
    return best;
  }

  // The innermost (fastest-changing) digit is the node with the most configurations,
  // `inner`. For each assignment of the other nodes, the part of the objective that does
  // not involve `inner` is summed once (`base`); then every configuration of `inner` is
  // tried, adding its node cost and the edges that touch it. Every assignment is still
  // enumerated and its total formed from the raw tables; this only avoids re-adding
  // the same terms for each configuration of `inner`.
  std::size_t inner = 0;
  for (std::size_t v = 1; v < n; ++v)
    if (graph.node_cost[v].size() > graph.node_cost[inner].size()) inner = v;
  std::vector<FlatEdge> outer_edges, inner_edges;
  for (const auto& e : flat) (e.src == inner || e.dst == inner ? inner_edges : outer_edges).push_back(e);
  const auto& inner_cost = graph.node_cost[inner];

  std::vector<int> digit(n, 0);  // the mixed-radix counter: digit[v] in [0, configs(v))
  while (true) {
    double base = 0.0;
    for (std::size_t v = 0; v < n; ++v)
      if (v != inner) base += graph.node_cost[v][static_cast<std::size_t>(digit[v])];
    for (const auto& e : outer_edges) {
      base += e.table[static_cast<std::size_t>(digit[e.src]) * e.stride + static_cast<std::size_t>(digit[e.dst])];
    }
    for (std::size_t c = 0; c < inner_cost.size(); ++c) {
      digit[inner] = static_cast<int>(c);
      double total = base + inner_cost[c];
      for (const auto& e : inner_edges) {
        total += e.table[static_cast<std::size_t>(digit[e.src]) * e.stride + static_cast<std::size_t>(digit[e.dst])];
      }
      ++best.assignments;
      if (best.choice.empty() || total < best.cost) {
        best.cost = total;
        best.choice = digit;
      }
    }
    digit[inner] = 0;
    // Increment the counter over the other nodes; stop after the last digit wraps.
    std::size_t pos = 0;
    while (pos < n) {
      if (pos != inner && ++digit[pos] < static_cast<int>(graph.node_cost[pos].size())) break;
      digit[pos] = 0;
      ++pos;
    }
    if (pos == n) break;
  }
  return best;
}

}  // namespace layerplan::testing
