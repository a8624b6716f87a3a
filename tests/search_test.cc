// Acceptance tests for planner/search.h: solve() must return the exact minimum of
// Σ node costs + Σ edge costs, with a configuration choice that really achieves it.
//
// The reference is tests/brute_force_oracle.h, an independent exhaustive enumerator;
// the graphs come from tests/random_cost_graphs.h. All costs are integers stored as
// double, so every comparison below is exact (==).
#include "planner/search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tests/brute_force_oracle.h"
#include "tests/random_cost_graphs.h"

namespace {

namespace lt = layerplan::testing;
using layerplan::CostEdge;
using layerplan::CostGraph;
using layerplan::evaluate;
using layerplan::SearchOptions;
using layerplan::SearchResult;
using layerplan::solve;

const SearchOptions kDefault{};
const SearchOptions kNaive{
    .deadline = std::nullopt, .naive = true, .clock = {}, .max_table_bytes = std::nullopt, .tied = {}};

// Graphs up to this size are printed in full in failure messages.
constexpr int kPrintableNodes = 40;

std::string describe(const CostGraph& g) {
  if (g.num_nodes() > kPrintableNodes) {
    return "(graph with " + std::to_string(g.num_nodes()) + " nodes, " + std::to_string(g.edges.size()) +
           " edges; too big to print)\n";
  }
  return lt::to_string(g);
}

// Runs solve() and checks everything that can be checked without knowing the optimum:
// no exception, not timed out, one valid configuration per node, and the choice
// achieves the reported cost (by evaluate() and by the independent oracle_cost_of()).
::testing::AssertionResult RunsConsistently(const CostGraph& g, const SearchOptions& opt, SearchResult* out) {
  SearchResult r;
  try {
    r = solve(g, opt);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "solve() threw: " << e.what() << "\n" << describe(g);
  }
  if (r.timed_out) return ::testing::AssertionFailure() << "solve() timed out\n" << describe(g);
  if (r.choice.size() != static_cast<std::size_t>(g.num_nodes())) {
    return ::testing::AssertionFailure() << "choice has " << r.choice.size() << " entries for " << g.num_nodes()
                                         << " nodes\n"
                                         << describe(g);
  }
  for (int v = 0; v < g.num_nodes(); ++v) {
    const int c = r.choice[static_cast<std::size_t>(v)];
    if (c < 0 || c >= g.configs(v)) {
      return ::testing::AssertionFailure()
             << "choice[" << v << "] = " << c << " but node has " << g.configs(v) << " configurations\n"
             << describe(g);
    }
  }
  const double direct = lt::oracle_cost_of(g, r.choice);
  if (direct != r.cost) {
    return ::testing::AssertionFailure() << "reported cost " << r.cost << " but the returned choice costs " << direct
                                         << " (recomputed independently)\n"
                                         << describe(g);
  }
  const double evaluated = evaluate(g, r.choice);
  if (evaluated != r.cost) {
    return ::testing::AssertionFailure() << "reported cost " << r.cost << " but evaluate(choice) = " << evaluated
                                         << "\n"
                                         << describe(g);
  }
  if (out) *out = std::move(r);
  return ::testing::AssertionSuccess();
}

// RunsConsistently() plus: the reported cost equals the given brute-force minimum.
::testing::AssertionResult SolvesTo(const CostGraph& g, const lt::OracleResult& best,
                                    const SearchOptions& opt = kDefault, SearchResult* out = nullptr) {
  SearchResult r;
  if (auto ok = RunsConsistently(g, opt, &r); !ok) return ok;
  if (best.cost != r.cost) {
    std::string argmin;
    for (int c : best.choice) argmin += std::to_string(c) + " ";
    return ::testing::AssertionFailure() << "solve() cost " << r.cost << " != brute-force minimum " << best.cost
                                         << " (an optimal choice: " << argmin << ")\n"
                                         << describe(g);
  }
  if (out) *out = std::move(r);
  return ::testing::AssertionSuccess();
}

// RunsConsistently() plus: the reported cost equals the brute-force minimum.
::testing::AssertionResult SolvesExactly(const CostGraph& g, const SearchOptions& opt = kDefault,
                                         SearchResult* out = nullptr) {
  return SolvesTo(g, lt::brute_force_minimum(g), opt, out);
}

// ----------------------------------------------------------------------------------
// Shrinking: on the first failure of a property test, reduce the failing graph to a
// small one that still fails, so the failure message shows a minimal reproduction.

CostGraph WithoutEdge(const CostGraph& g, std::size_t i) {
  CostGraph h = g;
  h.edges.erase(h.edges.begin() + static_cast<std::ptrdiff_t>(i));
  return h;
}

CostGraph WithoutNode(const CostGraph& g, int v) {
  CostGraph h;
  for (int u = 0; u < g.num_nodes(); ++u)
    if (u != v) h.node_cost.push_back(g.node_cost[static_cast<std::size_t>(u)]);
  for (const auto& e : g.edges) {
    if (e.src == v || e.dst == v) continue;
    CostEdge f = e;
    f.src -= e.src > v ? 1 : 0;
    f.dst -= e.dst > v ? 1 : 0;
    h.edges.push_back(std::move(f));
  }
  return h;
}

CostGraph WithoutConfig(const CostGraph& g, int v, int c) {
  CostGraph h = g;
  auto& nc = h.node_cost[static_cast<std::size_t>(v)];
  nc.erase(nc.begin() + c);
  for (std::size_t i = 0; i < g.edges.size(); ++i) {
    const auto& e = g.edges[i];
    if (e.src != v && e.dst != v) continue;
    const int ks = g.configs(e.src), kd = g.configs(e.dst);
    std::vector<double> t;
    for (int a = 0; a < ks; ++a) {
      if (e.src == v && a == c) continue;
      for (int b = 0; b < kd; ++b) {
        if (e.dst == v && b == c) continue;
        t.push_back(e.cost[static_cast<std::size_t>(a * kd + b)]);
      }
    }
    h.edges[i].cost = std::move(t);
  }
  return h;
}

// Greedy shrinking: repeatedly tries to drop a node, a configuration or an edge, or to
// zero a table entry, keeping any change under which the graph still fails. Stops at a
// fixed point or after `budget` of wall time (big graphs make each try expensive).
CostGraph Shrink(CostGraph g, const std::function<bool(const CostGraph&)>& fails,
                 std::chrono::steady_clock::duration budget = std::chrono::seconds(3)) {
  const auto stop = std::chrono::steady_clock::now() + budget;
  auto out_of_time = [&] { return std::chrono::steady_clock::now() > stop; };
  auto attempt = [&](CostGraph h) {
    if (out_of_time() || !fails(h)) return false;
    g = std::move(h);
    return true;
  };
  for (bool progress = true; progress && !out_of_time();) {
    progress = false;
    for (int v = 0; v < g.num_nodes() && g.num_nodes() > 1 && !progress; ++v) {
      progress = attempt(WithoutNode(g, v));
    }
    for (int v = 0; v < g.num_nodes() && !progress; ++v) {
      for (int c = 0; c < g.configs(v) && g.configs(v) > 1 && !progress; ++c) {
        progress = attempt(WithoutConfig(g, v, c));
      }
    }
    for (std::size_t i = 0; i < g.edges.size() && !progress; ++i) {
      progress = attempt(WithoutEdge(g, i));
    }
    // Simplify values: zero out entries one at a time.
    for (std::size_t v = 0; v < g.node_cost.size() && !progress; ++v) {
      for (std::size_t c = 0; c < g.node_cost[v].size() && !progress; ++c) {
        if (g.node_cost[v][c] == 0.0) continue;
        CostGraph h = g;
        h.node_cost[v][c] = 0.0;
        progress = attempt(std::move(h));
      }
    }
    for (std::size_t i = 0; i < g.edges.size() && !progress; ++i) {
      for (std::size_t c = 0; c < g.edges[i].cost.size() && !progress; ++c) {
        if (g.edges[i].cost[c] == 0.0) continue;
        CostGraph h = g;
        h.edges[i].cost[c] = 0.0;
        progress = attempt(std::move(h));
      }
    }
  }
  return g;
}

// Checks SolvesExactly(g, opt); on the first failure in a test, also prints a shrunk
// reproduction. `context` names the seed.
void ExpectExactWithShrink(const CostGraph& g, const SearchOptions& opt, const std::string& context, bool& shrunk_once,
                           SearchResult* out = nullptr) {
  auto result = SolvesExactly(g, opt, out);
  EXPECT_TRUE(result) << context;
  if (!result && !shrunk_once) {
    shrunk_once = true;
    const CostGraph small = Shrink(g, [&](const CostGraph& h) { return !static_cast<bool>(SolvesExactly(h, opt)); });
    ADD_FAILURE() << context << ": minimal failing graph (shrunk):\n" << SolvesExactly(small, opt).message();
  }
}

std::string SeedMsg(uint32_t seed) { return "seed " + std::to_string(seed); }

// Fixed shapes are capped so the oracle stays fast.
lt::CostOptions FixedShapeOptions() {
  lt::CostOptions opt;
  opt.max_assignments = 200'000;
  return opt;
}

// ----------------------------------------------------------------------------------
// The oracle itself, against the plainest possible enumeration: recursion over the
// nodes, oracle_cost_of() at every leaf.

void PlainMinimum(const CostGraph& g, std::vector<int>& choice, std::size_t v, double& best, int64_t& count) {
  if (v == choice.size()) {
    best = std::min(best, lt::oracle_cost_of(g, choice));
    ++count;
    return;
  }
  for (int c = 0; c < g.configs(static_cast<int>(v)); ++c) {
    choice[v] = c;
    PlainMinimum(g, choice, v + 1, best, count);
  }
}

TEST(BruteForceOracle, AgreesWithPlainRecursiveEnumeration) {
  for (uint32_t seed = 0; seed < 200; ++seed) {
    std::mt19937 rng(90'000 + seed);
    lt::CostOptions opt;
    opt.max_assignments = 5'000;
    opt.min_cost = -50;
    const CostGraph g =
        seed % 2 ? lt::random_dag(rng, lt::uniform_int(rng, 1, 7), 0.5, opt)
                 : lt::with_random_costs(lt::random_digraph_topology(rng, lt::uniform_int(rng, 2, 7), 0.5), rng, opt);
    std::vector<int> choice(static_cast<std::size_t>(g.num_nodes()), 0);
    double plain = std::numeric_limits<double>::infinity();
    int64_t count = 0;
    PlainMinimum(g, choice, 0, plain, count);
    const lt::OracleResult o = lt::brute_force_minimum(g);
    EXPECT_EQ(o.cost, plain) << SeedMsg(seed) << "\n" << describe(g);
    EXPECT_EQ(o.assignments, count) << SeedMsg(seed);
    EXPECT_EQ(o.assignments, lt::assignment_count(g)) << SeedMsg(seed);
    EXPECT_EQ(lt::oracle_cost_of(g, o.choice), o.cost) << SeedMsg(seed);
  }
}

TEST(BruteForceOracle, HandComputedExample) {
  CostGraph g;
  g.node_cost = {{1, 5}, {2, 0, 7}};
  g.edges.push_back({0, 1, {10, 10, 0, 3, 9, 1}});
  // (0,0)=13 (0,1)=11 (0,2)=8 (1,0)=10 (1,1)=14 (1,2)=13
  const lt::OracleResult o = lt::brute_force_minimum(g);
  EXPECT_EQ(o.cost, 8.0);
  EXPECT_EQ(o.choice, (std::vector<int>{0, 2}));
  EXPECT_EQ(o.assignments, 6);
}

// ----------------------------------------------------------------------------------
// Fixed shapes: exactness.

TEST(SearchExactness, ChainsOfEveryLengthMatchBruteForce) {
  for (int length = 1; length <= 9; ++length) {
    for (uint32_t seed = 0; seed < 20; ++seed) {
      std::mt19937 rng(1000 * static_cast<uint32_t>(length) + seed);
      const CostGraph g = lt::random_chain(rng, length, FixedShapeOptions());
      EXPECT_TRUE(SolvesExactly(g)) << "length " << length << ", " << SeedMsg(seed);
    }
  }
}

TEST(SearchExactness, DiamondMatchesBruteForce) {
  for (uint32_t seed = 0; seed < 50; ++seed) {
    std::mt19937 rng(2000 + seed);
    EXPECT_TRUE(SolvesExactly(lt::random_diamond(rng, FixedShapeOptions()))) << SeedMsg(seed);
  }
}

TEST(SearchExactness, ResidualBlockMatchesBruteForce) {
  for (uint32_t seed = 0; seed < 50; ++seed) {
    std::mt19937 rng(3000 + seed);
    EXPECT_TRUE(SolvesExactly(lt::random_residual_block(rng, FixedShapeOptions()))) << SeedMsg(seed);
  }
}

TEST(SearchExactness, InceptionModuleMatchesBruteForce) {
  // 13 nodes: configuration counts are capped so the oracle enumerates at most ~1e6.
  lt::CostOptions opt;
  opt.max_assignments = 1'000'000;
  for (uint32_t seed = 0; seed < 8; ++seed) {
    std::mt19937 rng(4000 + seed);
    EXPECT_TRUE(SolvesExactly(lt::random_inception(rng, opt))) << SeedMsg(seed);
  }
}

TEST(SearchExactness, CompleteBipartiteK22MatchesBruteForce) {
  for (uint32_t seed = 0; seed < 50; ++seed) {
    std::mt19937 rng(5000 + seed);
    EXPECT_TRUE(SolvesExactly(lt::random_k22(rng, FixedShapeOptions()))) << SeedMsg(seed);
  }
}

TEST(SearchExactness, CompleteBipartiteK33MatchesBruteForce) {
  for (uint32_t seed = 0; seed < 20; ++seed) {
    std::mt19937 rng(5500 + seed);
    const CostGraph g = lt::with_random_costs(lt::complete_bipartite_topology(3, 3), rng, FixedShapeOptions());
    EXPECT_TRUE(SolvesExactly(g)) << SeedMsg(seed);
  }
}

TEST(SearchExactness, WheatstoneBridgeMatchesBruteForce) {
  for (uint32_t seed = 0; seed < 50; ++seed) {
    std::mt19937 rng(6000 + seed);
    EXPECT_TRUE(SolvesExactly(lt::random_wheatstone(rng, FixedShapeOptions()))) << SeedMsg(seed);
  }
}

TEST(SearchExactness, GridDagThatDoesNotReduceMatchesBruteForce) {
  // 3x3 grid, (i,j) → (i+1,j) and (i,j) → (i,j+1): not series-parallel.
  lt::Topology t{9, {}};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      if (i + 1 < 3) t.edges.emplace_back(3 * i + j, 3 * (i + 1) + j);
      if (j + 1 < 3) t.edges.emplace_back(3 * i + j, 3 * i + j + 1);
    }
  }
  for (uint32_t seed = 0; seed < 10; ++seed) {
    std::mt19937 rng(6500 + seed);
    EXPECT_TRUE(SolvesExactly(lt::with_random_costs(t, rng, FixedShapeOptions()))) << SeedMsg(seed);
  }
}

