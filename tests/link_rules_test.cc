// The rules that turn per-GPU facts into GPU-pair links, on small made-up nodes: NVLink
// counts (direct, through switches, one-sided), the PCIe classification and figures
// (unknown speeds are "no information", not 0 GB/s), NVSwitch boards without figures, and
// live discovery of this machine (whatever it holds) through hwloc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "topology/discovery.h"
#include "topology/nvlink_counts.h"
#include "topology/pcie_rules.h"

namespace layerplan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

GpuInfo gpu(std::vector<uint64_t> path, int package, double link_gbytes) {
  GpuInfo g;
  g.pcie_path = std::move(path);
  g.package = package;
  g.pcie_gbytes = link_gbytes;
  return g;
}

NodeTopology node_of(std::vector<GpuInfo> gpus) {
  NodeTopology node;
  node.gpus = std::move(gpus);
  node.links.resize(node.gpus.size() * node.gpus.size());
  return node;
}

TEST(PcieRules, ACommonBridgeBelowTheHostBridgeIsAPcieSwitch) {
  EXPECT_EQ(classify_pcie_pair(gpu({1, 2, 3}, 0, 0), gpu({1, 2, 4}, 0, 0)), PathKind::kPcieSwitch);
}

TEST(PcieRules, OnlyTheHostBridgeInCommonIsTheRootComplex) {
  EXPECT_EQ(classify_pcie_pair(gpu({1, 2}, 0, 0), gpu({1, 5}, 0, 0)), PathKind::kHostBridge);
}

TEST(PcieRules, DifferentHostBridgesOfOnePackageAreTheRootComplex) {
  EXPECT_EQ(classify_pcie_pair(gpu({1, 2}, 0, 0), gpu({7, 8}, 0, 0)), PathKind::kHostBridge);
}

TEST(PcieRules, DifferentPackagesOrUnknownPackagesCrossTheSockets) {
  EXPECT_EQ(classify_pcie_pair(gpu({1, 2}, 0, 0), gpu({7, 8}, 1, 0)), PathKind::kCrossSocket);
  EXPECT_EQ(classify_pcie_pair(gpu({1, 2}, -1, 0), gpu({7, 8}, -1, 0)), PathKind::kCrossSocket);
}

TEST(PcieRules, UnknownSpeedsAreNoInformationNotZeroBandwidth) {
  EXPECT_DOUBLE_EQ(pcie_pair_gbytes(gpu({}, 0, 15.75), gpu({}, 0, 31.5)), 15.75);
  EXPECT_DOUBLE_EQ(pcie_pair_gbytes(gpu({}, 0, 0.0), gpu({}, 0, 31.5)), 31.5);
  EXPECT_DOUBLE_EQ(pcie_pair_gbytes(gpu({}, 0, 0.0), gpu({}, 0, 0.0)), 0.0);
}

TEST(CompleteLinks, PairsWithoutNvlinkFollowThePcieRulesAndNvlinkPairsStay) {
  NodeTopology node = node_of({gpu({1, 2, 3}, 0, 15.75), gpu({1, 2, 4}, 0, 15.75), gpu({9, 10}, 1, 31.5)});
  node.link(0, 2) = node.link(2, 0) = GpuLink{PathKind::kNvlink, 50.0, Source::kNvml, 2};
  complete_links(node, /*nvlink_known=*/true, "");
  EXPECT_EQ(node.link(0, 0).kind, PathKind::kSelf);
  EXPECT_EQ(node.link(0, 1).kind, PathKind::kPcieSwitch);
  EXPECT_DOUBLE_EQ(node.link(0, 1).gbytes, 15.75);
  EXPECT_EQ(node.link(0, 1).source, Source::kPcieRule);
  EXPECT_EQ(node.link(1, 2).kind, PathKind::kCrossSocket);
  EXPECT_EQ(node.link(0, 2).kind, PathKind::kNvlink);
  EXPECT_DOUBLE_EQ(node.link(0, 2).gbytes, 50.0);
  EXPECT_THAT(node.notes, IsEmpty());
}

