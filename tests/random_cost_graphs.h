#pragma once
// Cost-graph generators for the search tests.
//
// A graph is built in two steps: a Topology (node count + directed edge list, parallel
// edges allowed) describes the shape, and with_random_costs() gives every node a random
// configuration count and every node/edge a random integer-valued cost table. Costs are
// small integers stored as double, so every sum the search forms is exact and results
// compare with ==. Everything is driven by a caller-supplied std::mt19937 with a fixed
// seed, so every graph is reproducible from its seed.
//
// Nothing here uses planner/search.cc: graphs are filled in through the CostGraph fields
// directly, not through add_node()/add_edge().
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "planner/search.h"

namespace layerplan::testing {

struct Topology {
  int num_nodes = 0;
  std::vector<std::pair<int, int>> edges;  // (src, dst); duplicates = parallel edges
};

struct CostOptions {
  int min_configs = 1;
  int max_configs = 5;
  int min_cost = 0;   // inclusive
  int max_cost = 99;  // inclusive
  // Configuration counts are lowered at random until the product of all of them (the
  // brute-force oracle's work) is at most this; 0 means no cap.
  int64_t max_assignments = 0;
};

inline int uniform_int(std::mt19937& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

inline bool coin(std::mt19937& rng, double p) { return std::bernoulli_distribution(p)(rng); }

// Random configuration counts in [min_configs, max_configs], capped as described above.
inline std::vector<int> random_config_counts(std::mt19937& rng, int num_nodes, const CostOptions& opt) {
  std::vector<int> k(static_cast<std::size_t>(num_nodes));
  for (auto& x : k) x = uniform_int(rng, opt.min_configs, opt.max_configs);
  if (opt.max_assignments > 0) {
    auto product = [&] {
      int64_t p = 1;
      for (int x : k) {
        p *= x;
        if (p > opt.max_assignments) return p;
      }
      return p;
    };
    while (product() > opt.max_assignments) {
      std::vector<std::size_t> reducible;
      for (std::size_t i = 0; i < k.size(); ++i)
        if (k[i] > 1) reducible.push_back(i);
      if (reducible.empty()) break;
      --k[reducible[static_cast<std::size_t>(uniform_int(rng, 0, static_cast<int>(reducible.size()) - 1))]];
    }
  }
  return k;
}

// Random configuration counts in [1, max_configs] whose product (the number of joint
// assignments) lies in [min_product, max_product]: used to build graphs just above a
// solver's "small enough to enumerate" size that the oracle can still enumerate. Needs
// max_product >= 2 * min_product so single steps cannot jump over the range.
inline std::vector<int> random_config_counts_with_product(std::mt19937& rng, int num_nodes, int64_t min_product,
                                                          int64_t max_product, int max_configs) {
  std::vector<int> k(static_cast<std::size_t>(num_nodes));
  for (auto& x : k) x = uniform_int(rng, 1, max_configs);
  auto product = [&] {
    int64_t p = 1;
    for (int x : k) p *= x;
    return p;
  };
  auto pick = [&](auto&& ok) {
    std::vector<std::size_t> c;
    for (std::size_t i = 0; i < k.size(); ++i)
      if (ok(k[i])) c.push_back(i);
    return c.empty() ? k.size() : c[static_cast<std::size_t>(uniform_int(rng, 0, static_cast<int>(c.size()) - 1))];
  };
  for (int iter = 0; iter < 10'000; ++iter) {
    const int64_t p = product();
    if (p > max_product) {
      const std::size_t i = pick([](int x) { return x > 1; });
      if (i == k.size()) break;
      --k[i];
    } else if (p < min_product) {
      const std::size_t i = pick([&](int x) { return x < max_configs; });
      if (i == k.size()) break;
      ++k[i];
    } else {
      break;
    }
  }
  return k;
}

inline std::vector<double> random_table(std::mt19937& rng, std::size_t size, const CostOptions& opt) {
  std::vector<double> t(size);
  for (auto& x : t) x = static_cast<double>(uniform_int(rng, opt.min_cost, opt.max_cost));
  return t;
}

// A graph of the given shape with explicit configuration counts and random costs.
inline CostGraph with_random_costs(const Topology& topo, const std::vector<int>& configs, std::mt19937& rng,
                                   const CostOptions& opt = {}) {
  CostGraph g;
  g.node_cost.reserve(static_cast<std::size_t>(topo.num_nodes));
  for (int v = 0; v < topo.num_nodes; ++v) {
    g.node_cost.push_back(random_table(rng, static_cast<std::size_t>(configs[static_cast<std::size_t>(v)]), opt));
  }
  for (const auto& [s, d] : topo.edges) {
    CostEdge e;
    e.src = s;
    e.dst = d;
    e.cost = random_table(rng,
                          static_cast<std::size_t>(configs[static_cast<std::size_t>(s)]) *
                              static_cast<std::size_t>(configs[static_cast<std::size_t>(d)]),
                          opt);
    g.edges.push_back(std::move(e));
  }
  return g;
}

// A graph of the given shape with random configuration counts and random costs.
inline CostGraph with_random_costs(const Topology& topo, std::mt19937& rng, const CostOptions& opt = {}) {
  const auto configs = random_config_counts(rng, topo.num_nodes, opt);
  return with_random_costs(topo, configs, rng, opt);
}

// ---------------------------------------------------------------------------------
// Fixed shapes.

// v0 → v1 → … → v(L-1).
inline Topology chain_topology(int length) {
  Topology t{length, {}};
  for (int i = 0; i + 1 < length; ++i) t.edges.emplace_back(i, i + 1);
  return t;
}

// Fork/join: s(0) → l(1), s → r(2), l → t(3), r → t.
inline Topology diamond_topology() { return {4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}}}; }

