// Which weight-gradient shards the executor reduces together (gradient_buckets.h): every
// shard with replicas is in exactly one bucket of its replica group's devices, in the
// backward's order; a bucket is reduced as soon as it holds the cap, the rest at the end.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "model/layer_math.h"
#include "model/zoo.h"
#include "runtime/executor/gradient_buckets.h"
#include "tests/executor_test_util.h"

namespace layerplan::testing {
namespace {

// Every (layer, group) whose shard has 2 or more replicas, with its elements.
std::map<std::pair<int, int>, int64_t> shards_with_replicas(const ModelGraph& graph,
                                                            const std::vector<Configuration>& plan) {
  std::map<std::pair<int, int>, int64_t> out;
  for (const Layer& layer : graph.layers()) {
    if (!has_params(layer.kind)) continue;
    const Configuration& config = plan[static_cast<size_t>(layer.id)];
    const auto groups = replica_groups(layer, config);
    for (size_t g = 0; g < groups.size(); ++g) {
      if (groups[g].size() > 1) out[{layer.id, static_cast<int>(g)}] = shard_elements(graph, layer, config);
    }
  }
  return out;
}

// The buckets hold every shard with replicas once, each in the bucket of its group's
// devices, in the backward's order within a bucket; full buckets are reduced at the
// latest layer their segments allow and hold at least the cap; the rest are not full.
void expect_buckets_are_consistent(const ModelGraph& graph, const std::vector<Configuration>& plan, int64_t cap) {
  const std::vector<GradientBucket> buckets = gradient_buckets(graph, plan, cap);
  std::map<std::pair<int, int>, int64_t> seen;
  int last_after = graph.size();
  bool at_end = false;
  for (const GradientBucket& b : buckets) {
    ASSERT_FALSE(b.segments.empty());
    EXPECT_TRUE(std::is_sorted(b.devices.begin(), b.devices.end()));
    for (size_t i = 1; i < b.segments.size(); ++i) EXPECT_GE(b.segments[i - 1].layer, b.segments[i].layer);
    for (const GradientSegment& s : b.segments) {
      EXPECT_TRUE(seen.emplace(std::pair{s.layer, s.group}, s.elements).second) << "layer " << s.layer << " twice";
      const Configuration& config = plan[static_cast<size_t>(s.layer)];
      std::vector<int> devices;
      const auto groups = replica_groups(graph.layer(s.layer), config);
      for (int t : groups[static_cast<size_t>(s.group)]) {
        devices.push_back(config.devices[static_cast<size_t>(t)]);
      }
      std::sort(devices.begin(), devices.end());
      EXPECT_EQ(devices, b.devices) << "layer " << s.layer;
    }
    if (b.reduce_after_layer >= 0) {
      EXPECT_FALSE(at_end) << "a bucket reduced during the backward comes after one reduced at its end";
      EXPECT_GE(b.elements(), cap);
      EXPECT_EQ(b.reduce_after_layer, b.segments.back().layer);
      EXPECT_LE(b.reduce_after_layer, last_after);
      last_after = b.reduce_after_layer;
    } else {
      at_end = true;
      EXPECT_LT(b.elements(), cap);
    }
  }
  EXPECT_EQ(seen, shards_with_replicas(graph, plan));
}

TEST(GradientBuckets, DataParallelPutsEveryLayerInOneBucketReducedAtTheEnd) {
  const ModelGraph graph = lenet5(4);
  const std::vector<GradientBucket> buckets = gradient_buckets(graph, data_parallel(graph, 4), int64_t{1} << 30);
  ASSERT_EQ(buckets.size(), 1u);
  EXPECT_EQ(buckets[0].devices, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(buckets[0].reduce_after_layer, -1);
  EXPECT_EQ(buckets[0].elements(), parameter_count(graph));
  EXPECT_EQ(buckets[0].segments.front().layer, graph.size() - 2);  // the last fully connected layer first
}

TEST(GradientBuckets, ACapOfOneReducesEveryLayerRightAfterItsBackward) {
  const ModelGraph graph = residual_inception_net();
  const std::vector<GradientBucket> buckets = gradient_buckets(graph, data_parallel(graph, 2), 1);
  int layers_with_params = 0;
  for (const Layer& layer : graph.layers()) layers_with_params += has_params(layer.kind) ? 1 : 0;
  ASSERT_EQ(static_cast<int>(buckets.size()), layers_with_params);
  for (const GradientBucket& b : buckets) {
    ASSERT_EQ(b.segments.size(), 1u);
    EXPECT_EQ(b.reduce_after_layer, b.segments[0].layer);
  }
}

TEST(GradientBuckets, OneDeviceHasNothingToReduce) {
  const ModelGraph graph = residual_inception_net();
  EXPECT_TRUE(gradient_buckets(graph, single_device_plan(graph), 1).empty());
}

TEST(GradientBuckets, EveryPlanAndCapGivesConsistentBuckets) {
  for (const ModelGraph& graph : {lenet5(4), residual_inception_net()}) {
    for (int devices : {2, 4}) {
      for (const NamedPlan& plan : plans_to_test(graph, devices, 10, 300u + static_cast<uint32_t>(devices))) {
        for (int64_t cap : {int64_t{1}, int64_t{100}, int64_t{5000}, int64_t{1} << 30}) {
          SCOPED_TRACE(graph.name() + " on " + std::to_string(devices) + " devices, " + plan.name + ", cap " +
                       std::to_string(cap));
          expect_buckets_are_consistent(graph, plan.configs, cap);
        }
      }
    }
  }
}

TEST(GradientBuckets, TheExecutorRejectsABucketSizeOfZero) {
  const ModelGraph graph = lenet5(4);
  const auto kernels = make_kernels("reference");
  InProcessTransport transport;
  ExecutorOptions options;
  options.gradient_bucket_bytes = 0;
  EXPECT_THROW(Executor(graph, data_parallel(graph, 2), *kernels, transport, options), std::invalid_argument);
}

}  // namespace
}  // namespace layerplan::testing