TEST(SearchExactness, LongChainMatchesIndependentDynamicProgram) {
  // Too long to enumerate; checked against a direct left-to-right DP over the chain.
  for (uint32_t seed = 0; seed < 10; ++seed) {
    std::mt19937 rng(7000 + seed);
    const int length = 80;
    const CostGraph g = lt::random_chain(rng, length);
    // best[b] = cheapest prefix ending with the current node in configuration b.
    std::vector<double> best = g.node_cost[0];
    for (int v = 1; v < length; ++v) {
      const auto& e = g.edges[static_cast<std::size_t>(v - 1)];
      ASSERT_EQ(e.src, v - 1);
      ASSERT_EQ(e.dst, v);
      const int ks = g.configs(v - 1), kd = g.configs(v);
      std::vector<double> next(static_cast<std::size_t>(kd), std::numeric_limits<double>::infinity());
      for (int b = 0; b < kd; ++b) {
        for (int a = 0; a < ks; ++a) {
          next[static_cast<std::size_t>(b)] =
              std::min(next[static_cast<std::size_t>(b)],
                       best[static_cast<std::size_t>(a)] + e.cost[static_cast<std::size_t>(a * kd + b)]);
        }
        next[static_cast<std::size_t>(b)] += g.node_cost[static_cast<std::size_t>(v)][static_cast<std::size_t>(b)];
      }
      best = std::move(next);
    }
    const double expected = *std::min_element(best.begin(), best.end());
    for (const SearchOptions& opt : {kDefault, kNaive}) {
      SearchResult r;
      ASSERT_TRUE(RunsConsistently(g, opt, &r)) << SeedMsg(seed);
      EXPECT_EQ(r.cost, expected) << SeedMsg(seed) << (opt.naive ? " (naive)" : "");
      EXPECT_EQ(r.stats.remaining_nodes, 2) << SeedMsg(seed);
    }
  }
}

