// Tied search nodes (SearchOptions::tied, planner/search_ties.h): when elimination leaves
// more than the search can enumerate, the remaining members of each tied group take one
// configuration, and the result is the exact minimum over that restricted space.
//
// The reference is an enumeration written here from the raw tables (oracle_cost_of() of
// tests/brute_force_oracle.h for every assignment of the restricted space), and
// brute_force_minimum() for the full space. Costs are integers stored as double, so every
// comparison is exact.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "planner/search.h"
#include "planner/search_ties.h"
#include "tests/brute_force_oracle.h"
#include "tests/random_cost_graphs.h"

namespace {

namespace lt = layerplan::testing;
using layerplan::CostGraph;
using layerplan::evaluate;
using layerplan::SearchOptions;
using layerplan::SearchResult;
using layerplan::solve;
using layerplan::tie_nodes;

// A dense block of `layers` layers as DenseNet has it: node 0 is the block's input x0,
// nodes 1..layers+1 the concats c_1..c_{layers+1}, then f_1..f_layers the layers. Concat
// c_i reads x0 and f_1..f_{i-1}; layer f_i reads c_i; c_{layers+1} is the block's output.
struct DenseBlock {
  lt::Topology topology;
  std::vector<int> concats;
};

DenseBlock dense_block(int layers) {
  DenseBlock block;
  const int first_layer = layers + 2;
  block.topology.num_nodes = first_layer + layers;
  for (int i = 1; i <= layers + 1; ++i) {
    block.concats.push_back(i);
    block.topology.edges.emplace_back(0, i);
    for (int j = 1; j < i; ++j) block.topology.edges.emplace_back(first_layer + j - 1, i);
    if (i <= layers) block.topology.edges.emplace_back(i, first_layer + i - 1);
  }
  return block;
}

// Configuration counts: `concat` for the concats, `other` for x0 and the layers.
std::vector<int> dense_configs(const DenseBlock& block, int concat, int other) {
  std::vector<int> configs(static_cast<size_t>(block.topology.num_nodes), other);
  for (int c : block.concats) configs[static_cast<size_t>(c)] = concat;
  return configs;
}

// The minimum over every assignment in which the nodes of `tied` share one configuration
// (the others free), each priced from the raw tables by oracle_cost_of().
lt::OracleResult restricted_minimum(const CostGraph& g, const std::vector<int>& tied) {
  std::vector<char> in_group(static_cast<size_t>(g.num_nodes()), 0);
  for (int v : tied) in_group[static_cast<size_t>(v)] = 1;
  std::vector<int> digits;  // the free nodes, then -1 for the group
  for (int v = 0; v < g.num_nodes(); ++v) {
    if (!in_group[static_cast<size_t>(v)]) digits.push_back(v);
  }
  digits.push_back(-1);
  auto radix = [&](int d) { return d < 0 ? g.configs(tied.front()) : g.configs(d); };
  std::vector<int> value(digits.size(), 0);
  std::vector<int> choice(static_cast<size_t>(g.num_nodes()), 0);
  lt::OracleResult best;
  while (true) {
    for (size_t i = 0; i < digits.size(); ++i) {
      if (digits[i] >= 0) choice[static_cast<size_t>(digits[i])] = value[i];
    }
    for (int v : tied) choice[static_cast<size_t>(v)] = value.back();
    const double cost = lt::oracle_cost_of(g, choice);
    ++best.assignments;
    if (best.choice.empty() || cost < best.cost) best.cost = cost, best.choice = choice;
    size_t i = 0;
    while (i < digits.size() && ++value[i] == radix(digits[i])) value[i++] = 0;
    if (i == digits.size()) return best;
  }
}

TEST(TiedSearch, DenseBlockIsTheExactMinimumOverTheTiedSpace) {
  // Five layers: elimination removes c_1 (x0 → c_1 → f_1) and f_5 (c_5 → f_5 → c_6) and
  // leaves x0, c_2..c_6 and f_1..f_4: 5 · 4^5 · 5^4 = 3.2 M assignments, more than the
  // search enumerates. The concats that remain, c_2..c_6, are tied; c_1 stays free.
  const DenseBlock block = dense_block(5);
  const std::vector<int> remaining_concats(block.concats.begin() + 1, block.concats.end());
  int restricted = 0;  // seeds where the full space has a better assignment
  for (uint32_t seed = 0; seed < 3; ++seed) {
    std::mt19937 rng(90'000 + seed);
    const CostGraph g = lt::with_random_costs(block.topology, dense_configs(block, 4, 5), rng);
    SearchOptions options;
    options.tied = {block.concats};
    const SearchResult r = solve(g, options);
    ASSERT_FALSE(r.timed_out);
    ASSERT_EQ(r.choice.size(), static_cast<size_t>(g.num_nodes()));
    EXPECT_EQ(r.stats.remaining_nodes, 10) << "seed " << seed;
    EXPECT_EQ(r.stats.tied_nodes, 5) << "seed " << seed;
    EXPECT_EQ(r.stats.conditioned_nodes, 0) << "seed " << seed;
    for (int c : remaining_concats) EXPECT_EQ(r.choice[static_cast<size_t>(c)], r.choice[2]) << "seed " << seed;
    EXPECT_EQ(lt::oracle_cost_of(g, r.choice), r.cost) << "seed " << seed;

    const lt::OracleResult best = restricted_minimum(g, remaining_concats);
    EXPECT_EQ(best.assignments, 5 * 4 * 4 * 5 * 5 * 5 * 5 * 5);
    EXPECT_EQ(r.cost, best.cost) << "seed " << seed;

    // The full space, where the search conditions instead, is never worse.
    const SearchResult full = solve(g);
    EXPECT_EQ(full.stats.tied_nodes, 0);
    EXPECT_GT(full.stats.conditioned_nodes, 0);
    EXPECT_LE(full.cost, r.cost) << "seed " << seed;
    restricted += full.cost < r.cost ? 1 : 0;
  }
  // On random tables the tie does restrict: a search that ignored it would fail above.
  EXPECT_GT(restricted, 0);
}

TEST(TiedSearch, AnyAssignmentOfTheTiedSpaceIsNoBetter) {
  // The tied optimum against assignments that a baseline would make: every concat alike,
  // everything else in one configuration (data parallelism's shape) or at random.
  const DenseBlock block = dense_block(5);
  std::mt19937 rng(91'000);
  const CostGraph g = lt::with_random_costs(block.topology, dense_configs(block, 4, 5), rng);
  SearchOptions options;
  options.tied = {block.concats};
  const SearchResult r = solve(g, options);
  ASSERT_EQ(r.choice.size(), static_cast<size_t>(g.num_nodes()));
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<int> choice(static_cast<size_t>(g.num_nodes()));
    const int concat = lt::uniform_int(rng, 0, 3);
    const int uniform = trial < 4 ? trial : -1;
    for (int v = 0; v < g.num_nodes(); ++v) {
      choice[static_cast<size_t>(v)] = uniform >= 0 ? uniform : lt::uniform_int(rng, 0, g.configs(v) - 1);
    }
    for (int c : block.concats) choice[static_cast<size_t>(c)] = uniform >= 0 ? uniform : concat;
    EXPECT_LE(r.cost, lt::oracle_cost_of(g, choice)) << "trial " << trial;
  }
}

TEST(TiedSearch, GraphThatReducesIsSolvedOverTheFullSpace) {
  // Two layers: small enough to enumerate after elimination, so the tie is not used and
  // the result is the unrestricted minimum.
  const DenseBlock block = dense_block(2);
  for (uint32_t seed = 0; seed < 4; ++seed) {
    std::mt19937 rng(92'000 + seed);
    const CostGraph g = lt::with_random_costs(block.topology, dense_configs(block, 4, 6), rng);
    SearchOptions options;
    options.tied = {block.concats};
    const SearchResult r = solve(g, options);
    EXPECT_EQ(r.stats.tied_nodes, 0) << "seed " << seed;
    EXPECT_EQ(r.cost, lt::brute_force_minimum(g).cost) << "seed " << seed;
  }
}

TEST(TiedSearch, GroupWithFewerThanTwoRemainingMembersIsNotTied) {
  // A K2,2 core (0..3) too large to enumerate, a pendant source 4 → 0 and sink 3 → 5.
  // The group {4, 5} is folded away as leaves before the core is conditioned, so nothing
  // is tied and the result is the full minimum.
  const lt::Topology t{6, {{0, 2}, {0, 3}, {1, 2}, {1, 3}, {4, 0}, {3, 5}}};
  std::mt19937 rng(93'000);
  const CostGraph g = lt::with_random_costs(t, {33, 32, 33, 31, 3, 3}, rng);
  SearchOptions options;
  options.tied = {{4, 5}};
  const SearchResult r = solve(g, options);
  EXPECT_EQ(r.stats.tied_nodes, 0);
  EXPECT_GT(r.stats.conditioned_nodes, 0);
  EXPECT_EQ(r.cost, lt::brute_force_minimum(g).cost);
}

TEST(TieNodes, MergedGraphPricesEveryTiedAssignmentAsTheOriginal) {
  // Groups {1, 3} (joined by an edge, which becomes the group's diagonal) and {2, 4, 5}.
  const lt::Topology t{6, {{0, 1}, {1, 3}, {3, 1}, {0, 2}, {2, 4}, {4, 5}, {1, 5}, {3, 0}, {0, 1}}};
  std::mt19937 rng(95'000);
  const CostGraph g = lt::with_random_costs(t, {3, 4, 2, 4, 2, 2}, rng);
  const auto tied = tie_nodes(g, {{1, 3}, {2, 4, 5}});
  ASSERT_EQ(tied.graph.num_nodes(), 3);
  EXPECT_EQ(tied.node_of, (std::vector<int>{0, 1, 2, 1, 2, 2}));
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 4; ++b) {
      for (int c = 0; c < 2; ++c) {
        const std::vector<int> original{a, b, c, b, c, c};
        EXPECT_EQ(evaluate(tied.graph, {a, b, c}), lt::oracle_cost_of(g, original)) << a << " " << b << " " << c;
      }
    }
  }
}

TEST(TieNodes, MalformedGroupsAreRefused) {
  std::mt19937 rng(96'000);
  const CostGraph g = lt::with_random_costs(lt::chain_topology(3), {2, 2, 3}, rng);
  auto refused = [&](const std::vector<std::vector<int>>& groups) {
    SearchOptions options;
    options.tied = groups;
    try {
      solve(g, options);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(refused({{0, 3}}), "tied group 0 names node 3, not one of the 3 nodes");
  EXPECT_EQ(refused({{0, 1}, {1}}), "tied group 1 names node 1, which group 0 already holds");
  EXPECT_EQ(refused({{0, 2}}), "tied group 0 mixes node 0 (2 configurations) and node 2 (3): expected equal counts");
  EXPECT_EQ(refused({{0, 1}}), "(accepted)");
}

}  // namespace
