// Planning a DenseNet-style dense block, whose concatenations do not reduce by node and
// edge elimination: the search ties the block's concats to one configuration
// (planner/concat_ties.h, docs/planner.md §7 "Tied concatenations"). The plan is never
// worse than a baseline, the concats the search tied share a configuration, and the tied
// optimum is compared with the full space's (found by conditioning) on 4 GPUs.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "model/model_graph.h"
#include "model/zoo.h"
#include "planner/concat_ties.h"
#include "planner/cost_model.h"
#include "planner/cost_tables.h"
#include "planner/planner.h"
#include "planner/search.h"
#include "topology/cluster_spec.h"

namespace layerplan {
namespace {

constexpr int64_t kImagesPerGpu = 32;

// A stem, one dense block of `layers` layers as torchvision's DenseNet builds it (each
// layer: concat of the block's input and every earlier layer's output, batch-norm, ReLU,
// 1x1 conv to 4·growth channels, batch-norm, ReLU, 3x3 conv to `growth` channels), the
// block's own concat, and a classifier.
ModelGraph small_densenet(int64_t batch, int layers) {
  constexpr int kGrowth = 8;
  ModelGraph g("small_densenet");
  const int x = g.input("x", Shape{{batch, 3, 16, 16}});
  const int stem =
      g.relu("stem_relu", g.batch_norm("stem_bn", g.conv2d("stem", x, 16, Window::square(3, 1, 1), false)));
  std::vector<int> features{stem};
  for (int i = 0; i < layers; ++i) {
    const std::string p = "layer" + std::to_string(i) + "_";
    const int cat = g.concat(p + "concat", features);
    const int a = g.relu(p + "relu1", g.batch_norm(p + "bn1", cat));
    const int b = g.conv2d(p + "conv1", a, 4 * kGrowth, Window::square(1), false);
    const int c = g.relu(p + "relu2", g.batch_norm(p + "bn2", b));
    features.push_back(g.conv2d(p + "conv2", c, kGrowth, Window::square(3, 1, 1), false));
  }
  const int out = g.relu("final_relu", g.batch_norm("final_bn", g.concat("block_concat", features)));
  const int gap = g.global_avg_pool("gap", out);
  g.softmax_cross_entropy("loss", g.fully_connected("fc", g.flatten("flatten", gap), 10));
  return g;
}

DeviceGraph paper_devices(int gpus) {
  ClusterSpec spec = ClusterSpec::paper_cluster();
  spec.gpus_per_node = 4;
  spec.nodes = gpus / 4;
  return build_device_graph(spec);
}

std::vector<int> concat_layers(const ModelGraph& graph) {
  std::vector<int> out;
  for (const Layer& l : graph.layers()) {
    if (l.kind == LayerKind::kConcat) out.push_back(l.id);
  }
  return out;
}

TEST(DenseBlockPlan, TiedPlanIsNeverWorseThanABaselineOnSixteenGpus) {
  const ModelGraph graph = small_densenet(16 * kImagesPerGpu, 4);
  const Plan plan = make_plan(graph, paper_devices(16));
  ASSERT_FALSE(plan.fell_back()) << plan.warning;
  ASSERT_FALSE(plan.memory_weighted);
  // Every concat but the first (which reads only the stem and is eliminated) is tied.
  EXPECT_EQ(plan.search_stats.tied_nodes, 4);
  EXPECT_EQ(plan.search_stats.conditioned_nodes, 0);
  const std::vector<int> concats = concat_layers(graph);
  ASSERT_EQ(concats.size(), 5U);
  std::set<std::string> tied_configs;
  for (size_t i = 1; i < concats.size(); ++i) {
    tied_configs.insert(plan.layer_wise.layers[static_cast<size_t>(concats[i])].config.str());
  }
  EXPECT_EQ(tied_configs.size(), 1U);
  for (const StrategyCost& baseline : plan.baselines) {
    EXPECT_LE(plan.layer_wise.additive_s(), baseline.additive_s() * (1 + 1e-12)) << baseline.name;
  }
}

TEST(DenseBlockPlan, TiedOptimumAgainstTheFullSpaceOnFourGpus) {
  // The cost graph the planner searches, solved with the concat ties and without them
  // (the full space: the search conditions). The tied optimum is never below the full
  // one, and here it is the same: the block keeps one layout.
  const ModelGraph graph = small_densenet(4 * kImagesPerGpu, 3);
  const DeviceGraph devices = paper_devices(4);
  const CostModel model(graph, devices);
  const SearchUnits units = make_search_units(graph, devices, SpaceOptions{}, true);
  Deadline never;
  const CostGraph costs = build_cost_graph(model, units, true, never);
  SearchOptions tied;
  tied.tied = concat_tie_groups(graph, units);
  ASSERT_EQ(tied.tied.size(), 1U);
  EXPECT_EQ(tied.tied[0].size(), 4U);
  const SearchResult with_ties = solve(costs, tied);
  const SearchResult full = solve(costs);
  EXPECT_EQ(with_ties.stats.tied_nodes, 3);
  EXPECT_EQ(full.stats.tied_nodes, 0);
  EXPECT_GT(full.stats.conditioned_nodes, 0);
  EXPECT_LE(full.cost, with_ties.cost);
  EXPECT_NEAR(with_ties.cost, full.cost, 1e-9 * full.cost);
}

TEST(DenseBlockPlan, SharedTablesOfTheBlocksConcatsEqualTheirOwn) {
  // The concats of a block differ only in their channel count, which their edge tables
  // leave out of the key (planner/cost_tables.cc): every table computed once and shared
  // must equal the one computed for that edge alone.
  const ModelGraph graph = small_densenet(16 * kImagesPerGpu, 4);
  const DeviceGraph devices = paper_devices(16);
  const SearchUnits units = make_search_units(graph, devices, SpaceOptions{}, true);
  Deadline never;
  const CostGraph shared = build_cost_graph(CostModel(graph, devices), units, true, never);
  const CostGraph own = build_cost_graph(CostModel(graph, devices), units, false, never);
  EXPECT_EQ(shared.node_cost, own.node_cost);
  ASSERT_EQ(shared.edges.size(), own.edges.size());
  for (size_t i = 0; i < own.edges.size(); ++i) EXPECT_EQ(shared.edges[i].cost, own.edges[i].cost) << "edge " << i;
  // Edges into concats: x0 and f_1 are read by several concats with distinct channel counts.
  int into_concats = 0;
  for (const CostEdge& e : own.edges) {
    into_concats += graph.layer(units.head[static_cast<size_t>(e.dst)]).kind == LayerKind::kConcat ? 1 : 0;
  }
  EXPECT_EQ(into_concats, 1 + 2 + 3 + 4 + 5);
}

TEST(DenseBlockPlan, InceptionHasNoTiedConcats) {
  // Each Inception block's concat reads its own branches, and no tensor feeds two concats,
  // so the zoo's Inception-v3 is searched over the full space as before.
  const ModelGraph graph = build_zoo_model("inception_v3", 16 * kImagesPerGpu);
  const SearchUnits units = make_search_units(graph, paper_devices(16), SpaceOptions{}, true);
  EXPECT_FALSE(concat_layers(graph).empty());
  EXPECT_TRUE(concat_tie_groups(graph, units).empty());
}

}  // namespace
}  // namespace layerplan
