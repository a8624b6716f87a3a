// The executor moves exactly what the planner prices: per edge and device pair, the
// forward activations equal transfer_volumes and the backward gradients the same volumes
// from consumer to producer; the weight-gradient all-reduces send what CostModel::sync
// prices for a ring, 2(r-1)·shard elements per shard.
#include <gtest/gtest.h>

#include <map>

#include "model/layer_math.h"
#include "model/zoo.h"
#include "planner/cost_model.h"
#include "tests/executor_test_util.h"

namespace layerplan::testing {
namespace {

using PairMap = std::map<std::pair<int, int>, int64_t>;

// The counts of edge (consumer, slot) in one direction, keyed (src, dst).
PairMap edge_counts(const std::map<std::tuple<int, int, int, int>, int64_t>& counts, int consumer, int slot) {
  PairMap out;
  for (const auto& [key, elements] : counts) {
    const auto [c, s, src, dst] = key;
    if (c == consumer && s == slot) out[{src, dst}] += elements;
  }
  return out;
}

struct Totals {
  int64_t transfer = 0, sync = 0;
};

Totals expect_traffic_is_priced(const ModelGraph& graph, int devices, const NamedPlan& plan,
                                int64_t bucket_bytes = ExecutorOptions{}.gradient_bucket_bytes) {
  const TrainResult r = train(graph, plan.configs, 1, test_sgd(), "reference", bucket_bytes);
  ClusterSpec spec;
  spec.nodes = 1;
  spec.gpus_per_node = devices;
  const DeviceGraph device_graph = build_device_graph(spec);
  const CostModel cost(graph, device_graph);
  const std::string where = graph.name() + " on " + std::to_string(devices) + " devices, " + plan.name;
  Totals totals;
  for (const Layer& layer : graph.layers()) {
    const Configuration& config = plan.configs[static_cast<size_t>(layer.id)];
    for (int slot = 0; slot < static_cast<int>(layer.inputs.size()); ++slot) {
      const Configuration& producer = plan.configs[static_cast<size_t>(layer.inputs[static_cast<size_t>(slot)])];
      PairMap forward, backward;
      for (const PairVolume& v : transfer_volumes(graph, layer, slot, producer, config)) {
        forward[{v.src, v.dst}] = v.elements;
        backward[{v.dst, v.src}] = v.elements;
        totals.transfer += 2 * v.elements;
      }
      EXPECT_EQ(edge_counts(r.traffic.forward, layer.id, slot), forward) << where << ", into " << layer.name;
      EXPECT_EQ(edge_counts(r.traffic.backward, layer.id, slot), backward) << where << ", back from " << layer.name;
    }
    const auto it = r.traffic.weight_sync.find(layer.id);
    const int64_t synced = it == r.traffic.weight_sync.end() ? 0 : it->second;
    EXPECT_EQ(synced * 4, cost.sync(layer, config).bytes) << where << ", weights of " << layer.name;  // fp32
    totals.sync += synced;
  }
  // Nothing moves that is not counted above, but batch-norm statistics and loss shares.
  int64_t all = 0, stats = 0;
  for (const auto& [pair, elements] : r.traffic.pairs) all += elements;
  for (const auto& [layer, elements] : r.traffic.statistics) stats += elements;
  for (const auto& [layer, elements] : r.traffic.loss) stats += elements;
  EXPECT_EQ(all, totals.transfer + totals.sync + stats) << where;
  return totals;
}

void expect_all_plans_priced(const ModelGraph& graph, int devices,
                             int64_t bucket_bytes = ExecutorOptions{}.gradient_bucket_bytes) {
  Totals totals;
  for (const NamedPlan& plan : plans_to_test(graph, devices, 10, 200u + static_cast<uint32_t>(devices))) {
    const Totals t = expect_traffic_is_priced(graph, devices, plan, bucket_bytes);
    totals.transfer += t.transfer;
    totals.sync += t.sync;
  }
  // The plans do move activations and synchronize weights, so the equalities are not 0 == 0.
  EXPECT_GT(totals.transfer, 0);
  EXPECT_GT(totals.sync, 0);
}

TEST(ExecutorBytes, LeNet5On2Devices) { expect_all_plans_priced(lenet5(4), 2); }
TEST(ExecutorBytes, LeNet5On4Devices) { expect_all_plans_priced(lenet5(4), 4); }
TEST(ExecutorBytes, ResidualInceptionOn2Devices) { expect_all_plans_priced(residual_inception_net(), 2); }
TEST(ExecutorBytes, ResidualInceptionOn4Devices) { expect_all_plans_priced(residual_inception_net(), 4); }
// A bucket's ring cuts its chunks across layers; each element sent still counts for its
// own layer, so every layer's count is still what CostModel::sync prices.
TEST(ExecutorBytes, SmallGradientBucketsOn4Devices) {
  expect_all_plans_priced(lenet5(4), 4, 100);
  expect_all_plans_priced(residual_inception_net(), 4, 100);
}

// Data parallelism on 4 devices moves no activations and all-reduces every weight among
// 4 replicas: 2·3·|w| elements per layer.
TEST(ExecutorBytes, DataParallelOnlySynchronizesWeights) {
  const ModelGraph graph = lenet5(4);
  const TrainResult r = train(graph, data_parallel(graph, 4), 1);
  EXPECT_TRUE(r.traffic.forward.empty());
  EXPECT_TRUE(r.traffic.backward.empty());
  for (const Layer& layer : graph.layers()) {
    if (!has_params(layer.kind)) continue;
    EXPECT_EQ(r.traffic.weight_sync.at(layer.id), 6 * parameter_count(graph, layer)) << layer.name;
  }
}

// The in-process ring: every member ends with the sum, and the group sends 2(p-1)·n.
TEST(InProcessTransport, RingAllReduceSumsAndCounts) {
  InProcessTransport transport;
  std::vector<std::vector<float>> buffers = {{1, 2, 3, 4, 5}, {10, 20, 30, 40, 50}, {100, 200, 300, 400, 500}};
  transport.all_reduce({5, 2, 9}, {&buffers[0], &buffers[1], &buffers[2]}, {{3, 5}});
  for (const auto& b : buffers) EXPECT_EQ(b, (std::vector<float>{111, 222, 333, 444, 555}));
  EXPECT_EQ(transport.counts().weight_sync.at(3), 2 * 2 * 5);
  // The ring runs over the devices in ascending order: 2 -> 5 -> 9 -> 2.
  EXPECT_EQ(transport.counts().pairs.size(), 3u);
  EXPECT_TRUE(transport.counts().pairs.count({2, 5}) && transport.counts().pairs.count({5, 9}) &&
              transport.counts().pairs.count({9, 2}));
}

// The direct exchange of statistics: every member ends with the same sum (added in
// ascending device order) and sends its buffer to each other member.
TEST(InProcessTransport, DirectAllReduceSumsAndCounts) {
  InProcessTransport transport;
  std::vector<std::vector<double>> buffers = {{1, 2}, {10, 20}, {100, 200}};
  transport.all_reduce({5, 2, 9}, {&buffers[0], &buffers[1], &buffers[2]}, ReduceKind::kBatchNormStatistics, 4);
  for (const auto& b : buffers) EXPECT_EQ(b, (std::vector<double>{111, 222}));
  EXPECT_EQ(transport.counts().statistics.at(4), 3 * 2 * 2);
  EXPECT_TRUE(transport.counts().weight_sync.empty());
  EXPECT_EQ(transport.counts().pairs.size(), 6u);
  for (const auto& [pair, elements] : transport.counts().pairs)
    EXPECT_EQ(elements, 2) << pair.first << "->" << pair.second;
}

// A ring over a buffer of two layers' segments counts each chunk for the layers it covers.
TEST(InProcessTransport, RingCountsEachSegmentForItsLayer) {
  InProcessTransport transport;
  std::vector<std::vector<float>> buffers = {{1, 2, 3, 4, 5}, {10, 20, 30, 40, 50}};
  transport.all_reduce({0, 1}, {&buffers[0], &buffers[1]}, {{7, 2}, {3, 3}});
  for (const auto& b : buffers) EXPECT_EQ(b, (std::vector<float>{11, 22, 33, 44, 55}));
  EXPECT_EQ(transport.counts().weight_sync.at(7), 2 * 1 * 2);
  EXPECT_EQ(transport.counts().weight_sync.at(3), 2 * 1 * 3);
}

}  // namespace
}  // namespace layerplan::testing
