// The factored traffic computation must give exactly the numbers that enumerating every
// overlapping tile pair gives, for every kind of consumer and every pair of
// configurations the search can produce.
#include <gtest/gtest.h>

#include "planner/config_space.h"
#include "planner/edge_traffic.h"
#include "planner/zoo.h"
#include "topology/cluster_spec.h"

namespace layerplan {
namespace {

void expect_same_traffic(const ModelGraph& graph, const Layer& consumer, int slot, const DeviceGraph& devices,
                         PlacementRule placement) {
  const SpaceOptions options{placement};
  const Layer& producer = graph.layer(consumer.inputs[static_cast<size_t>(slot)]);
  const auto pconfigs = enumerate_configurations(producer, devices.device_count(), devices.gpus_per_node(), options);
  const auto qconfigs = enumerate_configurations(consumer, devices.device_count(), devices.gpus_per_node(), options);
  FactoredEdgeTraffic factored(graph, consumer, slot, devices);
  EdgeTraffic fast, slow;
  for (const Configuration& p : pconfigs) {
    for (const Configuration& q : qconfigs) {
      ASSERT_TRUE(factored.compute(p, q, fast)) << p.str() << " -> " << q.str();
      edge_traffic_by_pairs(graph, consumer, slot, p, q, devices, slow);
      ASSERT_EQ(fast.total, slow.total) << consumer.name << ": " << p.str() << " -> " << q.str();
      ASSERT_EQ(fast.intra_send, slow.intra_send) << consumer.name << ": " << p.str() << " -> " << q.str();
      ASSERT_EQ(fast.intra_recv, slow.intra_recv) << consumer.name << ": " << p.str() << " -> " << q.str();
      ASSERT_EQ(fast.net_out, slow.net_out) << consumer.name << ": " << p.str() << " -> " << q.str();
      ASSERT_EQ(fast.net_in, slow.net_in) << consumer.name << ": " << p.str() << " -> " << q.str();
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