// input(0) → a(1) → b(2) → c(3) → add(4) → output(5), plus the skip edge a → add.
inline Topology residual_block_topology() { return {6, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {1, 4}, {4, 5}}}; }

// source(0); four branches of 1, 2, 3 and 4 nodes from the source into concat; concat →
// sink. Node numbering: source 0, branch nodes 1..10, concat 11, sink 12.
inline Topology inception_topology() {
  Topology t;
  const int source = 0;
  int next = 1;
  std::vector<int> branch_ends;
  for (int len = 1; len <= 4; ++len) {
    int prev = source;
    for (int i = 0; i < len; ++i) {
      t.edges.emplace_back(prev, next);
      prev = next++;
    }
    branch_ends.push_back(prev);
  }
  const int concat = next++;
  const int sink = next++;
  for (int end : branch_ends) t.edges.emplace_back(end, concat);
  t.edges.emplace_back(concat, sink);
  t.num_nodes = next;
  return t;
}

// K2,2: sources 0 and 1 each feed sinks 2 and 3. No node has one in- and one
// out-edge and no two edges are parallel, so elimination does nothing.
inline Topology k22_topology() { return {4, {{0, 2}, {0, 3}, {1, 2}, {1, 3}}}; }

// Complete bipartite K(m,n): sources 0..m-1 each feed sinks m..m+n-1.
inline Topology complete_bipartite_topology(int m, int n) {
  Topology t{m + n, {}};
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) t.edges.emplace_back(i, m + j);
  return t;
}

// Wheatstone bridge: a(0) → b(1), a → c(2), b → c, b → d(3), c → d. Not series-parallel
// as a two-terminal DAG: b has out-degree 2, c in-degree 2, a/d are the terminals.
inline Topology wheatstone_topology() { return {4, {{0, 1}, {0, 2}, {1, 2}, {1, 3}, {2, 3}}}; }

// ---------------------------------------------------------------------------------
// Random shapes.

namespace detail {

// A two-terminal fragment for series/parallel composition.
struct Fragment {
  int num_nodes = 0;
  int source = 0;
  int sink = 0;
  std::vector<std::pair<int, int>> edges;
};

// Appends b to a, identifying b's source with node `b_source_as` of a (always) and
// b's sink with `b_sink_as` of a (or a new node when -1). Returns the index in the
// result of b's sink.
inline int glue(Fragment& a, const Fragment& b, int b_source_as, int b_sink_as) {
  std::vector<int> map(static_cast<std::size_t>(b.num_nodes), -1);
  map[static_cast<std::size_t>(b.source)] = b_source_as;
  if (b_sink_as >= 0) map[static_cast<std::size_t>(b.sink)] = b_sink_as;
  for (auto& m : map)
    if (m < 0) m = a.num_nodes++;
  for (const auto& [s, d] : b.edges)
    a.edges.emplace_back(map[static_cast<std::size_t>(s)], map[static_cast<std::size_t>(d)]);
  return map[static_cast<std::size_t>(b.sink)];
}

// A random two-terminal series-parallel fragment with exactly n >= 2 nodes.
inline Fragment random_sp_fragment(std::mt19937& rng, int n, int depth = 0) {
  const bool deep = depth > 12;
  if (n == 2) {
    // A single edge, or (sometimes) a parallel composition of two fragments of two
    // nodes, i.e. a bundle of parallel edges.
    if (deep || !coin(rng, 0.3)) return {2, 0, 1, {{0, 1}}};
  }
  // Series: n = n1 + n2 - 1 (n1, n2 >= 2). Parallel: n = n1 + n2 - 2 (n1, n2 >= 2).
  const bool series = n >= 3 && (deep || coin(rng, 0.5));
  if (series) {
    const int n1 = uniform_int(rng, 2, n - 1);
    const int n2 = n - n1 + 1;
    Fragment a = random_sp_fragment(rng, n1, depth + 1);
    const Fragment b = random_sp_fragment(rng, n2, depth + 1);
    a.sink = glue(a, b, a.sink, -1);
    return a;
  }
  const int n1 = uniform_int(rng, 2, n);
  const int n2 = n - n1 + 2;
  Fragment a = random_sp_fragment(rng, n1, depth + 1);
  const Fragment b = random_sp_fragment(rng, n2, depth + 1);
  glue(a, b, a.source, a.sink);
  return a;
}

// Relabels nodes by a random permutation and shuffles the edge list, so the solver
// cannot depend on nodes arriving in topological order.
inline Topology scramble(std::mt19937& rng, Topology t) {
  std::vector<int> perm(static_cast<std::size_t>(t.num_nodes));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  for (auto& [s, d] : t.edges) {
    s = perm[static_cast<std::size_t>(s)];
    d = perm[static_cast<std::size_t>(d)];
  }
  std::shuffle(t.edges.begin(), t.edges.end(), rng);
  return t;
}

}  // namespace detail

