// From a discovered node to the planner's device graph: NVLink figures are kept as found,
// NVSwitch boards without a figure take the GPU table's, PCIe paths follow the rules of
// docs/topology.md, overrides win, and the network is what the node's active NICs carry.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "topology/topology_device_graph.h"

namespace layerplan {
namespace {

using ::testing::HasSubstr;

// A node of `n` GPUs of `model` whose every pair is `link`.
NodeTopology uniform_node(int n, const std::string& model, GpuLink link) {
  NodeTopology node;
  node.origin = "test node";
  for (int i = 0; i < n; ++i) {
    GpuInfo gpu;
    gpu.pci_bus_id = "0000:0" + std::to_string(i) + ":00.0";
    gpu.model = model;
    gpu.pcie_gbytes = 15.75;  // Gen3 x16
    node.gpus.push_back(gpu);
  }
  node.links.assign(static_cast<size_t>(n * n), link);
  for (int i = 0; i < n; ++i) node.link(i, i) = GpuLink{PathKind::kSelf, 0.0, Source::kNone, 0};
  return node;
}

NicInfo nic(const std::string& name, bool active, double pcie_gbytes) {
  NicInfo out;
  out.name = name;
  out.kind = "OpenFabrics";
  out.active = active;
  out.pcie_gbytes = pcie_gbytes;
  return out;
}

TEST(PriceLinksTest, NvlinkFiguresFromTheMatrixAreKept) {
  const NodeTopology node =
      uniform_node(4, "NVIDIA H100 80GB HBM3", GpuLink{PathKind::kNvlink, 150.0, Source::kHwlocMatrix, 6});
  const NodeTopology priced = price_links(node, AdminConfig{});
  EXPECT_DOUBLE_EQ(priced.link(0, 3).gbytes, 150.0);
  EXPECT_EQ(priced.link(0, 3).source, Source::kHwlocMatrix);
  // Memory unknown to discovery comes from the table (H100: 80 GiB).
  EXPECT_DOUBLE_EQ(priced.gpus[0].memory_bytes, 80.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(priced.gpus[0].memory_source, Source::kCatalog);
}

TEST(PriceLinksTest, NvswitchWithoutAFigureTakesTheTablesPairRate) {
  const NodeTopology node =
      uniform_node(8, "GA100 [A100 SXM4 40GB]", GpuLink{PathKind::kNvswitch, 0.0, Source::kNone, 0});
  const NodeTopology priced = price_links(node, AdminConfig{});
  EXPECT_DOUBLE_EQ(priced.link(1, 6).gbytes, 300.0);  // built-in a100: 12 links x 25 GB/s
  EXPECT_EQ(priced.link(1, 6).source, Source::kCatalog);
}

TEST(PriceLinksTest, PcieRulesApplyTheEfficiencyAndTheSocketCap) {
  NodeTopology node = uniform_node(4, "Tesla T4", GpuLink{PathKind::kPcieSwitch, 15.75, Source::kPcieRule, 0});
  node.link(0, 2) = node.link(2, 0) = GpuLink{PathKind::kHostBridge, 15.75, Source::kPcieRule, 0};
  node.link(0, 3) = node.link(3, 0) = GpuLink{PathKind::kCrossSocket, 15.75, Source::kPcieRule, 0};
  node.link(0, 1) = node.link(1, 0) = GpuLink{PathKind::kPcieSwitch, 7.88, Source::kPcieRule, 0};  // Gen3 x8
  AdminConfig config;
  config.node.pcie_efficiency = 0.8;
  config.node.inter_socket_gbytes = 10.0;
  const NodeTopology priced = price_links(node, config);
  EXPECT_DOUBLE_EQ(priced.link(2, 3).gbytes, 15.75 * 0.8);
  EXPECT_DOUBLE_EQ(priced.link(0, 2).gbytes, 15.75 * 0.8);
  EXPECT_DOUBLE_EQ(priced.link(0, 1).gbytes, 7.88 * 0.8);
  EXPECT_DOUBLE_EQ(priced.link(0, 3).gbytes, 10.0);  // 12.6 capped by the sockets' link
  EXPECT_EQ(priced.link(0, 3).source, Source::kPcieRule);
  EXPECT_EQ(priced.link(0, 3).kind, PathKind::kCrossSocket);
}

TEST(PriceLinksTest, UnknownPcieSpeedsCountAsGen3x16) {
  // VMs report 0 for link speeds.
  const NodeTopology node = uniform_node(2, "Tesla T4", GpuLink{PathKind::kPcieSwitch, 0.0, Source::kPcieRule, 0});
  EXPECT_DOUBLE_EQ(price_links(node, AdminConfig{}).link(0, 1).gbytes, 15.75 * 0.76);
}

TEST(PriceLinksTest, OverridesReplaceWhatWasFound) {
  const NodeTopology node =
      uniform_node(2, "Tesla V100-SXM2-16GB", GpuLink{PathKind::kHostBridge, 15.75, Source::kPcieRule, 0});
  AdminConfig config;
  config.overrides.nvlink_gbytes = 50.0;
  config.overrides.gpu_memory_gib = 16.0;
  const NodeTopology priced = price_links(node, config);
  EXPECT_EQ(priced.link(0, 1).kind, PathKind::kNvlink);
  EXPECT_DOUBLE_EQ(priced.link(0, 1).gbytes, 50.0);
  EXPECT_EQ(priced.link(0, 1).source, Source::kConfig);
  EXPECT_DOUBLE_EQ(priced.gpus[1].memory_bytes, 16.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(priced.gpus[1].memory_source, Source::kConfig);
}

TEST(PriceLinksTest, MixedModelsAndEmptyNodesAreRefused) {
  NodeTopology node =
      uniform_node(2, "Tesla V100-SXM2-16GB", GpuLink{PathKind::kNvlink, 50.0, Source::kHwlocMatrix, 2});
  node.gpus[1].model = "Tesla T4";
  try {
    price_links(node, AdminConfig{});
    FAIL() << "expected an error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("mixes GPU models ('Tesla V100-SXM2-16GB' at 0000:00:00.0, 'Tesla T4' at 0000:01:00.0)"));
  }
  EXPECT_THROW(price_links(NodeTopology{}, AdminConfig{}), UsageError);
}

TEST(NetworkEstimateTest, ActiveNicsCountEachCappedByItsPcieLink) {
  NodeTopology node;
  node.nics = {nic("mlx5_0", true, 31.5), nic("mlx5_1", false, 31.5), nic("mlx5_2", true, 0.0),
               nic("mlx5_3", true, 15.75)};
  NicInfo ethernet = nic("eth0", true, 0.0);
  ethernet.kind = "network";
  node.nics.push_back(ethernet);  // not counted: the fabric is InfiniBand/RoCE/EFA
  FabricConfig fabric;
  fabric.nic_gbits = 200.0;  // 25 GB/s per port
  const NetworkEstimate net = estimate_network(node, fabric);
  EXPECT_EQ(net.nics, 3);
  EXPECT_DOUBLE_EQ(net.gbytes, 25.0 + 25.0 + 15.75);
  fabric.nics_per_node = 8;  // the admin's count wins
  EXPECT_DOUBLE_EQ(estimate_network(node, fabric).gbytes, 200.0);
  EXPECT_EQ(estimate_network(NodeTopology{}, FabricConfig{}).nics, 1);
}

TEST(BuildDeviceGraphTest, NodesAreCopiesOfThePricedNode) {
  NodeTopology node =
      uniform_node(4, "NVIDIA H100 80GB HBM3", GpuLink{PathKind::kNvlink, 150.0, Source::kHwlocMatrix, 6});
  node.nics = {nic("mlx5_0", true, 63.0)};
  AdminConfig config;
  config.fabric.nic_gbits = 400.0;
  config.node.precision = Precision::kBf16;
  const DeviceGraph graph = build_device_graph(price_links(node, config), 3, config);
  EXPECT_EQ(graph.device_count(), 12);
  EXPECT_EQ(graph.gpus_per_node(), 4);
  EXPECT_DOUBLE_EQ(graph.link(4, 7).bandwidth, 150e9);  // inside node 1
  EXPECT_DOUBLE_EQ(graph.link(0, 4).bandwidth, 45e9);   // across nodes: one 400 Gb/s port, 90 % over RDMA
  EXPECT_DOUBLE_EQ(graph.device().peak_flops, 989.4e12);
  EXPECT_EQ(graph.device().bytes_per_element, 2);
  EXPECT_EQ(graph.device().model, "NVIDIA H100 80GB HBM3");
}

}  // namespace
}  // namespace layerplan
