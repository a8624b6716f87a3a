// Specification of planner/cost_model.h, checked against hand-computed times on device
// graphs built from round numbers:
//   GPU: 1e12 FLOP/s peak, efficiency 1, 1e11 B/s memory, no launch overhead;
//   intra-node links 10 GB/s (1e10 B/s), latency 0 unless a test says otherwise;
//   network 1 GB/s (1e9 B/s) per node.
// Elements are fp32: 4 bytes.
#include "planner/cost_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "model/geometry.h"
#include "model/layer_math.h"
#include "model/model_graph.h"
#include "planner/config_space.h"
#include "topology/device_graph.h"

namespace {

using layerplan::Collective;
using layerplan::CollectiveGroup;
using layerplan::CollectiveHardware;
using layerplan::Configuration;
using layerplan::CostModel;
using layerplan::Degrees;
using layerplan::Device;
using layerplan::DeviceGraph;
using layerplan::Layer;
using layerplan::Link;
using layerplan::ModelGraph;
using layerplan::PairVolume;
using layerplan::Shape;
using layerplan::SyncCost;
using layerplan::SyncOptions;
using layerplan::transfer_volumes;
using layerplan::TransferCost;
using layerplan::Window;

Shape shape(int64_t n, int64_t c, int64_t h, int64_t w) { return Shape{{n, c, h, w}}; }
Degrees degrees(int n, int c, int h, int w) { return Degrees{{n, c, h, w}}; }

Configuration on(Degrees d, std::vector<int> devices) { return Configuration{d, std::move(devices)}; }
Configuration on_block(Degrees d, int first = 0) {
  std::vector<int> devices(static_cast<size_t>(d.product()));
  std::iota(devices.begin(), devices.end(), first);
  return Configuration{d, devices};
}

Device unit_gpu(double memory_bandwidth = 1e11, double kernel_overhead_s = 0.0) {
  Device d;
  d.model = "unit";
  d.peak_flops = 1e12;
  d.compute_efficiency = 1.0;
  d.memory_bandwidth = memory_bandwidth;
  d.memory_bytes = 16e9;
  d.kernel_overhead_s = kernel_overhead_s;
  d.bytes_per_element = 4;  // fp32: every byte count below is elements x 4
  return d;
}

// `nodes` x `per_node` identical GPUs, every intra-node pair joined by `intra`.
DeviceGraph cluster(int nodes, int per_node, Link intra = {1e10, 0.0}, Link network = {1e9, 0.0},
                    Device gpu = unit_gpu()) {
  return DeviceGraph(nodes, per_node, std::move(gpu),
                     std::vector<Link>(static_cast<size_t>(per_node * per_node), intra), network);
}

// Times are sums and quotients of round numbers; allow only rounding error.
void ExpectSeconds(double actual, double expected) {
  EXPECT_NEAR(actual, expected, 1e-12 * expected) << "expected " << expected << " s";
}

// ---------------------------------------------------------------------------------------
// Compute
// ---------------------------------------------------------------------------------------

// Conv 3x3 stride 1 pad 1 with bias, 8x16x8x8 -> 8x16x8x8:
//   output elements   8*16*8*8            = 8192
//   MACs              8192 * 16 in-ch * 9 = 1,179,648
//   forward FLOPs     2 * MACs + 8192 bias = 2,367,488
//   parameters        16*16*9 + 16         = 2320
struct ConvFixture {
  ModelGraph g{"conv"};
  int x = g.input("x", shape(8, 16, 8, 8));
  int conv_id = g.conv2d("conv", x, 16, Window::square(3, 1, 1), true);
  const Layer& conv() const { return g.layer(conv_id); }
};

TEST(ComputeTime, HandCountsOfTheConvFixtureMatchLayerMath) {
  const ConvFixture f;
  EXPECT_EQ(layerplan::forward_macs(f.g, f.conv()), 1179648);
  EXPECT_EQ(layerplan::forward_flops(f.g, f.conv()), 2367488.0);
  EXPECT_EQ(layerplan::parameter_count(f.g, f.conv()), 2320);
}

TEST(ComputeTime, ComputeBoundConvIsFlopsOverPeakForwardAndTwiceThatBackward) {
  const ConvFixture f;
  const DeviceGraph devices = cluster(1, 1);
  const CostModel model(f.g, devices);
  // One tile: bytes = (input 8192 + output 8192 + weights 2320) * 4 = 74,816.
  //   forward  max(2,367,488 / 1e12, 74,816 / 1e11)     = max(2.367488e-6, 7.4816e-7)
  //   backward max(2 * 2,367,488 / 1e12, 2 * 74,816 / 1e11) = 4.734976e-6
  ExpectSeconds(model.compute_time(f.conv(), on_block(degrees(1, 1, 1, 1))), 2.367488e-6 + 4.734976e-6);
}

TEST(ComputeTime, ComputeBoundConvHalvesWhenTheSampleDegreeDoubles) {
  // FLOPs per tile halve with each doubling of n; the tile's bytes shrink too (all but the
  // 2320 weights) and stay below the compute time (n8: 17,472 B / 1e11 = 1.7e-7 s forward
  // against 2.96e-7 s of FLOPs), so the whole time halves.
  const ConvFixture f;
  const DeviceGraph devices = cluster(1, 8);
  const CostModel model(f.g, devices);
  const double one = 7.102464e-6;
  ExpectSeconds(model.compute_time(f.conv(), on_block(degrees(1, 1, 1, 1))), one);
  ExpectSeconds(model.compute_time(f.conv(), on_block(degrees(2, 1, 1, 1))), one / 2);
  ExpectSeconds(model.compute_time(f.conv(), on_block(degrees(4, 1, 1, 1))), one / 4);
  ExpectSeconds(model.compute_time(f.conv(), on_block(degrees(8, 1, 1, 1))), one / 8);
}

TEST(ComputeTime, ChannelsFirstTensorCoreConvTransposesItsOperandsInEachPass) {
  // On NCHW tensors a tensor-core convolution transposes x, w and y forward, and dy, w, dx
  // and x, dy, dw backward: each tensor read and written once, one kernel each.
  const ConvFixture f;
  Device gpu = unit_gpu(1e11, 1e-6);
  gpu.kernel_shape_model = true;
  gpu.memory_efficiency = 1.0;
  gpu.tensor_cores = true;
  const auto time_in = [&](layerplan::TensorLayout layout, bool tensor_cores) {
    Device d = gpu;
    d.layout = layout;
    d.tensor_cores = tensor_cores;
    const DeviceGraph devices = cluster(1, 1, {1e10, 0.0}, {1e9, 0.0}, d);
    return CostModel(f.g, devices).pass_times(f.conv(), on_block(degrees(1, 1, 1, 1)));
  };
  const auto first = time_in(layerplan::TensorLayout::kChannelsFirst, true);
  const auto last = time_in(layerplan::TensorLayout::kChannelsLast, true);
  // (input 8192 + output 8192 + weights 2320) * 4 B, read and written: 149,632 B / 1e11 B/s
  // = 1.49632e-6 s, plus 3 kernels of 1 us; the backward twice that.
  ExpectSeconds(first.forward_s - last.forward_s, 1.49632e-6 + 3e-6);
  ExpectSeconds(first.backward_s - last.backward_s, 2 * (1.49632e-6 + 3e-6));
  // CUDA-core convolutions run on NCHW as it is.
  const auto simt_first = time_in(layerplan::TensorLayout::kChannelsFirst, false);
  const auto simt_last = time_in(layerplan::TensorLayout::kChannelsLast, false);
  EXPECT_EQ(simt_first.forward_s, simt_last.forward_s);
  EXPECT_EQ(simt_first.backward_s, simt_last.backward_s);
}

TEST(ComputeTime, MemoryBoundConvIsBytesOverBandwidthForwardAndTwiceThatBackward) {
  // Memory bandwidth 1e9 B/s makes every pass memory bound.
  const ConvFixture f;
  const DeviceGraph devices = cluster(1, 2, {1e10, 0.0}, {1e9, 0.0}, unit_gpu(1e9));
  const CostModel model(f.g, devices);
  // n1: 74,816 B -> forward 7.4816e-5 s, backward 1.49632e-4 s.
  ExpectSeconds(model.compute_time(f.conv(), on_block(degrees(1, 1, 1, 1))), 7.4816e-5 + 1.49632e-4);
  // h2: each tile computes 4 output rows and reads 5 input rows (one halo row; the other
  // side is the border): input 8*16*5*8 = 5120, output 4096, weights 2320;
  // (5120 + 4096 + 2320) * 4 = 46,144 B -> 4.6144e-5 + 9.2288e-5.
  ExpectSeconds(model.compute_time(f.conv(), on_block(degrees(1, 1, 2, 1))), 4.6144e-5 + 9.2288e-5);
  // c2: each tile reads all 16 input channels (8192), writes 4096 and holds half the
  // weights (1152 + 8 bias = 1160): 13,448 * 4 = 53,792 B -> 5.3792e-5 + 1.07584e-4.
  ExpectSeconds(model.compute_time(f.conv(), on_block(degrees(1, 2, 1, 1))), 5.3792e-5 + 1.07584e-4);
}

TEST(ComputeTime, AddsOneKernelLaunchPerPass) {
  const ConvFixture f;
  const DeviceGraph devices = cluster(1, 1, {1e10, 0.0}, {1e9, 0.0}, unit_gpu(1e11, 5e-6));
  const CostModel model(f.g, devices);
  ExpectSeconds(model.compute_time(f.conv(), on_block(degrees(1, 1, 1, 1))), 7.102464e-6 + 2 * 5e-6);
}

TEST(ComputeTime, InputAndFlattenCostNothing) {
  ModelGraph g("views");
  const int x = g.input("x", shape(8, 16, 8, 8));
  const int flat = g.flatten("flat", x);
  const DeviceGraph devices = cluster(1, 2, {1e10, 0.0}, {1e9, 0.0}, unit_gpu(1e11, 5e-6));
  const CostModel model(g, devices);
  EXPECT_EQ(model.compute_time(g.layer(x), on_block(degrees(2, 1, 1, 1))), 0.0);
  EXPECT_EQ(model.compute_time(g.layer(flat), on_block(degrees(2, 1, 1, 1))), 0.0);
}

// ---------------------------------------------------------------------------------------
// Weight synchronization
// ---------------------------------------------------------------------------------------

// FC 16x64x1x1 -> 32 outputs with bias: 64*32 + 32 = 2080 parameters = 8320 bytes.
struct FcFixture {
  ModelGraph g{"fc"};
  int x = g.input("x", shape(16, 64, 1, 1));
  int fc_id = g.fully_connected("fc", x, 32);
  const Layer& fc() const { return g.layer(fc_id); }
};

// The sync of a layer is its groups' all-reduces as NCCL runs them (collective_model_test
// prices those at known points of NCCL's model); these tests check which groups a layer
// forms, what each group gets of the links, and the bucket share the search is charged.
// The GPU is "unit": NCCL's model for Ampere with NVLink.
const CollectiveHardware kUnitHardware = layerplan::collective_hardware("unit");
constexpr double kNoLink = std::numeric_limits<double>::infinity();

double nccl_all_reduce(CollectiveGroup group, double bytes) {
  return fastest_collective(Collective::kAllReduce, group, kUnitHardware, bytes).time_s;
}

// Buckets of one byte: every shard fills a bucket of its own, so sync is one all-reduce.
SyncOptions whole_all_reduces() { return {layerplan::SyncScheme::kRingAllReduce, true, 1}; }

TEST(Sync, DataParallelFcInOneNodeIsOneAllReduceOfFourRanks) {
  // n4 on 0-3: 4 replicas of all 8320 bytes on one node, 10 GB/s links.
  // Bytes: every replica sends 2 * (r-1) / r of the shard: 4 * 2 * 3/4 * 8320 = 49,920.
  const FcFixture f;
  const DeviceGraph devices = cluster(1, 4, {1e10, 1e-6});
  const CostModel model(f.g, devices, whole_all_reduces());
  const SyncCost s = model.sync(f.fc(), on_block(degrees(4, 1, 1, 1)));
  ExpectSeconds(s.time_s, nccl_all_reduce({4, 1, 1e10, kNoLink}, 8320));
  EXPECT_EQ(s.bytes, 49920);
}

TEST(Sync, AShardBelowTheBucketSizePaysItsShareOfAFullBucket) {
  // With the runtime's 25 MiB buckets, the 8320 bytes are 8320 / 26214400 of a bucket that
  // the same four ranks all-reduce: the latency is shared by the layers of the bucket.
  const FcFixture f;
  const DeviceGraph devices = cluster(1, 4, {1e10, 1e-6});
  const CostModel model(f.g, devices);
  const SyncCost s = model.sync(f.fc(), on_block(degrees(4, 1, 1, 1)));
  ExpectSeconds(s.time_s, nccl_all_reduce({4, 1, 1e10, kNoLink}, 26214400) * 8320 / 26214400);
  EXPECT_LT(s.time_s, nccl_all_reduce({4, 1, 1e10, kNoLink}, 8320));
}

TEST(Sync, ChannelSplitFcWithOneReplicaPerShardNeedsNoSync) {
  const FcFixture f;
  const DeviceGraph devices = cluster(1, 4, {1e10, 1e-6});
  const CostModel model(f.g, devices);
  const SyncCost s = model.sync(f.fc(), on_block(degrees(1, 4, 1, 1)));
  EXPECT_EQ(s.time_s, 0.0);
  EXPECT_EQ(s.bytes, 0);
  // Nor does a single device, nor a layer without weights.
  EXPECT_EQ(model.sync(f.fc(), on_block(degrees(1, 1, 1, 1))).time_s, 0.0);
  EXPECT_EQ(model.sync(f.g.layer(f.x), on_block(degrees(4, 1, 1, 1))).time_s, 0.0);
}

TEST(Sync, HybridFcAllReducesEachChannelShardAmongItsReplicas) {
  // n2 c2 on 0-3 (channel innermost): tiles 0,1,2,3 = (n0 c0), (n0 c1), (n1 c0), (n1 c1),
  // so shard c0 lives on {0, 2} and shard c1 on {1, 3}: two all-reduces of 1040 parameters
  // = 4160 bytes among 2 ranks, at once. Bytes: 2 shards * 2 * (2-1) * 4160 = 16,640.
  const FcFixture f;
  const DeviceGraph devices = cluster(1, 4, {1e10, 1e-6});
  const CostModel model(f.g, devices, whole_all_reduces());
  const SyncCost s = model.sync(f.fc(), on_block(degrees(2, 2, 1, 1)));
  ExpectSeconds(s.time_s, nccl_all_reduce({2, 1, 1e10, kNoLink}, 4160));
  EXPECT_EQ(s.bytes, 16640);
}

TEST(Sync, OneCrossNodeGroupGetsTheWholeNetwork) {
  // 2 nodes x 2 GPUs, network 1e9 B/s per node; intra 1e10 B/s. n4 on 0-3 is one group of
  // 4 ranks on 2 nodes, alone on the NICs.
  const FcFixture f;
  const DeviceGraph devices = cluster(2, 2, {1e10, 1e-6}, {1e9, 5e-6});
  const CostModel model(f.g, devices, whole_all_reduces());
  const SyncCost s = model.sync(f.fc(), on_block(degrees(4, 1, 1, 1)));
  ExpectSeconds(s.time_s, nccl_all_reduce({4, 2, 1e10, 1e9}, 8320));
  EXPECT_EQ(s.bytes, 49920);
}

TEST(Sync, CrossNodeGroupsShareTheirNodesNetwork) {
  // Same 2 x 2 cluster, n2 c2 on 0-3: groups {0, 2} and {1, 3} each have one rank per node
  // and both use both nodes' NICs, so each gets 1e9 / 2 B/s (and no intra-node link).
  const FcFixture f;
  const DeviceGraph devices = cluster(2, 2, {1e10, 1e-6}, {1e9, 5e-6});
  const CostModel model(f.g, devices, whole_all_reduces());
  const SyncCost s = model.sync(f.fc(), on_block(degrees(2, 2, 1, 1)));
  ExpectSeconds(s.time_s, nccl_all_reduce({2, 2, kNoLink, 5e8}, 4160));
  EXPECT_GT(s.time_s, nccl_all_reduce({2, 2, kNoLink, 1e9}, 4160));
  EXPECT_EQ(s.bytes, 16640);
}

// The flat ring that `layerplan predict` prices the CPU runtime's Gloo buckets with.
TEST(GlooRing, OneRingPaysTwoStepsPerReplicaAtTheSlowestHop) {
  // Ring 0-1-2-3 over 1e10 B/s links with 1 us latency:
  // 2 * 3/4 * 8320 / 1e10 + 2 * 3 * 1e-6 = 1.248e-6 + 6e-6.
  const FcFixture f;
  const DeviceGraph devices = cluster(1, 4, {1e10, 1e-6});
  const CostModel model(f.g, devices);
  ExpectSeconds(model.ring_all_reduce_time({{0, 1, 2, 3}}, 8320), 1.248e-6 + 6e-6);
}

TEST(GlooRing, CrossNodeRingsShareTheirNodesNetwork) {
  // Rings {0, 2} and {1, 3} on 2 x 2 both leave each node once: 1e9 / 2 B/s each, 5 us:
  // 2 * 1/2 * 4160 / 5e8 + 2 * 1 * 5e-6 = 8.32e-6 + 1e-5.
  const FcFixture f;
  const DeviceGraph devices = cluster(2, 2, {1e10, 1e-6}, {1e9, 5e-6});
  const CostModel model(f.g, devices);
  ExpectSeconds(model.ring_all_reduce_time({{0, 2}, {1, 3}}, 4160), 8.32e-6 + 1e-5);
}

// ---------------------------------------------------------------------------------------
// Transfer
// ---------------------------------------------------------------------------------------

// ReLU on 8x4x8x8 (2048 elements). n4 -> c4 on 0-3 moves 128 elements (512 bytes) on
// each of the 12 ordered pairs of distinct devices (see geometry_test): 1536 elements,
// so 2 * 1536 * 4 = 12,288 bytes forward and backward.
struct ReluFixture {
  ModelGraph g{"relu"};
  int x = g.input("x", shape(8, 4, 8, 8));
  int relu_id = g.relu("relu", x);
  const Layer& relu() const { return g.layer(relu_id); }
};

TEST(Transfer, IntraNodeTimeIsTheBusiestDevicesSendOrReceiveTimeBothWays) {
  // One node of 4: each device sends 3 x 512 = 1536 B and receives the same, over 1e10 B/s:
  // 1.536e-7 s per direction; forward + backward = 3.072e-7 s.
  const ReluFixture f;
  const DeviceGraph devices = cluster(1, 4);
  const CostModel model(f.g, devices);
  const TransferCost t = model.transfer(f.relu(), 0, on_block(degrees(4, 1, 1, 1)), on_block(degrees(1, 4, 1, 1)));
  ExpectSeconds(t.time_s, 2 * 1.536e-7);
  EXPECT_EQ(t.bytes, 12288);
}

TEST(Transfer, SendsFromOneDeviceToSeveralPeersAddUp) {
  // Producer whole on device 0, consumer n4 on 0-3: device 0 sends 512 elements = 2048 B
  // to each of 1, 2, 3: 6144 B / 1e10 = 6.144e-7 s (each receiver only 2.048e-7 s).
  const ReluFixture f;
  const DeviceGraph devices = cluster(1, 4);
  const CostModel model(f.g, devices);
  const TransferCost t = model.transfer(f.relu(), 0, on(degrees(1, 1, 1, 1), {0}), on_block(degrees(4, 1, 1, 1)));
  ExpectSeconds(t.time_s, 2 * 6.144e-7);
  EXPECT_EQ(t.bytes, 2 * 1536 * 4);
}

TEST(Transfer, LinkLatencyIsPaidOncePerDirection) {
  // As the intra-node case with 2 us links: 2 * (1.536e-7 + 2e-6).
  const ReluFixture f;
  const DeviceGraph devices = cluster(1, 4, {1e10, 2e-6});
  const CostModel model(f.g, devices);
  const TransferCost t = model.transfer(f.relu(), 0, on_block(degrees(4, 1, 1, 1)), on_block(degrees(1, 4, 1, 1)));
  ExpectSeconds(t.time_s, 2 * (1.536e-7 + 2e-6));
  EXPECT_EQ(t.bytes, 12288);
}

TEST(Transfer, CrossNodeTimeIsANodesNetworkBytesOverItsBandwidth) {
  // 2 nodes x 2 GPUs, network 1e9 B/s with 10 us latency, intra 1e10 B/s with none.
  // n4 -> c4 on 0-3: pairs (0,1) (1,0) (2,3) (3,2) stay inside a node, 512 B each: every
  // device 5.12e-8 s. The 4 pairs from {0,1} to {2,3} put 4 x 512 = 2048 B on node 0's
  // network out (and node 1's in), and the 4 back as many: 2048 / 1e9 = 2.048e-6 s, the
  // slowest. Latency: the network's 1e-5 s. Total 2 * (2.048e-6 + 1e-5).
  const ReluFixture f;
  const DeviceGraph devices = cluster(2, 2, {1e10, 0.0}, {1e9, 1e-5});
  const CostModel model(f.g, devices);
  const TransferCost t = model.transfer(f.relu(), 0, on_block(degrees(4, 1, 1, 1)), on_block(degrees(1, 4, 1, 1)));
  ExpectSeconds(t.time_s, 2 * (2.048e-6 + 1e-5));
  EXPECT_EQ(t.bytes, 12288);
}

TEST(Transfer, ANodesNetworkSendsToSeveralNodesAddUp) {
  // 4 nodes x 1 GPU, network 1e9 B/s with 10 us latency. Producer whole on device 0,
  // consumer n4 on 0-3: node 0 sends 512 elements = 2048 B to each of the 3 other nodes,
  // 6144 B / 1e9 = 6.144e-6 s, while each receiving node takes in only 2048 B.
  const ReluFixture f;
  const DeviceGraph devices = cluster(4, 1, {1e10, 0.0}, {1e9, 1e-5});
  const CostModel model(f.g, devices);
  const TransferCost t = model.transfer(f.relu(), 0, on(degrees(1, 1, 1, 1), {0}), on_block(degrees(4, 1, 1, 1)));
  ExpectSeconds(t.time_s, 2 * (6.144e-6 + 1e-5));
  EXPECT_EQ(t.bytes, 2 * 1536 * 4);
  // And the other way round, 3 nodes send 2048 B each to node 0, which takes in 6144 B.
  const TransferCost back = model.transfer(f.relu(), 0, on_block(degrees(4, 1, 1, 1)), on(degrees(1, 1, 1, 1), {0}));
  ExpectSeconds(back.time_s, 2 * (6.144e-6 + 1e-5));
}

TEST(Transfer, EachPairIsPricedOverItsOwnIntraNodeLink) {
  // One node of 4 whose link 0->2 is half as fast (5e9 B/s) and has 3 us latency; all
  // others 1e10 B/s, 0 latency. Producer whole on 0, consumer n4 on 0-3: device 0 sends
  // 2048 B to each of 1, 2, 3: 2.048e-7 + 4.096e-7 + 2.048e-7 = 8.192e-7 s; the largest
  // latency used is 3e-6. Total 2 * (8.192e-7 + 3e-6).
  const ReluFixture f;
  std::vector<Link> intra(16, Link{1e10, 0.0});
  intra[0 * 4 + 2] = Link{5e9, 3e-6};
  const DeviceGraph devices(1, 4, unit_gpu(), intra, Link{1e9, 0.0});
  const CostModel model(f.g, devices);
  const TransferCost t = model.transfer(f.relu(), 0, on(degrees(1, 1, 1, 1), {0}), on_block(degrees(4, 1, 1, 1)));
  ExpectSeconds(t.time_s, 2 * (8.192e-7 + 3e-6));
  EXPECT_EQ(t.bytes, 2 * 1536 * 4);
}

TEST(Transfer, BytesAreTwiceTheForwardElementsTimesFour) {
  // Conv 3x3 pad 1 on 4x2x8x8, h2 w2 -> n4 on 0-3 moves 32 elements on each of 12 pairs
  // (geometry_test): 384 elements, 2 * 384 * 4 = 3072 bytes.
  ModelGraph g("conv");
  const int x = g.input("x", shape(4, 2, 8, 8));
  const int conv_id = g.conv2d("conv", x, 4, Window::square(3, 1, 1), false);
  const Layer& conv = g.layer(conv_id);
  const DeviceGraph devices = cluster(1, 4);
  const CostModel model(g, devices);
  const Configuration producer = on_block(degrees(1, 1, 2, 2));
  const Configuration consumer = on_block(degrees(4, 1, 1, 1));
  int64_t forward = 0;
  for (const PairVolume& v : transfer_volumes(g, conv, 0, producer, consumer)) forward += v.elements;
  EXPECT_EQ(forward, 384);
  const TransferCost t = model.transfer(conv, 0, producer, consumer);
  EXPECT_EQ(t.bytes, 3072);
  // Each device sends 3 x 32 x 4 = 384 B: 3.84e-8 s per direction.
  ExpectSeconds(t.time_s, 2 * 3.84e-8);
}

TEST(Transfer, IdenticalConfigurationsOfAnElementwiseLayerMoveNothing) {
  const ReluFixture f;
  const DeviceGraph devices = cluster(2, 2, {1e10, 1e-6}, {1e9, 1e-5});
  const CostModel model(f.g, devices);
  for (const Configuration& c :
       {on_block(degrees(1, 1, 1, 1)), on_block(degrees(4, 1, 1, 1)), on_block(degrees(1, 1, 2, 2)),
        on_block(degrees(2, 2, 1, 1)), on(degrees(1, 4, 1, 1), {3, 1, 2, 0})}) {
    const TransferCost t = model.transfer(f.relu(), 0, c, c);
    EXPECT_EQ(t.time_s, 0.0) << c.str();
    EXPECT_EQ(t.bytes, 0) << c.str();
  }
  // The same split on other devices moves everything: n2 on {0,1} -> n2 on {2,3} sends
  // 1024 elements = 4096 B over each of 0->2 and 1->3, all across the network:
  // node 0 sends 8192 B / 1e9 = 8.192e-6 s, plus 1e-5 s latency, each way.
  const TransferCost moved =
      model.transfer(f.relu(), 0, on_block(degrees(2, 1, 1, 1)), on_block(degrees(2, 1, 1, 1), 2));
  ExpectSeconds(moved.time_s, 2 * (8.192e-6 + 1e-5));
  EXPECT_EQ(moved.bytes, 2 * 2048 * 4);
}

TEST(Transfer, DevicesInAnyOrderArePricedByTheirActualPairs) {
  // 2 nodes x 2 GPUs, network 1e9 B/s with 10 us latency. n4 on 0-3 -> n4 on {3, 2, 1, 0}:
  // samples [2q, 2q+2) live on device q and are needed on device 3-q, so the pairs are
  // (0,3) (1,2) (2,1) (3,0), 2 x 4 x 8 x 8 = 512 elements = 2048 B each, all crossing
  // the network: node 0 sends (0,3) + (1,2) = 4096 B, 4.096e-6 s, and receives as much.
  const ReluFixture f;
  const DeviceGraph devices = cluster(2, 2, {1e10, 0.0}, {1e9, 1e-5});
  const CostModel model(f.g, devices);
  const TransferCost t =
      model.transfer(f.relu(), 0, on_block(degrees(4, 1, 1, 1)), on(degrees(4, 1, 1, 1), {3, 2, 1, 0}));
  ExpectSeconds(t.time_s, 2 * (4.096e-6 + 1e-5));
  EXPECT_EQ(t.bytes, 2 * 2048 * 4);
}

// The header's rule applied to transfer_volumes(): per direction, the largest of every
// device's intra-node send and receive seconds (bytes over its pairs' links) and every
// node's network bytes (out or in) over the network bandwidth, plus the largest latency
// of a link used; twice that for forward + backward.
TransferCost price_by_the_documented_rule(const ModelGraph& g, const DeviceGraph& devices, const Layer& consumer,
                                          int slot, const Configuration& producer,
                                          const Configuration& consumer_config) {
  std::vector<double> send(static_cast<size_t>(devices.device_count())), recv(send.size());
  std::vector<double> out(static_cast<size_t>(devices.nodes())), in(out.size());
  double latency = 0.0;
  int64_t elements = 0;
  for (const PairVolume& v : transfer_volumes(g, consumer, slot, producer, consumer_config)) {
    const double bytes = static_cast<double>(v.elements * 4);
    elements += v.elements;
    latency = std::max(latency, devices.link(v.src, v.dst).latency);
    if (devices.same_node(v.src, v.dst)) {
      send[static_cast<size_t>(v.src)] += bytes / devices.link(v.src, v.dst).bandwidth;
      recv[static_cast<size_t>(v.dst)] += bytes / devices.link(v.src, v.dst).bandwidth;
    } else {
      out[static_cast<size_t>(devices.node_of(v.src))] += bytes;
      in[static_cast<size_t>(devices.node_of(v.dst))] += bytes;
    }
  }
  TransferCost cost;
  if (elements == 0) return cost;
  double slowest = 0.0;
  for (size_t d = 0; d < send.size(); ++d) slowest = std::max({slowest, send[d], recv[d]});
  for (size_t k = 0; k < out.size(); ++k)
    slowest = std::max({slowest, out[k] / devices.network().bandwidth, in[k] / devices.network().bandwidth});
  cost.time_s = 2.0 * (slowest + latency);
  cost.bytes = 2 * elements * 4;
  return cost;
}

TEST(Transfer, EveryEnumeratedPairIsPricedByTheDocumentedRule) {
  // 2 nodes x 4 GPUs and 4 nodes x 2 GPUs (with more than two nodes a node's network
  // out and in differ); every aligned-block configuration pair of several edges.
  ModelGraph g("mixed");
  const int x = g.input("x", shape(8, 8, 8, 8));
  const int conv = g.conv2d("conv", x, 8, Window::square(3, 1, 1), true);
  const int pool = g.max_pool("pool", conv, Window::square(3, 2, 1));  // 8x8x4x4
  const int gap = g.global_avg_pool("gap", pool);                      // 8x8x1x1
  const int fc = g.fully_connected("fc", gap, 16);
  const int relu = g.relu("relu", conv);
  const int cat = g.concat("cat", {conv, relu});
  const layerplan::SpaceOptions aligned{layerplan::PlacementRule::kAlignedBlocks};
  int checked = 0;
  for (const auto& [nodes, per_node] : {std::pair{2, 4}, std::pair{4, 2}}) {
    const DeviceGraph devices = cluster(nodes, per_node, {1e10, 1e-6}, {1e9, 1e-5});
    const CostModel model(g, devices);
    for (const auto& [id, slot] :
         std::vector<std::pair<int, int>>{{conv, 0}, {pool, 0}, {gap, 0}, {fc, 0}, {relu, 0}, {cat, 0}, {cat, 1}}) {
      const Layer& consumer = g.layer(id);
      const Layer& producer_layer = g.layer(consumer.inputs[static_cast<size_t>(slot)]);
      const auto producers = layerplan::enumerate_configurations(producer_layer, 8, per_node, aligned);
      const auto consumers = layerplan::enumerate_configurations(consumer, 8, per_node, aligned);
      for (const Configuration& p : producers) {
        for (const Configuration& c : consumers) {
          const TransferCost want = price_by_the_documented_rule(g, devices, consumer, slot, p, c);
          const TransferCost got = model.transfer(consumer, slot, p, c);
          ASSERT_EQ(got.bytes, want.bytes) << consumer.name << " " << slot << ": " << p.str() << " -> " << c.str();
          ASSERT_NEAR(got.time_s, want.time_s, 1e-12 * want.time_s)
              << consumer.name << " " << slot << ": " << p.str() << " -> " << c.str();
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 20000);
}

TEST(Transfer, RepeatedQueriesOnOneEdgeDoNotInfluenceEachOther) {
  // A model answers many configuration pairs of one edge in turn; each answer depends
  // only on its own pair.
  const ReluFixture f;
  const DeviceGraph devices = cluster(2, 2, {1e10, 0.0}, {1e9, 1e-5});
  const CostModel model(f.g, devices);
  const Configuration n4 = on_block(degrees(4, 1, 1, 1));
  const Configuration c4 = on_block(degrees(1, 4, 1, 1));
  const TransferCost first = model.transfer(f.relu(), 0, n4, c4);
  EXPECT_EQ(model.transfer(f.relu(), 0, n4, n4).bytes, 0);
  EXPECT_EQ(model.transfer(f.relu(), 0, on(degrees(1, 1, 1, 1), {0}), n4).bytes, 2 * 1536 * 4);
  const TransferCost again = model.transfer(f.relu(), 0, n4, c4);
  EXPECT_EQ(again.time_s, first.time_s);
  EXPECT_EQ(again.bytes, first.bytes);
  ExpectSeconds(again.time_s, 2 * (2.048e-6 + 1e-5));
}

}  // namespace