TEST(CompleteLinks, NoNvlinkInformationIsNoted) {
  NodeTopology node = node_of({gpu({1}, 0, 0), gpu({1}, 0, 0)});
  complete_links(node, false, "because");
  EXPECT_THAT(node.notes, ElementsAre("no NVLink information (because): PCIe rules used"));
  EXPECT_EQ(node.link(0, 1).kind, PathKind::kHostBridge);
}

TEST(CompleteLinks, NvswitchesWithoutFiguresMakeNvswitchPairsOfUnknownBandwidth) {
  NodeTopology node = node_of({gpu({1}, 0, 0), gpu({2}, 1, 0)});
  node.nvswitches.push_back(NvSwitchInfo{"0000:80:00.0", "GA100 [A100 NVSwitch]"});
  complete_links(node, false, "because");
  EXPECT_EQ(node.link(0, 1).kind, PathKind::kNvswitch);
  EXPECT_DOUBLE_EQ(node.link(0, 1).gbytes, 0.0);
  EXPECT_EQ(node.link(0, 1).source, Source::kNone);
  ASSERT_EQ(node.notes.size(), 1u);
  EXPECT_THAT(node.notes[0], HasSubstr("1 NVSwitch on PCI"));
}

TEST(NvlinkCounts, DirectLinksTakeTheLargerDirection) {
  NodeTopology node = node_of({GpuInfo{}, GpuInfo{}});
  NvlinkCounts counts(2);
  counts.direct(0, 1) = 100.0;  // GPU 1 could not be asked
  counts.links(0, 1) = 4;
  EXPECT_EQ(apply_nvlink_counts(counts, Source::kNvml, node), 2);
  EXPECT_EQ(node.link(1, 0).kind, PathKind::kNvlink);
  EXPECT_DOUBLE_EQ(node.link(1, 0).gbytes, 100.0);
  EXPECT_EQ(node.link(1, 0).nvlinks, 4);
}

TEST(NvlinkCounts, SwitchBandwidthOfAPairIsTheSmallerOfTheTwoGpus) {
  NodeTopology node = node_of({GpuInfo{}, GpuInfo{}, GpuInfo{}});
  NvlinkCounts counts(3);
  counts.switch_gbytes = {150.0, 100.0, 0.0};
  counts.switch_links = {6, 4, 0};
  EXPECT_EQ(apply_nvlink_counts(counts, Source::kHwlocMatrix, node), 2);
  EXPECT_EQ(node.link(0, 1).kind, PathKind::kNvswitch);
  EXPECT_DOUBLE_EQ(node.link(0, 1).gbytes, 100.0);
  EXPECT_EQ(node.link(0, 1).nvlinks, 4);
  EXPECT_EQ(node.link(0, 2).source, Source::kNone);  // GPU 2 has no switch link: untouched
}

TEST(NvlinkCounts, TheFasterOfDirectAndSwitchedPathsWins) {
  NodeTopology node = node_of({GpuInfo{}, GpuInfo{}});
  NvlinkCounts counts(2);
  counts.direct(0, 1) = counts.direct(1, 0) = 50.0;
  counts.switch_gbytes = {150.0, 150.0};
  apply_nvlink_counts(counts, Source::kNvml, node);
  EXPECT_EQ(node.link(0, 1).kind, PathKind::kNvswitch);
  EXPECT_DOUBLE_EQ(node.link(0, 1).gbytes, 150.0);
}

TEST(LiveDiscovery, ThisMachineLoadsWhateverGpusItHas) {
  unsetenv("LAYERPLAN_TOPOLOGY_XML");
  DiscoveryOptions options;  // no GPU variables: every GPU
  const NodeTopology node = discover_node(options);
  EXPECT_EQ(node.origin, "this machine (hwloc live)");
  EXPECT_EQ(node.links.size(), node.gpus.size() * node.gpus.size());
  for (int i = 0; i < node.gpu_count(); ++i) EXPECT_EQ(node.link(i, i).kind, PathKind::kSelf);
}

}  // namespace
}  // namespace layerplan
