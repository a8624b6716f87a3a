// Specification of planner/collective_model.h: collectives priced at points of NCCL's own
// tuning model (src/graph/tuning.cc), worked out by hand from its figures:
//   time = latency + bytes / algorithm bandwidth, the fastest enabled (algorithm, protocol);
//   ring: latency = base + intra-node steps x hop latency + network steps x network hop
//         latency (x1.4 on Ampere and later for Simple across nodes), bandwidth = bus x
//         ranks / steps (LL: a quarter of the bus, LL128: 92 %);
//   tree: latency = base + 2 ((ranks per node - 1) x hop + log2(nodes) x network hop),
//         bandwidth = bus x 0.92 x 0.5 x a correction by size (LL: / 3.8, LL128: x 120/128
//         across nodes).
#include "planner/collective_model.h"

#include <gtest/gtest.h>

#include <limits>

namespace layerplan {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void ExpectSeconds(double actual, double expected) {
  EXPECT_NEAR(actual, expected, 1e-9 * expected) << "expected " << expected << " s";
}

const CollectiveHardware kAmpere{80, true};
const CollectiveHardware kHopper{90, true};

TEST(CollectiveModel, SmallAllReduceInOneNodeRunsRingLowLatency) {
  // 4 ranks on one node joined by 10 GB/s NVLink, 8320 bytes.
  // ring LL:  latency 6.6 + 6 steps x 0.6 = 10.2 us; bus 10 / 4 = 2.5 GB/s (under LL's cap of
  //           87.7), x 4/6 = 1.667 GB/s: 8320 B take 4.992 us; 15.192 us in all.
  // ring Simple: 8.4 + 6 x 3.4 = 28.8 us + 1.248 us. tree LL: 6.8 + 2 x 3 x 0.6 = 10.4 us +
  //           8320 / (10 x 0.92 / 3.8 x 0.5 x 0.7 GB/s) = 9.82 us.
  const CollectiveGroup group{4, 1, 10e9, kInf};
  const CollectiveEstimate e = fastest_collective(Collective::kAllReduce, group, kAmpere, 8320);
  EXPECT_EQ(e.algorithm, CollectiveAlgorithm::kRing);
  EXPECT_EQ(e.protocol, CollectiveProtocol::kLowLatency);
  ExpectSeconds(e.latency_s, 10.2e-6);
  ExpectSeconds(e.time_s, 10.2e-6 + 4.992e-6);
}

TEST(CollectiveModel, LargeAllReduceInOneNodeRunsRingSimpleAtTheLinksBandwidth) {
  // 8 Hopper ranks, 450 GB/s NVLink, 256 MiB: ring Simple, latency 8.4 + 14 x 3.4 = 56 us,
  // bandwidth 450 x 8/14 GB/s. LL128 is slower (92 % of the bus), and so is the tree (92 %,
  // halved, x 0.9 at this size).
  const double bytes = 268435456;
  const CollectiveEstimate e = fastest_collective(Collective::kAllReduce, {8, 1, 450e9, kInf}, kHopper, bytes);
  EXPECT_EQ(e.algorithm, CollectiveAlgorithm::kRing);
  EXPECT_EQ(e.protocol, CollectiveProtocol::kSimple);
  ExpectSeconds(e.time_s, 56e-6 + bytes * 14 / (8 * 450e9));
}

TEST(CollectiveModel, BucketAcross32NodesRunsTheHierarchicalTree) {
  // 32 nodes x 8 Hopper ranks, 450 GB/s inside a node, 400 GB/s per node (8 x 400 Gb/s),
  // 25 MiB (the runtime's bucket). Tree LL128: latency 14 + 2 (7 x 1.25 + log2 32 x 8.5) =
  // 116.5 us; bus min(400 x 0.92, 16 channels x 36) = 368, x 120/128 = 345, halved, x 0.9
  // (LL128's correction at 2^18 x 64 B) = 155.25 GB/s.
  // The ring pays 2 x 255 steps: Simple (8.4 + 446 x 3.4 + 64 x 14) x 1.4 = 3389 us.
  const double bytes = 26214400;
  const CollectiveGroup group{256, 32, 450e9, 400e9};
  const CollectiveEstimate e = fastest_collective(Collective::kAllReduce, group, kHopper, bytes);
  EXPECT_EQ(e.algorithm, CollectiveAlgorithm::kTree);
  EXPECT_EQ(e.protocol, CollectiveProtocol::kLowLatency128);
  ExpectSeconds(e.latency_s, 116.5e-6);
  ExpectSeconds(e.time_s, 116.5e-6 + bytes / 155.25e9);
  for (const CollectiveEstimate& other : collective_estimates(Collective::kAllReduce, group, kHopper, bytes)) {
    if (other.algorithm == CollectiveAlgorithm::kRing && other.protocol == CollectiveProtocol::kSimple) {
      ExpectSeconds(other.latency_s, (8.4 + 446 * 3.4 + 64 * 14.0) * 1.4 * 1e-6);
      ExpectSeconds(other.bandwidth, 400e9 * 256 / 510);
    }
  }
}

TEST(CollectiveModel, ReduceScatterAndAllGatherRunRingsOnly) {
  // 2 nodes x 4 ranks: 7 steps, one across the nodes. Simple: 8.4 + 6 x max(3.4, 3 x 1 us
  // network overhead) + 1 x 14 = 42.8 us, no plateau; bandwidth min(300, 50) x 8/7 GB/s.
  const CollectiveGroup group{8, 2, 300e9, 50e9};
  for (const Collective c : {Collective::kReduceScatter, Collective::kAllGather}) {
    const auto all = collective_estimates(c, group, kAmpere, 1e8);
    ASSERT_EQ(all.size(), 3u);  // LL, LL128, Simple
    for (const CollectiveEstimate& e : all) EXPECT_EQ(e.algorithm, CollectiveAlgorithm::kRing);
    const CollectiveEstimate simple = all.back();
    EXPECT_EQ(simple.protocol, CollectiveProtocol::kSimple);
    ExpectSeconds(simple.latency_s, 42.8e-6);
    ExpectSeconds(simple.time_s, 42.8e-6 + 1e8 / (50e9 * 8 / 7));
  }
}

TEST(CollectiveModel, SlowerNetworkOrMoreRanksNeverMakeAnAllReduceFaster) {
  for (const double bytes : {1e3, 1e6, 1e8}) {
    double previous = 0;
    for (const int nodes : {1, 2, 4, 8, 32, 128}) {
      const double t =
          fastest_collective(Collective::kAllReduce, {8 * nodes, nodes, 450e9, 400e9}, kHopper, bytes).time_s;
      EXPECT_GE(t, previous) << nodes << " nodes, " << bytes << " bytes";
      previous = t;
      const double slow =
          fastest_collective(Collective::kAllReduce, {8 * nodes, nodes, 450e9, 50e9}, kHopper, bytes).time_s;
      EXPECT_GE(slow, t);
    }
  }
}

TEST(CollectiveModel, LL128IsOffBeforeVoltaAndWithoutNvlink) {
  EXPECT_EQ(collective_estimates(Collective::kAllReduce, {4, 1, 20e9, kInf}, {60, true}, 1e6).size(), 4u);
  EXPECT_EQ(collective_estimates(Collective::kAllReduce, {4, 1, 12e9, kInf}, {75, false}, 1e6).size(), 4u);
  EXPECT_EQ(collective_estimates(Collective::kAllReduce, {4, 1, 50e9, kInf}, {70, true}, 1e6).size(), 6u);
}

TEST(CollectiveModel, OneRankCostsNothing) {
  EXPECT_TRUE(collective_estimates(Collective::kAllReduce, {1, 1, 1e9, kInf}, kHopper, 1e6).empty());
  EXPECT_EQ(fastest_collective(Collective::kAllReduce, {1, 1, 1e9, kInf}, kHopper, 1e6).time_s, 0.0);
}

TEST(CollectiveModel, HardwareFollowsTheGpuName) {
  EXPECT_EQ(collective_hardware("H100-SXM5-80GB").compute_capability, 90);
  EXPECT_EQ(collective_hardware("NVIDIA H200").compute_capability, 90);
  EXPECT_EQ(collective_hardware("Tesla V100-SXM2-32GB").compute_capability, 70);
  EXPECT_EQ(collective_hardware("Tesla P100-SXM2-16GB").compute_capability, 60);
  EXPECT_TRUE(collective_hardware("Tesla P100-SXM2-16GB").nvlink);
  EXPECT_FALSE(collective_hardware("Tesla T4").nvlink);
  EXPECT_FALSE(collective_hardware("NVIDIA A100-PCIE-40GB").nvlink);
  EXPECT_EQ(collective_hardware("NVIDIA A100-PCIE-40GB").compute_capability, 80);
}

}  // namespace
}  // namespace layerplan
