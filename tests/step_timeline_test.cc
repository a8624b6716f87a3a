// Specification of planner/step_timeline.h: the step laid out in time equals a step worked
// out by hand, with the bucket all-reduces overlapping the backward pass and without.
#include "planner/step_timeline.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "model/gradient_buckets.h"
#include "model/layer_math.h"
#include "planner/planner.h"

namespace layerplan {
namespace {

void ExpectSeconds(double actual, double expected) {
  EXPECT_NEAR(actual, expected, 1e-12 * std::max(1.0, expected)) << "expected " << expected << " s";
}

// Two layers: forward 1 + 3 = 4 s; backward of layer 1 (4 s) then of layer 0 (2 s).
const std::vector<LayerSpan> kTwoLayers = {{1, 2}, {3, 4}};

SyncJob bucket(std::vector<int> devices, int after_layer, double time_s) {
  return {std::move(devices), after_layer, 0.0, time_s, {}};
}

TEST(StepTimeline, ABucketFilledByTheLastLayerReducesWhileTheFirstLayersBackwardRuns) {
  // Ready at 4 + 4 = 8 s; reduced 8 -> 9.5 s while layer 0's backward runs 8 -> 10 s.
  const StepTimeline on = lay_out_step(kTwoLayers, {bucket({0, 1}, 1, 1.5)}, true, 2);
  ExpectSeconds(on.step_s, 10);
  ExpectSeconds(on.exposed_sync_s, 0);
  ExpectSeconds(on.sync_s, 1.5);
  ASSERT_EQ(on.spans.size(), 1u);
  ExpectSeconds(on.spans[0].start_s, 8);
  ExpectSeconds(on.spans[0].end_s, 9.5);
  EXPECT_EQ(on.spans[0].ranks, 2);
  // Without overlap the backward waits: 8 + 1.5 + 2.
  const StepTimeline off = lay_out_step(kTwoLayers, {bucket({0, 1}, 1, 1.5)}, false, 2);
  ExpectSeconds(off.step_s, 11.5);
  ExpectSeconds(off.exposed_sync_s, 1.5);
}

TEST(StepTimeline, ABucketLongerThanTheRestOfTheBackwardShowsOnlyItsExcess) {
  // Ready at 8 s, reduced until 13 s; the backward ends at 10 s: 3 s exposed. Off: 8 + 5 + 2.
  ExpectSeconds(lay_out_step(kTwoLayers, {bucket({0, 1}, 1, 5)}, true, 2).step_s, 13);
  ExpectSeconds(lay_out_step(kTwoLayers, {bucket({0, 1}, 1, 5)}, false, 2).step_s, 15);
}

TEST(StepTimeline, ABucketReducedAtTheEndOfTheBackwardHidesNothing) {
  for (const bool overlap : {true, false}) {
    const StepTimeline t = lay_out_step(kTwoLayers, {bucket({0, 1}, -1, 1.5)}, overlap, 2);
    ExpectSeconds(t.step_s, 4 + 6 + 1.5);
  }
}

TEST(StepTimeline, ADevicesBucketsRunOneAtATimeAndDisjointGroupsSideBySide) {
  // Two buckets of devices {0, 1} after layer 1 (1.5 s each) queue: 8 -> 9.5 -> 11 s. A
  // bucket of {2, 3} at the same time runs beside them: 8 -> 10 s.
  const std::vector<SyncJob> same = {bucket({0, 1}, 1, 1.5), bucket({0, 1}, 1, 1.5)};
  const StepTimeline queued = lay_out_step(kTwoLayers, same, true, 4);
  ExpectSeconds(queued.step_s, 11);
  ExpectSeconds(queued.spans[1].start_s, 9.5);
  const std::vector<SyncJob> disjoint = {bucket({0, 1}, 1, 1.5), bucket({2, 3}, 1, 2)};
  ExpectSeconds(lay_out_step(kTwoLayers, disjoint, true, 4).step_s, 10);
  // Without overlap the backward waits for the later of the two: 8 + 2 + 2.
  ExpectSeconds(lay_out_step(kTwoLayers, disjoint, false, 4).step_s, 12);
}

TEST(StepTimeline, NoSyncIsForwardPlusBackward) {
  const StepTimeline t = lay_out_step(kTwoLayers, {}, true, 1);
  ExpectSeconds(t.step_s, 10);
  EXPECT_EQ(t.sync_jobs, 0);
}

// A real plan: x -> relu -> fc -> loss, data parallel on 2 GPUs of one node. The fc's
// weights fill one bucket (the cap is its size), all-reduced after the fc's backward while
// the relu's backward runs. Nothing moves between layers.
struct TwoLayerNet {
  ModelGraph g{"two"};
  int x = g.input("x", Shape{{8, 64, 1, 1}});
  int relu = g.relu("relu", x);
  int fc = g.fully_connected("fc", relu, 32);
  int loss = g.softmax_cross_entropy("loss", fc);
};

DeviceGraph two_gpus() {
  Device d;
  d.model = "H100-SXM5-80GB";
  d.peak_flops = 1e10;  // slow enough that the relu's backward is comparable to the all-reduce
  d.compute_efficiency = 1;
  d.memory_bandwidth = 1e9;
  d.kernel_overhead_s = 1e-6;
  return DeviceGraph(1, 2, d, std::vector<Link>(4, Link{1e9, 1e-6}), Link{1e9, 1e-6});
}

TEST(StepTimeline, TwoLayersAndOneBucketByHand) {
  const TwoLayerNet net;
  const DeviceGraph devices = two_gpus();
  const std::vector<Configuration> dp = data_parallel(net.g, 2);
  const int64_t fc_bytes = parameter_count(net.g, net.g.layer(net.fc)) * 4;
  for (const bool overlap : {true, false}) {
    const CostModel model(net.g, devices, SyncOptions{SyncScheme::kRingAllReduce, overlap, fc_bytes});
    const std::vector<SyncJob> jobs = sync_jobs(model, dp);
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].after_layer, net.fc);
    EXPECT_EQ(jobs[0].devices, (std::vector<int>{0, 1}));
    const double bucket_s = model.all_reduce({0, 1}, static_cast<double>(fc_bytes), {}).time_s;
    ExpectSeconds(jobs[0].time_s, bucket_s);

