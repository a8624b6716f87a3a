// Node elimination on a chain of layers with C configurations each: the C^3 min-plus
// product per eliminated node, bounded (default) against naive.
#include <benchmark/benchmark.h>

#include <random>

#include "planner/search.h"

namespace {

layerplan::CostGraph chain(int nodes, int configs) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> cost(0.0, 1.0);
  layerplan::CostGraph g;
  for (int v = 0; v < nodes; ++v) {
    std::vector<double> c(static_cast<size_t>(configs));
    for (double& x : c) x = cost(rng);
    g.add_node(std::move(c));
    if (v > 0) {
      std::vector<double> t(static_cast<size_t>(configs * configs));
      for (double& x : t) x = cost(rng);
      g.add_edge(v - 1, v, std::move(t));
    }
  }
  return g;
}

void BM_ChainSearch(benchmark::State& state) {
  const auto g = chain(12, static_cast<int>(state.range(0)));
  layerplan::SearchOptions options;
  options.naive = state.range(1) != 0;
  for (auto _ : state) benchmark::DoNotOptimize(layerplan::solve(g, options).cost);
  state.SetLabel(state.range(1) ? "naive" : "bounded");
}
BENCHMARK(BM_ChainSearch)->ArgsProduct({{16, 64, 256}, {0, 1}})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