// ----------------------------------------------------------------------------------
// Property tests over random graphs.

TEST(SearchProperty, RandomSeriesParallelGraphsMatchBruteForce) {
  lt::CostOptions opt;
  opt.max_assignments = 40'000;
  bool shrunk = false;
  int checked = 0;
  for (uint32_t seed = 0; seed < 400; ++seed) {
    std::mt19937 rng(10'000 + seed);
    const int n = lt::uniform_int(rng, 2, 12);
    const CostGraph g = lt::random_series_parallel(rng, n, opt);
    ASSERT_EQ(g.num_nodes(), n) << SeedMsg(seed);
    ExpectExactWithShrink(g, kDefault, SeedMsg(seed), shrunk);
    ++checked;
  }
  EXPECT_GE(checked, 300);
}

TEST(SearchProperty, RandomSeriesParallelGraphsReduceToTheirTwoTerminals) {
  // Every two-terminal series-parallel DAG reduces to a single edge by node elimination
  // (in = out = 1) and edge elimination (parallel edges): no conditioning is needed.
  for (uint32_t seed = 0; seed < 300; ++seed) {
    std::mt19937 rng(20'000 + seed);
    const int n = lt::uniform_int(rng, 2, 30);
    const CostGraph g = lt::random_series_parallel(rng, n);  // no cap: no oracle here
    SearchResult r;
    ASSERT_TRUE(RunsConsistently(g, kDefault, &r)) << SeedMsg(seed);
    EXPECT_EQ(r.stats.remaining_nodes, 2) << SeedMsg(seed) << "\n" << describe(g);
    EXPECT_EQ(r.stats.conditioned_nodes, 0) << SeedMsg(seed) << "\n" << describe(g);
  }
}

TEST(SearchProperty, RandomGeneralDagsMatchBruteForce) {
  // Random edges i < j on up to 8 nodes: mostly not series-parallel, so these exercise
  // the enumeration / conditioning fallback.
  lt::CostOptions opt;
  opt.max_assignments = 100'000;
  bool shrunk = false;
  int non_reducing = 0;
  for (uint32_t seed = 0; seed < 120; ++seed) {
    std::mt19937 rng(30'000 + seed);
    const int n = lt::uniform_int(rng, 1, 8);
    const double p = std::uniform_real_distribution<double>(0.2, 0.9)(rng);
    const CostGraph g = lt::random_dag(rng, n, p, opt);
    SearchResult r;
    r.stats.remaining_nodes = -1;
    ExpectExactWithShrink(g, kDefault, SeedMsg(seed), shrunk, &r);
    if (r.stats.remaining_nodes > 2) ++non_reducing;
  }
  // The point of this test is the fallback: make sure it actually ran often.
  EXPECT_GE(non_reducing, 30);
}

TEST(SearchProperty, RandomGeneralDagsWithNegativeCostsMatchBruteForce) {
  // The objective is well defined for any real costs; solve() claims the exact minimum.
  lt::CostOptions opt;
  opt.max_assignments = 50'000;
  opt.min_cost = -60;
  opt.max_cost = 60;
  bool shrunk = false;
  for (uint32_t seed = 0; seed < 60; ++seed) {
    std::mt19937 rng(35'000 + seed);
    const int n = lt::uniform_int(rng, 1, 8);
    const CostGraph g = lt::random_dag(rng, n, 0.5, opt);
    ExpectExactWithShrink(g, kDefault, SeedMsg(seed), shrunk);
  }
}

TEST(SearchProperty, NegativeEdgeCostsMatchBruteForce) {
  // Node costs in [0, 99], edge costs in [-99, 0]: the bounds of a pruned min-plus
  // product must hold when table entries are negative.
  bool shrunk = false;
  for (uint32_t seed = 0; seed < 100; ++seed) {
    std::mt19937 rng(36'000 + seed);
    lt::CostOptions opt;
    opt.max_assignments = 40'000;
    CostGraph g = seed % 3 == 0 ? lt::random_chain(rng, lt::uniform_int(rng, 3, 7), opt)
                                : lt::random_series_parallel(rng, lt::uniform_int(rng, 3, 12), opt);
    for (auto& e : g.edges)
      for (auto& x : e.cost) x = -x;
    ExpectExactWithShrink(g, kDefault, SeedMsg(seed), shrunk);
  }
}

TEST(SearchProperty, DyadicFractionalCostsMatchBruteForce) {
  // Multiples of 1/8 are still exact in double; catches bounds that assume integers.
  bool shrunk = false;
  for (uint32_t seed = 0; seed < 100; ++seed) {
    std::mt19937 rng(36'500 + seed);
    lt::CostOptions opt;
    opt.max_assignments = 40'000;
    opt.max_cost = 40;
    CostGraph g = seed % 2 ? lt::random_series_parallel(rng, lt::uniform_int(rng, 3, 12), opt)
                           : lt::random_dag(rng, lt::uniform_int(rng, 2, 8), 0.5, opt);
    for (auto& t : g.node_cost)
      for (auto& x : t) x /= 8.0;
    for (auto& e : g.edges)
      for (auto& x : e.cost) x /= 8.0;
    ExpectExactWithShrink(g, kDefault, SeedMsg(seed), shrunk);
  }
}

TEST(SearchProperty, NaiveVariantGivesTheSameCostAsDefault) {
  bool shrunk = false;
  // Small graphs: both variants against the oracle.
  for (uint32_t seed = 0; seed < 150; ++seed) {
    std::mt19937 rng(40'000 + seed);
    lt::CostOptions opt;
    opt.max_assignments = 40'000;
    const CostGraph g = seed % 2 == 0 ? lt::random_series_parallel(rng, lt::uniform_int(rng, 2, 12), opt)
                                      : lt::random_dag(rng, lt::uniform_int(rng, 1, 8), 0.5, opt);
    ExpectExactWithShrink(g, kNaive, SeedMsg(seed) + " (naive)", shrunk);
  }
  // Large graphs (no oracle): the two variants agree with each other.
  for (uint32_t seed = 0; seed < 30; ++seed) {
    std::mt19937 rng(41'000 + seed);
    const CostGraph g = lt::random_series_parallel(rng, lt::uniform_int(rng, 20, 60));
    SearchResult fast, naive;
    ASSERT_TRUE(RunsConsistently(g, kDefault, &fast)) << SeedMsg(seed);
    ASSERT_TRUE(RunsConsistently(g, kNaive, &naive)) << SeedMsg(seed);
    EXPECT_EQ(fast.cost, naive.cost) << SeedMsg(seed);
  }
  // The fixed shapes.
  std::mt19937 rng(42'000);
  for (const CostGraph& g : {lt::random_chain(rng, 7, FixedShapeOptions()), lt::random_diamond(rng),
                             lt::random_residual_block(rng), lt::random_k22(rng), lt::random_wheatstone(rng)}) {
    SearchResult fast, naive;
    ASSERT_TRUE(SolvesExactly(g, kDefault, &fast));
    ASSERT_TRUE(SolvesExactly(g, kNaive, &naive));
    EXPECT_EQ(fast.cost, naive.cost);
  }
}

TEST(SearchProperty, RandomDirectedGraphsWithCyclesMatchBruteForce) {
  // Nothing in search.h requires a DAG: random orientations, two-cycles included, so
  // merged edges sometimes run against an existing edge and must be transposed.
  lt::CostOptions opt;
  opt.max_assignments = 100'000;
  bool shrunk = false;
  for (uint32_t seed = 0; seed < 80; ++seed) {
    std::mt19937 rng(37'000 + seed);
    const int n = lt::uniform_int(rng, 2, 8);
    const double p = std::uniform_real_distribution<double>(0.2, 0.8)(rng);
    const CostGraph g = lt::with_random_costs(lt::random_digraph_topology(rng, n, p, 0.15), rng, opt);
    ExpectExactWithShrink(g, kDefault, SeedMsg(seed), shrunk);
  }
}

// ----------------------------------------------------------------------------------
// Graphs whose irreducible remainder is too large to enumerate outright (over 2^20
// joint assignments), so the search has to fold leaves and condition on nodes. They
// are kept just small enough (a few million assignments) for the oracle.

TEST(SearchFallback, LargeK22K33AndWheatstoneMatchBruteForce) {
  const std::vector<std::pair<lt::Topology, std::vector<int>>> cases = {
      {lt::k22_topology(), {33, 35, 34, 36}},
      {lt::wheatstone_topology(), {36, 33, 35, 34}},
      {lt::complete_bipartite_topology(3, 3), {11, 10, 12, 11, 10, 12}},
      {lt::complete_bipartite_topology(2, 3), {24, 22, 20, 10, 11}},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    std::mt19937 rng(80'000 + static_cast<uint32_t>(i));
    const CostGraph g = lt::with_random_costs(cases[i].first, cases[i].second, rng);
    const lt::OracleResult best = lt::brute_force_minimum(g);
    SearchResult r;
    EXPECT_TRUE(SolvesTo(g, best, kDefault, &r)) << "case " << i;
    EXPECT_GT(r.stats.conditioned_nodes, 0) << "case " << i;
    EXPECT_TRUE(SolvesTo(g, best, kNaive)) << "case " << i << " (naive)";
  }
}

TEST(SearchFallback, NestedConditioningMatchesBruteForce) {
  // A two-configuration hub feeding every node of a large K2,2: after fixing the hub the
  // K2,2 alone is still too large to enumerate, so conditioning recurses.
  lt::Topology t = lt::k22_topology();  // nodes 0..3
  for (int v = 0; v < 4; ++v) t.edges.emplace_back(4, v);
  t.num_nodes = 5;
  for (uint32_t seed = 0; seed < 2; ++seed) {
    std::mt19937 rng(81'000 + seed);
    const CostGraph g = lt::with_random_costs(t, {33, 33, 32, 34, 2}, rng);
    SearchResult r;
    EXPECT_TRUE(SolvesExactly(g, kDefault, &r)) << SeedMsg(seed);
    EXPECT_GT(r.stats.conditioned_nodes, 0) << SeedMsg(seed);
  }
}

TEST(SearchFallback, LeavesAndIsolatedNodesAroundALargeCoreMatchBruteForce) {
  // A large K2,2 core (0..3) with a pendant source x → 0, a pendant sink 3 → y, a
  // pendant path p → q → 1 (q reduces by node elimination, p is then a leaf), and an
  // isolated node z. Only the core is irreducible; the rest must be folded in and
  // recovered correctly.
  const lt::Topology t{9, {{0, 2}, {0, 3}, {1, 2}, {1, 3}, {4, 0}, {3, 5}, {6, 7}, {7, 1}}};
  // nodes: 0..3 core, 4 = x, 5 = y, 6 = p, 7 = q, 8 = z
  std::mt19937 rng(82'000);
  // Core: 33·32·33·31 = 1,080,288 joint assignments; 16 times that in all.
  const CostGraph g = lt::with_random_costs(t, {33, 32, 33, 31, 2, 2, 2, 1, 2}, rng);
  const lt::OracleResult best = lt::brute_force_minimum(g);
  SearchResult r;
  EXPECT_TRUE(SolvesTo(g, best, kDefault, &r));
  EXPECT_EQ(r.stats.remaining_nodes, 4 + 1 + 1 + 1 + 1);  // q is eliminated
  EXPECT_GT(r.stats.conditioned_nodes, 0);
  EXPECT_TRUE(SolvesTo(g, best, kNaive)) << "(naive)";
}

TEST(SearchFallback, PiecesThatSplitOffUnderConditioningMatchBruteForce) {
  // A hub h with edges out to every node of a large K2,2 core (0..3), and in from z1 and
  // z3 of a small tree z1 → z2 ← z3. Nothing reduces at first; once h is fixed, the
  // tree hangs off nothing but its (now branch-dependent) node costs: its leaves fold
  // into z2, which ends isolated, while the core still needs conditioning.
  // nodes: 0..3 core, 4 = h, 5 = z1, 6 = z2, 7 = z3.
  const lt::Topology t{
      8, {{0, 2}, {0, 3}, {1, 2}, {1, 3}, {4, 0}, {4, 1}, {4, 2}, {4, 3}, {5, 6}, {7, 6}, {5, 4}, {7, 4}}};
  for (uint32_t seed = 0; seed < 2; ++seed) {
    std::mt19937 rng(82'500 + seed);
    // Core: 32·32·32·33 = 1,081,344 joint assignments; 16 times that in all.
    const CostGraph g = lt::with_random_costs(t, {32, 32, 32, 33, 2, 2, 2, 2}, rng);
    SearchResult r;
    EXPECT_TRUE(SolvesExactly(g, kDefault, &r)) << SeedMsg(seed);
    EXPECT_EQ(r.stats.remaining_nodes, 8) << SeedMsg(seed);
    EXPECT_GT(r.stats.conditioned_nodes, 0) << SeedMsg(seed);
  }
}

TEST(SearchFallback, RandomGraphsAboveTheEnumerationSizeMatchBruteForce) {
  bool shrunk = false;
  int conditioned = 0;
  for (uint32_t seed = 0; seed < 16; ++seed) {
    std::mt19937 rng(83'000 + seed);
    const int n = lt::uniform_int(rng, 5, 7);
    const lt::Topology t = seed % 2 ? lt::random_dag_topology(rng, n, 0.7) : lt::random_digraph_topology(rng, n, 0.7);
    const auto configs = lt::random_config_counts_with_product(rng, n, 1'100'000, 2'300'000, 40);
    const CostGraph g = lt::with_random_costs(t, configs, rng);
    SearchResult r;
    ExpectExactWithShrink(g, kDefault, SeedMsg(seed), shrunk, &r);
    if (r.stats.conditioned_nodes > 0) ++conditioned;
  }
  EXPECT_GE(conditioned, 4) << "too few graphs reached the conditioning fallback";
}

// ----------------------------------------------------------------------------------
// Edge cases.

TEST(SearchEdgeCases, ExplicitParallelEdgesAreSummed) {
  std::mt19937 rng(50'000);
  // Three parallel edges between two nodes.
  {
    const CostGraph g = lt::with_random_costs(lt::Topology{2, {{0, 1}, {0, 1}, {0, 1}}}, {3, 4}, rng);
    EXPECT_TRUE(SolvesExactly(g));
  }
  // Parallel edges in the middle of a chain: x → a ⇉ b → y.
  for (uint32_t seed = 0; seed < 30; ++seed) {
    std::mt19937 r(50'100 + seed);
    const CostGraph g =
        lt::with_random_costs(lt::Topology{4, {{0, 1}, {1, 2}, {1, 2}, {2, 3}}}, r, FixedShapeOptions());
    EXPECT_TRUE(SolvesExactly(g)) << SeedMsg(seed);
  }
  // A hand-made case where neither edge alone, only their sum, picks the optimum.
  {
    CostGraph g;
    g.node_cost = {{0, 0}, {0, 0}};
    g.edges.push_back({0, 1, {0, 10, 10, 5}});   // alone: (0,0) best
    g.edges.push_back({0, 1, {10, 10, 10, 0}});  // alone: (1,1) best; sum: (1,1) = 5
    SearchResult r;
    ASSERT_TRUE(SolvesExactly(g, kDefault, &r));
    EXPECT_EQ(r.cost, 5.0);
    EXPECT_EQ(r.choice, (std::vector<int>{1, 1}));
  }
}

TEST(SearchEdgeCases, AntiParallelEdgesBetweenTwoNodes) {
  // a → b and b → a: tables are indexed (src config, dst config), so summing them needs
  // a transpose. The objective is still well defined.
  for (uint32_t seed = 0; seed < 30; ++seed) {
    std::mt19937 rng(51'000 + seed);
    const CostGraph g = lt::with_random_costs(lt::Topology{2, {{0, 1}, {1, 0}}}, rng);
    EXPECT_TRUE(SolvesExactly(g)) << SeedMsg(seed);
  }
  CostGraph g;
  g.node_cost = {{0, 0, 0}, {0, 0}};
  g.edges.push_back({0, 1, {9, 9, 9, 9, 9, 0}});  // (a=2, b=1) → 0
  g.edges.push_back({1, 0, {9, 9, 9, 9, 9, 0}});  // (b=1, a=2) → 0
  SearchResult r;
  ASSERT_TRUE(SolvesExactly(g, kDefault, &r));
  EXPECT_EQ(r.cost, 0.0);
  EXPECT_EQ(r.choice, (std::vector<int>{2, 1}));
}

TEST(SearchEdgeCases, SingleNodePicksItsCheapestConfiguration) {
  CostGraph g;
  g.node_cost = {{7, 3, 9, 3.5}};
  SearchResult r;
  ASSERT_TRUE(SolvesExactly(g, kDefault, &r));
  EXPECT_EQ(r.cost, 3.0);
  EXPECT_EQ(r.choice, (std::vector<int>{1}));

  CostGraph one;
  one.node_cost = {{42}};
  ASSERT_TRUE(SolvesExactly(one, kDefault, &r));
  EXPECT_EQ(r.cost, 42.0);
  EXPECT_EQ(r.choice, (std::vector<int>{0}));
  EXPECT_TRUE(SolvesExactly(one, kNaive));
}

TEST(SearchEdgeCases, TwoDisconnectedComponentsAreSolvedIndependently) {
  for (uint32_t seed = 0; seed < 40; ++seed) {
    std::mt19937 rng(52'000 + seed);
    lt::CostOptions opt;
    opt.max_assignments = 300;
    // A series-parallel component and a non-reducing one, interleaved in node order.
    const CostGraph a = lt::random_series_parallel(rng, lt::uniform_int(rng, 2, 6), opt);
    const CostGraph b = seed % 2 ? lt::random_k22(rng, opt) : lt::random_wheatstone(rng, opt);
    CostGraph g;
    const int n = a.num_nodes() + b.num_nodes();
    std::vector<int> map_a, map_b;
    for (int v = 0; v < n; ++v) {
      const bool a_has_room = static_cast<int>(map_a.size()) < a.num_nodes();
      const bool b_has_room = static_cast<int>(map_b.size()) < b.num_nodes();
      if (!b_has_room || (a_has_room && v % 2 == 0)) {
        map_a.push_back(v);
      } else {
        map_b.push_back(v);
      }
    }
    g.node_cost.resize(static_cast<std::size_t>(n));
    for (int v = 0; v < a.num_nodes(); ++v)
      g.node_cost[static_cast<std::size_t>(map_a[static_cast<std::size_t>(v)])] =
          a.node_cost[static_cast<std::size_t>(v)];
    for (int v = 0; v < b.num_nodes(); ++v)
      g.node_cost[static_cast<std::size_t>(map_b[static_cast<std::size_t>(v)])] =
          b.node_cost[static_cast<std::size_t>(v)];
    for (const auto& e : a.edges)
      g.edges.push_back({map_a[static_cast<std::size_t>(e.src)], map_a[static_cast<std::size_t>(e.dst)], e.cost});
    for (const auto& e : b.edges)
      g.edges.push_back({map_b[static_cast<std::size_t>(e.src)], map_b[static_cast<std::size_t>(e.dst)], e.cost});

    SearchResult whole, ra, rb;
    ASSERT_TRUE(SolvesExactly(g, kDefault, &whole)) << SeedMsg(seed);
    ASSERT_TRUE(SolvesExactly(a, kDefault, &ra)) << SeedMsg(seed);
    ASSERT_TRUE(SolvesExactly(b, kDefault, &rb)) << SeedMsg(seed);
    EXPECT_EQ(whole.cost, ra.cost + rb.cost) << SeedMsg(seed);
  }
  // Two isolated nodes, and a chain next to an isolated node.
  CostGraph iso;
  iso.node_cost = {{5, 2}, {1, 8, 0}};
  SearchResult r;
  ASSERT_TRUE(SolvesExactly(iso, kDefault, &r));
  EXPECT_EQ(r.cost, 2.0);
  std::mt19937 rng(52'999);
  CostGraph chain_plus_one = lt::random_chain(rng, 5, FixedShapeOptions());
  chain_plus_one.node_cost.push_back({4, 1, 6});
  EXPECT_TRUE(SolvesExactly(chain_plus_one));
}

TEST(SearchEdgeCases, NodesWithASingleConfiguration) {
  // All nodes single-configuration: the only assignment is all zeros.
  for (uint32_t seed = 0; seed < 20; ++seed) {
    std::mt19937 rng(53'000 + seed);
    lt::CostOptions opt;
    opt.min_configs = opt.max_configs = 1;
    const CostGraph g =
        seed % 2 ? lt::random_dag(rng, 8, 0.5, opt) : lt::random_series_parallel(rng, lt::uniform_int(rng, 2, 20), opt);
    SearchResult r;
    ASSERT_TRUE(SolvesExactly(g, kDefault, &r)) << SeedMsg(seed);
    EXPECT_EQ(r.choice, std::vector<int>(static_cast<std::size_t>(g.num_nodes()), 0)) << SeedMsg(seed);
  }
  // Single-configuration nodes mixed with wider ones (1 x k and k x 1 tables).
  for (uint32_t seed = 0; seed < 40; ++seed) {
    std::mt19937 rng(53'500 + seed);
    const lt::Topology t = seed % 2 ? lt::residual_block_topology() : lt::wheatstone_topology();
    std::vector<int> configs;
    for (int v = 0; v < t.num_nodes; ++v) configs.push_back(v % 2 == 0 ? 1 : lt::uniform_int(rng, 2, 5));
    if (seed % 4 >= 2) std::reverse(configs.begin(), configs.end());
    EXPECT_TRUE(SolvesExactly(lt::with_random_costs(t, configs, rng))) << SeedMsg(seed);
  }
}

TEST(SearchEdgeCases, LargeValuesInTables) {
  // Entries near 1e12 ("practically forbidden") mixed with small ones. All sums stay
  // integers far below 2^53, so they are exact.
  for (uint32_t seed = 0; seed < 60; ++seed) {
    std::mt19937 rng(54'000 + seed);
    lt::CostOptions opt;
    opt.max_assignments = 40'000;
    CostGraph g = seed % 2 ? lt::random_series_parallel(rng, lt::uniform_int(rng, 2, 12), opt)
                           : lt::random_dag(rng, lt::uniform_int(rng, 2, 8), 0.5, opt);
    auto inflate = [&](std::vector<double>& t) {
      for (auto& x : t)
        if (lt::coin(rng, 0.4)) x += 1e12 * static_cast<double>(lt::uniform_int(rng, 1, 9));
    };
    for (auto& t : g.node_cost) inflate(t);
    for (auto& e : g.edges) inflate(e.cost);
    EXPECT_TRUE(SolvesExactly(g)) << SeedMsg(seed);
    EXPECT_TRUE(SolvesExactly(g, kNaive)) << SeedMsg(seed) << " (naive)";
  }
  // Every entry huge, differences small.
  std::mt19937 rng(54'999);
  lt::CostOptions opt;
  opt.min_cost = 1'000'000'000;
  opt.max_cost = 1'000'000'050;
  EXPECT_TRUE(SolvesExactly(lt::random_residual_block(rng, opt)));
  EXPECT_TRUE(SolvesExactly(lt::random_k22(rng, opt)));
}

TEST(SearchEdgeCases, InfiniteEntriesMarkForbiddenCombinations) {
  // +inf entries (forbidden configurations / pairs) mixed with finite ones.
  constexpr double kInf = std::numeric_limits<double>::infinity();
  bool shrunk = false;
  for (uint32_t seed = 0; seed < 60; ++seed) {
    std::mt19937 rng(54'500 + seed);
    lt::CostOptions opt;
    opt.max_assignments = 40'000;
    CostGraph g = seed % 2 ? lt::random_series_parallel(rng, lt::uniform_int(rng, 2, 12), opt)
                           : lt::random_dag(rng, lt::uniform_int(rng, 2, 8), 0.5, opt);
    for (auto& t : g.node_cost)
      for (auto& x : t)
        if (lt::coin(rng, 0.15)) x = kInf;
    for (auto& e : g.edges)
      for (auto& x : e.cost)
        if (lt::coin(rng, 0.25)) x = kInf;
    ExpectExactWithShrink(g, kDefault, SeedMsg(seed), shrunk);
    ExpectExactWithShrink(g, kNaive, SeedMsg(seed) + " (naive)", shrunk);
  }
}

TEST(SearchEdgeCases, AllZeroCostsGiveZeroWithAValidChoice) {
  std::mt19937 rng(55'000);
  lt::CostOptions opt;
  opt.min_cost = opt.max_cost = 0;
  for (const CostGraph& g :
       {lt::random_inception(rng, opt), lt::random_k22(rng, opt), lt::random_dag(rng, 8, 0.6, opt)}) {
    SearchResult r;
    ASSERT_TRUE(RunsConsistently(g, kDefault, &r));
    EXPECT_EQ(r.cost, 0.0);
  }
}

// ----------------------------------------------------------------------------------
// Options: deadline.

TEST(SearchOptionsTest, AlreadyPassedDeadlineTimesOut) {
  std::mt19937 rng(60'000);
  SearchOptions opt;
  opt.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  for (const CostGraph& g : {lt::random_dag(rng, 8, 0.7), lt::random_k22(rng), lt::random_series_parallel(rng, 30),
                             lt::random_chain(rng, 10)}) {
    SearchResult r;
    ASSERT_NO_THROW(r = solve(g, opt));
    EXPECT_TRUE(r.timed_out) << describe(g);
    EXPECT_TRUE(r.choice.empty()) << "choice must be empty when timed out";
  }
}

TEST(SearchOptionsTest, DeadlineDuringALongSearchStopsIt) {
  // A complete DAG on 10 nodes with 20 configurations each: treewidth 9, so any exact
  // method of this kind needs on the order of 20^9 steps, far more than the 20 ms
  // allowed. The search must notice the deadline and give up promptly.
  std::mt19937 rng(60'200);
  const CostGraph g = lt::with_random_costs(lt::random_dag_topology(rng, 10, 1.0, 0.0), std::vector<int>(10, 20), rng);
  SearchOptions opt;
  const auto start = std::chrono::steady_clock::now();
  opt.deadline = start + std::chrono::milliseconds(20);
  const SearchResult r = solve(g, opt);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(r.timed_out);
  EXPECT_TRUE(r.choice.empty());
  EXPECT_LT(elapsed, std::chrono::seconds(2));
}

TEST(SearchOptionsTest, FarDeadlineDoesNotTimeOut) {
  std::mt19937 rng(60'500);
  SearchOptions opt;
  opt.deadline = std::chrono::steady_clock::now() + std::chrono::hours(1);
  EXPECT_TRUE(SolvesExactly(lt::random_dag(rng, 7, 0.7, FixedShapeOptions()), opt));
  EXPECT_TRUE(SolvesExactly(lt::random_residual_block(rng, FixedShapeOptions()), opt));
}

// ----------------------------------------------------------------------------------
// Elimination statistics.

TEST(SearchStatsTest, ChainReducesToTwoNodes) {
  for (int length = 2; length <= 40; ++length) {
    std::mt19937 rng(70'000 + static_cast<uint32_t>(length));
    const CostGraph g = lt::random_chain(rng, length);
    SearchResult r;
    ASSERT_TRUE(RunsConsistently(g, kDefault, &r)) << "length " << length;
    EXPECT_EQ(r.stats.remaining_nodes, 2) << "length " << length;
    EXPECT_EQ(r.stats.node_eliminations, length - 2) << "length " << length;
    EXPECT_EQ(r.stats.conditioned_nodes, 0) << "length " << length;
  }
}

TEST(SearchStatsTest, ResidualBlockReducesToTwoNodes) {
  for (uint32_t seed = 0; seed < 10; ++seed) {
    std::mt19937 rng(71'000 + seed);
    SearchResult r;
    ASSERT_TRUE(SolvesExactly(lt::random_residual_block(rng, FixedShapeOptions()), kDefault, &r));
    EXPECT_EQ(r.stats.remaining_nodes, 2) << SeedMsg(seed);
    // b and c, then a, then add: the skip edge must be merged with the eliminated path.
    EXPECT_EQ(r.stats.node_eliminations, 4) << SeedMsg(seed);
    EXPECT_GE(r.stats.edge_eliminations, 1) << SeedMsg(seed);
    EXPECT_EQ(r.stats.conditioned_nodes, 0) << SeedMsg(seed);
  }
}

TEST(SearchStatsTest, K22DoesNotReduce) {
  for (uint32_t seed = 0; seed < 10; ++seed) {
    std::mt19937 rng(72'000 + seed);
    SearchResult r;
    ASSERT_TRUE(SolvesExactly(lt::random_k22(rng), kDefault, &r));
    EXPECT_EQ(r.stats.remaining_nodes, 4) << SeedMsg(seed);
    EXPECT_EQ(r.stats.node_eliminations, 0) << SeedMsg(seed);
  }
}

// With at most 5 configurations per node a K2,2 has at most 625 joint assignments,
// which the search may simply enumerate ("if few enough nodes remain"). With 40
// configurations per node (2,560,000 joint assignments) it must condition instead.
TEST(SearchStatsTest, K22TooLargeToEnumerateIsConditioned) {
  for (uint32_t seed = 0; seed < 2; ++seed) {
    std::mt19937 rng(72'500 + seed);
    const CostGraph g = lt::with_random_costs(lt::k22_topology(), {40, 40, 40, 40}, rng);
    const lt::OracleResult best = lt::brute_force_minimum(g);
    for (const SearchOptions& opt : {kDefault, kNaive}) {
      SearchResult r;
      ASSERT_TRUE(SolvesTo(g, best, opt, &r)) << SeedMsg(seed);
      EXPECT_EQ(r.stats.remaining_nodes, 4) << SeedMsg(seed);
      EXPECT_GT(r.stats.conditioned_nodes, 0) << SeedMsg(seed);
    }
  }
}

TEST(SearchStatsTest, ExplicitParallelEdgesCountAsEdgeEliminations) {
  std::mt19937 rng(72'900);
  const CostGraph g = lt::with_random_costs(lt::Topology{2, {{0, 1}, {0, 1}, {0, 1}}}, {3, 4}, rng);
  SearchResult r;
  ASSERT_TRUE(SolvesExactly(g, kDefault, &r));
  EXPECT_GE(r.stats.edge_eliminations, 1) << "three parallel edges were summed into one";
}

TEST(SearchStatsTest, TableBytesPeakIsReported) {
  std::mt19937 rng(73'000);
  SearchResult r;
  ASSERT_TRUE(SolvesExactly(lt::random_residual_block(rng), kDefault, &r));
  EXPECT_GT(r.stats.table_bytes_peak, 0);
}

// ----------------------------------------------------------------------------------
// Malformed input.

CostGraph TwoNodeGraph() {
  CostGraph g;
  g.node_cost = {{1, 2}, {3, 4, 5}};
  g.edges.push_back({0, 1, {0, 1, 2, 3, 4, 5}});
  return g;
}

TEST(SearchValidation, EdgeToAMissingNodeThrows) {
  for (const SearchOptions& opt : {kDefault, kNaive}) {
    CostGraph g = TwoNodeGraph();
    g.edges.push_back({0, 2, {0, 0}});
    EXPECT_THROW(solve(g, opt), std::invalid_argument);
    g = TwoNodeGraph();
    g.edges.push_back({-1, 1, {0, 0, 0}});
    EXPECT_THROW(solve(g, opt), std::invalid_argument);
    g = TwoNodeGraph();
    g.edges.push_back({7, 8, {}});
    EXPECT_THROW(solve(g, opt), std::invalid_argument);
  }
}

TEST(SearchValidation, EdgeTableOfTheWrongSizeThrows) {
  for (const SearchOptions& opt : {kDefault, kNaive}) {
    CostGraph g = TwoNodeGraph();
    g.edges[0].cost.pop_back();  // 5 entries for a 2 x 3 table
    EXPECT_THROW(solve(g, opt), std::invalid_argument);
    g = TwoNodeGraph();
    g.edges[0].cost.push_back(0);  // 7 entries
    EXPECT_THROW(solve(g, opt), std::invalid_argument);
    g = TwoNodeGraph();
    g.edges.push_back({1, 0, {0, 1, 2, 3, 4}});  // 5 entries for 3 x 2
    EXPECT_THROW(solve(g, opt), std::invalid_argument);
    g = TwoNodeGraph();
    g.edges[0].cost.clear();
    EXPECT_THROW(solve(g, opt), std::invalid_argument);
  }
}

TEST(SearchValidation, NodeWithZeroConfigurationsThrows) {
  for (const SearchOptions& opt : {kDefault, kNaive}) {
    CostGraph g = TwoNodeGraph();
    g.node_cost.push_back({});  // isolated node with no configurations
    EXPECT_THROW(solve(g, opt), std::invalid_argument);
    CostGraph h;
    h.node_cost = {{}};
    EXPECT_THROW(solve(h, opt), std::invalid_argument);
    CostGraph k;  // with an (empty) edge table to it
    k.node_cost = {{1, 2}, {}};
    k.edges.push_back({0, 1, {}});
    EXPECT_THROW(solve(k, opt), std::invalid_argument);
  }
}

// ----------------------------------------------------------------------------------
// The builder API.

TEST(CostGraphApi, AddNodeAndAddEdgeBuildTheSameGraph) {
  CostGraph g;
  EXPECT_EQ(g.add_node({1, 2}), 0);
  EXPECT_EQ(g.add_node({3, 4, 5}), 1);
  EXPECT_EQ(g.add_node({6}), 2);
  g.add_edge(0, 1, {0, 1, 2, 3, 4, 5});
  g.add_edge(1, 2, {7, 8, 9});
  ASSERT_EQ(g.num_nodes(), 3);
  EXPECT_EQ(g.configs(1), 3);
  ASSERT_EQ(g.edges.size(), 2u);
  EXPECT_EQ(g.edges[1].src, 1);
  EXPECT_EQ(g.edges[1].dst, 2);
  EXPECT_EQ(g.edges[1].cost, (std::vector<double>{7, 8, 9}));
  SearchResult r;
  ASSERT_TRUE(SolvesExactly(g, kDefault, &r));
  EXPECT_EQ(r.cost, 1.0 + 3.0 + 6.0 + 0.0 + 7.0);
}

}  // namespace