// A random two-terminal series-parallel DAG with exactly `num_nodes` (>= 2) nodes, built
// by random series and parallel compositions (parallel edges occur), with node labels
// and edge order scrambled. Every such graph reduces to its two terminals by node and
// edge elimination.
inline Topology random_series_parallel_topology(std::mt19937& rng, int num_nodes) {
  const detail::Fragment f = detail::random_sp_fragment(rng, num_nodes);
  return detail::scramble(rng, Topology{f.num_nodes, f.edges});
}

// A random DAG: each pair i < j gets an edge i → j with probability edge_prob; with
// probability parallel_prob an existing edge is doubled. Not necessarily connected and
// usually not series-parallel.
inline Topology random_dag_topology(std::mt19937& rng, int num_nodes, double edge_prob, double parallel_prob = 0.1) {
  Topology t{num_nodes, {}};
  for (int i = 0; i < num_nodes; ++i) {
    for (int j = i + 1; j < num_nodes; ++j) {
      if (coin(rng, edge_prob)) {
        t.edges.emplace_back(i, j);
        if (coin(rng, parallel_prob)) t.edges.emplace_back(i, j);
      }
    }
  }
  std::shuffle(t.edges.begin(), t.edges.end(), rng);
  return t;
}

// A random directed graph that may have cycles: each unordered pair {i, j} gets an edge
// with probability edge_prob, oriented at random; with probability antiparallel_prob it
// also gets the opposite edge (a two-cycle). Labels are scrambled.
inline Topology random_digraph_topology(std::mt19937& rng, int num_nodes, double edge_prob,
                                        double antiparallel_prob = 0.1) {
  Topology t{num_nodes, {}};
  for (int i = 0; i < num_nodes; ++i) {
    for (int j = i + 1; j < num_nodes; ++j) {
      if (!coin(rng, edge_prob)) continue;
      if (coin(rng, 0.5)) {
        t.edges.emplace_back(i, j);
      } else {
        t.edges.emplace_back(j, i);
      }
      if (coin(rng, antiparallel_prob)) t.edges.emplace_back(t.edges.back().second, t.edges.back().first);
    }
  }
  return detail::scramble(rng, std::move(t));
}

// ---------------------------------------------------------------------------------
// Convenience wrappers returning graphs with random costs.

inline CostGraph random_chain(std::mt19937& rng, int length, const CostOptions& opt = {}) {
  return with_random_costs(chain_topology(length), rng, opt);
}
inline CostGraph random_diamond(std::mt19937& rng, const CostOptions& opt = {}) {
  return with_random_costs(diamond_topology(), rng, opt);
}
inline CostGraph random_residual_block(std::mt19937& rng, const CostOptions& opt = {}) {
  return with_random_costs(residual_block_topology(), rng, opt);
}
inline CostGraph random_inception(std::mt19937& rng, const CostOptions& opt = {}) {
  return with_random_costs(inception_topology(), rng, opt);
}
inline CostGraph random_k22(std::mt19937& rng, const CostOptions& opt = {}) {
  return with_random_costs(k22_topology(), rng, opt);
}
inline CostGraph random_wheatstone(std::mt19937& rng, const CostOptions& opt = {}) {
  return with_random_costs(wheatstone_topology(), rng, opt);
}
inline CostGraph random_series_parallel(std::mt19937& rng, int num_nodes, const CostOptions& opt = {}) {
  return with_random_costs(random_series_parallel_topology(rng, num_nodes), rng, opt);
}
inline CostGraph random_dag(std::mt19937& rng, int num_nodes, double edge_prob, const CostOptions& opt = {}) {
  return with_random_costs(random_dag_topology(rng, num_nodes, edge_prob), rng, opt);
}

// ---------------------------------------------------------------------------------
// Printing, for failure messages: a graph as C++ that rebuilds it.

inline std::string to_string(const CostGraph& g) {
  std::ostringstream out;
  out.precision(17);
  auto list = [&](const std::vector<double>& v) {
    out << '{';
    for (std::size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
    out << '}';
  };
  out << "CostGraph g;  // " << g.num_nodes() << " nodes, " << g.edges.size() << " edges\n";
  for (std::size_t v = 0; v < g.node_cost.size(); ++v) {
    out << "g.node_cost.push_back(";
    list(g.node_cost[v]);
    out << ");  // node " << v << '\n';
  }
  for (const auto& e : g.edges) {
    out << "g.edges.push_back({" << e.src << ", " << e.dst << ", ";
    list(e.cost);
    out << "});\n";
  }
  return out.str();
}

}  // namespace layerplan::testing
