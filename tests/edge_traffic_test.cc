// The factored traffic computation must give exactly the numbers that enumerating every
// overlapping tile pair gives, for every kind of consumer and every pair of
// configurations the search can produce.
#include <gtest/gtest.h>

#include <cstddef>
#include <initializer_list>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "model/zoo.h"
#include "planner/config_space.h"
#include "planner/edge_traffic.h"
#include "topology/cluster_spec.h"

namespace layerplan {
namespace {

void expect_same_traffic(const ModelGraph& graph, const Layer& consumer, int slot, const DeviceGraph& devices,
                         PlacementRule placement) {
  const SpaceOptions options{placement};
  const Layer& producer = graph.layer(consumer.inputs[static_cast<size_t>(slot)]);
  const auto pconfigs = enumerate_configurations(producer, devices.device_count(), devices.gpus_per_node(), options);
  const auto qconfigs = enumerate_configurations(consumer, devices.device_count(), devices.gpus_per_node(), options);
  // Both ways of summing overlaps: dense prefix tables, and searching the regions' prefix sums.
  FactoredEdgeTraffic factored(graph, consumer, slot, devices);
  FactoredEdgeTraffic searched(graph, consumer, slot, devices, /*dense_entries=*/0);
  EdgeTraffic fast, slow, fast_searched;
  for (const Configuration& p : pconfigs) {
    for (const Configuration& q : qconfigs) {
      ASSERT_TRUE(factored.compute(p, q, fast)) << p.str() << " -> " << q.str();
      ASSERT_TRUE(searched.compute(p, q, fast_searched)) << p.str() << " -> " << q.str();
      ASSERT_EQ(fast_searched.intra_send, fast.intra_send) << consumer.name << ": " << p.str() << " -> " << q.str();
      ASSERT_EQ(fast_searched.net_out, fast.net_out) << consumer.name << ": " << p.str() << " -> " << q.str();
      edge_traffic_by_pairs(graph, consumer, slot, p, q, devices, slow);
      ASSERT_EQ(fast.total, slow.total) << consumer.name << ": " << p.str() << " -> " << q.str();
      ASSERT_EQ(fast.intra_send, slow.intra_send) << consumer.name << ": " << p.str() << " -> " << q.str();
      ASSERT_EQ(fast.intra_recv, slow.intra_recv) << consumer.name << ": " << p.str() << " -> " << q.str();
      ASSERT_EQ(fast.net_out, slow.net_out) << consumer.name << ": " << p.str() << " -> " << q.str();
      ASSERT_EQ(fast.net_in, slow.net_in) << consumer.name << ": " << p.str() << " -> " << q.str();
      // The summary that pricing reads, which visits one node per class of equal nodes.
      TrafficSummary summary;
      ASSERT_TRUE(factored.summary(p, q, summary)) << p.str() << " -> " << q.str();
      const TrafficSummary expected = summarize(slow);
      ASSERT_EQ(summary.busiest_device, expected.busiest_device)
          << consumer.name << ": " << p.str() << " -> " << q.str();
      ASSERT_EQ(summary.busiest_node, expected.busiest_node) << consumer.name << ": " << p.str() << " -> " << q.str();
      ASSERT_EQ(summary.total, expected.total) << consumer.name << ": " << p.str() << " -> " << q.str();
    }
  }
}

DeviceGraph cluster(int nodes, int gpus_per_node) {
  ClusterSpec spec;
  spec.nodes = nodes;
  spec.gpus_per_node = gpus_per_node;
  return build_device_graph(spec);
}

// One consumer of every kind with an input: windowed (with halo and stride), global
// pooling, fully-connected, flatten, concat (both slots), add, element-wise, softmax.
ModelGraph every_kind(int64_t batch) {
  ModelGraph g("every_kind");
  const int in = g.input("input", {{batch, 4, 8, 8}});
  const int conv = g.conv2d("conv3x3", in, 8, Window::square(3, 1, 1), true);
  const int pool = g.max_pool("pool_s2", conv, Window::square(3, 2, 1));
  const int side = g.conv2d("conv1x1", pool, 4, Window::square(1), false);
  const int cat = g.concat("concat", {pool, side});
  const int sum = g.add("add", {cat, cat});
  const int bn = g.batch_norm("bn", sum);
  const int gap = g.global_avg_pool("gap", bn);
  const int flat = g.flatten("flatten", gap);
  const int fc = g.fully_connected("fc", flat, 16);
  g.softmax_cross_entropy("loss", fc);
  return g;
}

TEST(EdgeTrafficTest, FactoredEqualsPairEnumerationForEveryKindOnOneNode) {
  const ModelGraph g = every_kind(8);
  const DeviceGraph devices = cluster(1, 8);
  for (const Layer& l : g.layers()) {
    for (int slot = 0; slot < static_cast<int>(l.inputs.size()); ++slot) {
      expect_same_traffic(g, l, slot, devices, PlacementRule::kAlignedBlocks);
    }
  }
}

TEST(EdgeTrafficTest, FactoredEqualsPairEnumerationAcrossNodes) {
  const ModelGraph g = every_kind(16);
  const DeviceGraph devices = cluster(4, 4);
  for (const Layer& l : g.layers()) {
    for (int slot = 0; slot < static_cast<int>(l.inputs.size()); ++slot) {
      expect_same_traffic(g, l, slot, devices, PlacementRule::kAlignedBlocks);
    }
  }
}

TEST(EdgeTrafficTest, FactoredEqualsPairEnumerationForGroupedConvolutions) {
  // Channel tiles of grouped convolutions read the input channels of their groups only.
  ModelGraph g("grouped");
  const int in = g.input("input", {{8, 16, 8, 8}});
  const int dw = g.conv2d("depthwise", in, 16, Window::square(3, 1, 1), false, 16);
  const int g2 = g.conv2d("group2", dw, 8, Window::square(3, 2, 1), false, 2);
  g.conv2d("group4", g2, 16, Window::square(1), true, 4);
  const DeviceGraph devices = cluster(2, 4);
  for (const Layer& l : g.layers()) {
    if (l.kind == LayerKind::kConv2d) expect_same_traffic(g, l, 0, devices, PlacementRule::kAlignedBlocks);
  }
}

TEST(EdgeTrafficTest, FactoredEqualsPairEnumerationOnInceptionBlock) {
  const ModelGraph g = inception_v3(8);
  const DeviceGraph devices = cluster(2, 4);
  int checked = 0;
  for (const Layer& l : g.layers()) {
    // The first Inception block: asymmetric windows, concat of four branches.
    if (l.name.rfind("Mixed_5b", 0) != 0 || l.kind == LayerKind::kRelu || l.kind == LayerKind::kBatchNorm) continue;
    for (int slot = 0; slot < static_cast<int>(l.inputs.size()); ++slot) {
      expect_same_traffic(g, l, slot, devices, PlacementRule::kFirstBlock);
      ++checked;
    }
  }
  EXPECT_GT(checked, 8);
}

// The same kinds on extents that 3 divides (6, 12 and 18 channels, 12x12 and 6x6 maps)
// and some that it does not (4 channels of the side branch, 8 classes), so degrees 3, 6
// and 12 occur along every splittable dimension.
ModelGraph every_kind_by_three(int64_t batch) {
  ModelGraph g("every_kind_by_three");
  const int in = g.input("input", {{batch, 6, 12, 12}});
  const int conv = g.conv2d("conv3x3", in, 12, Window::square(3, 1, 1), true);      // 12x12x12
  const int pool = g.max_pool("pool_s2", conv, Window::square(3, 2, 1));            // 12x6x6
  const int side = g.conv2d("conv1x1", pool, 4, Window::square(1), false);          // 4x6x6
  const int cat = g.concat("concat", {pool, side});                                 // 16x6x6
  const int wide = g.conv2d("conv_wide", cat, 18, Window::square(3, 1, 1), false);  // 18x6x6
  const int sum = g.add("add", {wide, wide});
  const int bn = g.batch_norm("bn", sum);
  const int gap = g.global_avg_pool("gap", bn);
  const int flat = g.flatten("flatten", gap);
  const int fc = g.fully_connected("fc", flat, 8);
  g.softmax_cross_entropy("loss", fc);
  return g;
}

void expect_same_traffic_on_every_edge(const ModelGraph& g, const DeviceGraph& devices, PlacementRule placement) {
  for (const Layer& l : g.layers()) {
    for (int slot = 0; slot < static_cast<int>(l.inputs.size()); ++slot) {
      SCOPED_TRACE(l.name + " slot " + std::to_string(slot) + " on " + std::to_string(devices.nodes()) + " x " +
                   std::to_string(devices.gpus_per_node()));
      expect_same_traffic(g, l, slot, devices, placement);
    }
  }
}

// Many nodes of few GPUs on the default first block: most nodes repeat another node's
// traffic shifted along the samples, and summary() visits one node per class of them.
TEST(EdgeTrafficTest, SummaryEqualsPairEnumerationOnManySmallNodes) {
  expect_same_traffic_on_every_edge(every_kind(32), cluster(16, 2), PlacementRule::kFirstBlock);
  expect_same_traffic_on_every_edge(every_kind_by_three(24), cluster(12, 2), PlacementRule::kFirstBlock);
}

// Random shapes and windows on clusters of many small nodes, where summary() finds most nodes'
// traffic in a class seen before (node classes, grid cells, runs of nodes one side alone
// covers): it must give what enumerating every tile pair gives.
ModelGraph random_chain(std::mt19937& rng) {
  auto pick = [&](std::initializer_list<int> values) {
    std::uniform_int_distribution<size_t> at(0, values.size() - 1);
    return *(values.begin() + static_cast<std::ptrdiff_t>(at(rng)));
  };
  ModelGraph g("random_chain");
  const int64_t batch = pick({16, 32, 48, 64});
  const int side = pick({8, 12, 16});
  int x = g.input("input", {{batch, pick({2, 3, 4}), side, side}});
  x = g.conv2d("conv_a", x, pick({4, 8, 16}), Window::square(pick({1, 3}), 1, 1), true);
  const int k = pick({1, 3});
  x = g.conv2d("conv_b", x, pick({8, 16, 32}), Window::square(k, pick({1, 2}), k / 2), false);
  x = g.max_pool("pool", x, Window::square(pick({2, 3}), 2, 0));
  x = g.batch_norm("bn", x);
  x = g.global_avg_pool("gap", x);
  x = g.flatten("flatten", x);
  g.fully_connected("fc", x, pick({8, 16}));
  return g;
}

TEST(EdgeTrafficTest, SummaryEqualsPairEnumerationOnRandomShapesAndManyNodes) {
  std::mt19937 rng(20261207);
  const std::vector<std::pair<int, int>> clusters = {{16, 2}, {8, 4}, {32, 1}, {4, 8}, {6, 2}};
  for (int round = 0; round < 5; ++round) {
    const ModelGraph g = random_chain(rng);
    const auto [nodes, gpus] = clusters[static_cast<size_t>(round)];
    SCOPED_TRACE("round " + std::to_string(round));
    expect_same_traffic_on_every_edge(g, cluster(nodes, gpus), PlacementRule::kFirstBlock);
    expect_same_traffic_on_every_edge(g, cluster(nodes, gpus), PlacementRule::kAlignedBlocks);
  }
}

// 3 nodes x 4 (12 GPUs): a node's tiles need not form one box of tile coordinates
// (n4 c3 puts (n0, c0..2) and (n1, c0) on node 0), so this exercises the union of boxes.
TEST(EdgeTrafficTest, FactoredEqualsPairEnumerationOnThreeNodesOfFour) {
  expect_same_traffic_on_every_edge(every_kind_by_three(12), cluster(3, 4), PlacementRule::kAlignedBlocks);
}

TEST(EdgeTrafficTest, FactoredEqualsPairEnumerationOnOneNodeOfSix) {
  expect_same_traffic_on_every_edge(every_kind_by_three(12), cluster(1, 6), PlacementRule::kAlignedBlocks);
}

TEST(EdgeTrafficTest, FactoredEqualsPairEnumerationOnThreeNodesOfOne) {
  expect_same_traffic_on_every_edge(every_kind_by_three(6), cluster(3, 1), PlacementRule::kAlignedBlocks);
}

TEST(EdgeTrafficTest, FactoredEqualsPairEnumerationOnTwoNodesOfSixAndSixNodesOfTwo) {
  const ModelGraph g = every_kind_by_three(12);
  expect_same_traffic_on_every_edge(g, cluster(2, 6), PlacementRule::kAlignedBlocks);
  expect_same_traffic_on_every_edge(g, cluster(6, 2), PlacementRule::kAlignedBlocks);
}

// Degrees 3, 6 and 12 over the tile shapes where a node's run of tiles is least like a
// box: the sample and channel degrees in every order, across nodes of 4.
TEST(EdgeTrafficTest, FactoredEqualsPairEnumerationForHandPickedSplitsByThree) {
  const ModelGraph g = every_kind_by_three(12);
  const DeviceGraph devices = cluster(3, 4);
  const Layer& conv = g.layer(1);  // conv3x3, reads the input through a halo
  ASSERT_EQ(conv.name, "conv3x3");
  const std::vector<Degrees> splits = {Degrees{{12, 1, 1, 1}}, Degrees{{4, 3, 1, 1}},  Degrees{{3, 4, 1, 1}},
                                       Degrees{{2, 6, 1, 1}},  Degrees{{1, 12, 1, 1}}, Degrees{{1, 1, 3, 4}},
                                       Degrees{{1, 1, 12, 1}}, Degrees{{2, 1, 2, 3}},  Degrees{{1, 3, 2, 2}},
                                       Degrees{{3, 1, 1, 4}},  Degrees{{1, 6, 1, 2}},  Degrees{{1, 1, 6, 2}}};
  FactoredEdgeTraffic factored(g, conv, 0, devices);
  EdgeTraffic fast, slow;
  int non_trivial = 0;
  for (const Degrees& pd : splits) {
    if (pd[1] > 1) continue;  // the input layer never splits channels
    for (const Degrees& qd : splits) {
      Configuration p{pd, {}}, q{qd, {}};
      for (int t = 0; t < 12; ++t) {
        p.devices.push_back(t);
        q.devices.push_back(t);
      }
      ASSERT_TRUE(factored.compute(p, q, fast)) << p.str() << " -> " << q.str();
      edge_traffic_by_pairs(g, conv, 0, p, q, devices, slow);
      EXPECT_EQ(fast.total, slow.total) << p.str() << " -> " << q.str();
      EXPECT_EQ(fast.intra_send, slow.intra_send) << p.str() << " -> " << q.str();
      EXPECT_EQ(fast.intra_recv, slow.intra_recv) << p.str() << " -> " << q.str();
      EXPECT_EQ(fast.net_out, slow.net_out) << p.str() << " -> " << q.str();
      EXPECT_EQ(fast.net_in, slow.net_in) << p.str() << " -> " << q.str();
      non_trivial += slow.total > 0 && slow.net_in != std::vector<int64_t>(3, 0);
    }
  }
  EXPECT_GT(non_trivial, 20);  // most pairs move data across nodes
}

TEST(EdgeTrafficTest, FactoredDeclinesDegreesThatDoNotDivideTheDeviceCount) {
  const ModelGraph g = every_kind_by_three(12);
  const DeviceGraph devices = cluster(1, 4);
  const Layer& bn = g.layer(7);
  ASSERT_EQ(bn.name, "bn");
  Configuration three{Degrees{{3, 1, 1, 1}}, {0, 1, 2}};
  Configuration one{Degrees{{1, 1, 1, 1}}, {0}};
  FactoredEdgeTraffic factored(g, bn, 0, devices);
  EdgeTraffic out;
  EXPECT_FALSE(factored.compute(three, one, out));  // 3 tiles on 4 GPUs: not the search's
  EXPECT_TRUE(factored.compute(one, one, out));
}

TEST(EdgeTrafficTest, FactoredDeclinesConfigurationsOffAlignedBlocks) {
  const ModelGraph g = every_kind(8);
  const DeviceGraph devices = cluster(1, 4);
  const Layer& relu_like = g.layer(6);  // bn
  Configuration scattered{Degrees{{2, 1, 1, 1}}, {0, 2}};
  Configuration misaligned{Degrees{{2, 1, 1, 1}}, {1, 2}};
  Configuration block{Degrees{{2, 1, 1, 1}}, {0, 1}};
  FactoredEdgeTraffic factored(g, relu_like, 0, devices);
  EdgeTraffic out;
  EXPECT_FALSE(factored.compute(scattered, block, out));
  EXPECT_FALSE(factored.compute(block, misaligned, out));
  EXPECT_TRUE(factored.compute(block, block, out));
  EXPECT_EQ(out.total, 0);
}

}  // namespace
}  // namespace layerplan