    double forward = 0, backward = 0;
    std::vector<PassTimes> passes;
    for (const Layer& l : net.g.layers()) {
      passes.push_back(model.pass_times(l, dp[static_cast<size_t>(l.id)]));
      forward += passes.back().forward_s;
      backward += passes.back().backward_s;
    }
    const double relu_backward = passes[static_cast<size_t>(net.relu)].backward_s;
    ASSERT_GT(relu_backward, 0);
    // Ready after the loss's and the fc's backward; overlaps the relu's (the input costs nothing).
    const double by_hand = overlap ? forward + backward - relu_backward + std::max(relu_backward, bucket_s)
                                   : forward + backward + bucket_s;
    const StrategyCost priced = price_strategy(model, "data parallel", dp);
    ExpectSeconds(priced.step_s(), by_hand);
    ExpectSeconds(priced.additive_s(), forward + backward + priced.sync_s);
  }
}

// x -> fc1 -> fc2 -> loss on 2 nodes x 2 GPUs (devices 0, 1 | 2, 3). fc2 is data parallel
// (one group of all four); fc1 is split by channels in two with replica groups {0, 2} and
// {1, 3}, each across both nodes. With a bucket larger than both, all three buckets reduce
// at the end of the backward, but a device runs its buckets one at a time: fc2's bucket
// first, alone on the NICs, then fc1's two side by side, sharing them.
struct ThreeBucketsAtTheEnd {
  ModelGraph g{"three"};
  int x = g.input("x", Shape{{8, 64, 1, 1}});
  int fc1 = g.fully_connected("fc1", x, 64);
  int fc2 = g.fully_connected("fc2", fc1, 64);
  int loss = g.softmax_cross_entropy("loss", fc2);
};

TEST(StepTimeline, OnlyBucketsThatRunSideBySideShareTheNics) {
  const ThreeBucketsAtTheEnd net;
  Device d;
  d.model = "H100-SXM5-80GB";
  d.peak_flops = 1e12;
  d.memory_bandwidth = 1e12;
  const DeviceGraph devices(2, 2, d, std::vector<Link>(4, Link{1e11, 1e-6}), Link{1e9, 1e-6});
  std::vector<Configuration> plan = data_parallel(net.g, 4);
  // n2 c2: the channel coordinate is the tile's lowest digit, so the replica groups are
  // tiles {0, 2} and {1, 3}, here devices {0, 2} and {1, 3}.
  Degrees n2c2;
  n2c2.d = {2, 2, 1, 1};
  plan[static_cast<size_t>(net.fc1)] = Configuration{n2c2, {0, 1, 2, 3}};
  const CostModel model(net.g, devices, SyncOptions{SyncScheme::kRingAllReduce, true, int64_t{1} << 30});
  const std::vector<SyncJob> jobs = sync_jobs(model, plan);
  ASSERT_EQ(jobs.size(), 3u);
  const int64_t fc2_bytes = parameter_count(net.g, net.g.layer(net.fc2)) * 4;
  const int64_t fc1_shard_bytes = parameter_count(net.g, net.g.layer(net.fc1)) * 4 / 2;
  for (const SyncJob& job : jobs) {
    EXPECT_EQ(job.after_layer, -1);
    if (job.devices.size() == 4) {
      // Alone on both nodes' NICs.
      ExpectSeconds(job.time_s, model.all_reduce(job.devices, static_cast<double>(fc2_bytes), {1, 1}).time_s);
    } else {
      ASSERT_EQ(job.devices.size(), 2u);
      EXPECT_FALSE(devices.same_node(job.devices[0], job.devices[1]));
      // Beside the other fc1 group, not also beside fc2's bucket (which would be {3, 3}).
      ExpectSeconds(job.time_s, model.all_reduce(job.devices, static_cast<double>(fc1_shard_bytes), {2, 2}).time_s);
    }
  }
}

TEST(StepTimeline, ParameterServersSyncEachLayerOnItsOwn) {
  const TwoLayerNet net;
  const DeviceGraph devices = two_gpus();
  const CostModel model(net.g, devices, SyncScheme::kParameterServer);
  const std::vector<Configuration> dp = data_parallel(net.g, 2);
  const std::vector<SyncJob> jobs = sync_jobs(model, dp);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].after_layer, net.fc);
  ExpectSeconds(jobs[0].time_s, model.sync(net.g.layer(net.fc), dp[static_cast<size_t>(net.fc)]).time_s);
}

}  // namespace
}  // namespace layerplan
