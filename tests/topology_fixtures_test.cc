// Discovery from the real hwloc exports in tests/data/topologies/: for each machine, the
// GPUs (count, model, memory, UUID, bus id, NUMA node), the NVSwitches, how every GPU
// pair is linked and with what figure, and which NICs are active, as
// tests/data/topologies/README.md describes them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "topology/discovery.h"
#include "topology/node_topology.h"

namespace layerplan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string fixture(const std::string& name) {
  return std::string(LAYERPLAN_SOURCE_DIR) + "/tests/data/topologies/" + name;
}

NodeTopology load(const std::string& name) {
  DiscoveryOptions options;
  options.topology_xml = fixture(name);
  return discover_node(options);
}

std::vector<std::string> active_openfabrics(const NodeTopology& node) {
  std::vector<std::string> names;
  for (const NicInfo& nic : node.nics) {
    if (nic.kind == "OpenFabrics" && nic.active) names.push_back(nic.name);
  }
  return names;
}

std::vector<int> numa_nodes(const NodeTopology& node) {
  std::vector<int> out;
  for (const GpuInfo& gpu : node.gpus) out.push_back(gpu.numa_node);
  return out;
}

// Every off-diagonal pair has this kind, figure and source; the diagonal is kSelf.
void expect_all_pairs(const NodeTopology& node, PathKind kind, double gbytes, Source source, int nvlinks) {
  for (int a = 0; a < node.gpu_count(); ++a) {
    for (int b = 0; b < node.gpu_count(); ++b) {
      const GpuLink& link = node.link(a, b);
      if (a == b) {
        EXPECT_EQ(link.kind, PathKind::kSelf);
        continue;
      }
      EXPECT_EQ(link.kind, kind) << a << "->" << b << ": " << path_kind_name(link.kind);
      EXPECT_DOUBLE_EQ(link.gbytes, gbytes) << a << "->" << b;
      EXPECT_EQ(link.source, source) << a << "->" << b << ": " << source_name(link.source);
      EXPECT_EQ(link.nvlinks, nvlinks) << a << "->" << b;
    }
  }
}

constexpr double kKiB = 1024.0;

TEST(FixtureXe8640, FourH100WithAllPairsAt150GBpsFromTheMatrix) {
  const NodeTopology node = load("flux-dell-xe8640-4xh100-nvlink-4xndr.xml");
  ASSERT_EQ(node.gpu_count(), 4);
  EXPECT_THAT(node.origin, HasSubstr("flux-dell-xe8640-4xh100-nvlink-4xndr.xml"));
  const std::vector<std::string> bus_ids = {"0000:4e:00.0", "0000:5f:00.0", "0000:cb:00.0", "0000:db:00.0"};
  for (int i = 0; i < 4; ++i) {
    const GpuInfo& gpu = node.gpus[static_cast<size_t>(i)];
    EXPECT_EQ(gpu.pci_bus_id, bus_ids[static_cast<size_t>(i)]);
    EXPECT_EQ(gpu.model, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(gpu.model_source, Source::kHwloc);
    EXPECT_DOUBLE_EQ(gpu.memory_bytes, 83026944 * kKiB);  // CUDAGlobalMemorySize, KiB
    EXPECT_EQ(gpu.memory_source, Source::kHwloc);
    EXPECT_EQ(gpu.uuid, "GPU-00000000-0000-0000-0000-000000000000");  // anonymised in the export
    EXPECT_NEAR(gpu.pcie_gbytes, 63.015385, 1e-5);                    // Gen5 x16
    EXPECT_EQ(gpu.pcie_path.size(), 4u);
  }
  EXPECT_THAT(node.gpus[0].os_devices, ElementsAre("opencl0d0", "cuda0", "nvml0"));
  // Sub-NUMA clustering: one NUMA node per GPU, two GPUs per socket.
  EXPECT_THAT(numa_nodes(node), ElementsAre(3, 1, 7, 5));
  EXPECT_EQ(node.gpus[0].package, 0);
  EXPECT_EQ(node.gpus[3].package, 1);
  expect_all_pairs(node, PathKind::kNvlink, 150.0, Source::kHwlocMatrix, 6);
  EXPECT_TRUE(node.nvswitches.empty());
  EXPECT_THAT(node.notes, IsEmpty());
}

TEST(FixtureXe8640, OnlyMlx5_0OfFourHcasIsActive) {
  const NodeTopology node = load("flux-dell-xe8640-4xh100-nvlink-4xndr.xml");
  EXPECT_THAT(active_openfabrics(node), ElementsAre("mlx5_0"));
  int openfabrics = 0;
  for (const NicInfo& nic : node.nics) {
    if (nic.kind == "OpenFabrics") ++openfabrics;
    if (nic.name == "mlx5_0") {
      EXPECT_EQ(nic.pci_bus_id, "0000:4d:00.0");
      EXPECT_EQ(nic.numa_node, 3);
      EXPECT_EQ(nic.package, 0);
      EXPECT_NEAR(nic.pcie_gbytes, 31.507692, 1e-5);
    }
    if (nic.kind == "network") {
      EXPECT_FALSE(nic.active) << nic.name;  // hwloc reports no state for them
    }
  }
  EXPECT_EQ(openfabrics, 4);
}

TEST(FixtureDgx2, SixteenV100AllPairsAt150GBpsThroughTwelveNvswitches) {
  const NodeTopology node = load("hwloc-test-nvidia-dgx2-v100-nvswitch.xml");
  ASSERT_EQ(node.gpu_count(), 16);
  EXPECT_EQ(node.nvswitches.size(), 12u);  // one of them has PCI class 0x0000, found by its subtype
  EXPECT_EQ(node.nvswitches[0].pci_bus_id, "0000:61:00.0");
  for (const GpuInfo& gpu : node.gpus) {
    EXPECT_EQ(gpu.model, "Tesla V100-SXM3-32GB-H");
    EXPECT_DOUBLE_EQ(gpu.memory_bytes, 0.0);  // no CUDA device in the export
    EXPECT_EQ(gpu.memory_source, Source::kNone);
    EXPECT_EQ(gpu.pcie_path.size(), 6u);  // host bridge, root port, four PLX levels
  }
  EXPECT_EQ(node.gpus[0].pci_bus_id, "0000:34:00.0");
  EXPECT_EQ(node.gpus[0].uuid, "GPU-d3977428-7a30-086b-2e20-5c1eeed647c6");
  // The NVML devices are co-processors without a subtype here: matched by name.
  EXPECT_THAT(node.gpus[0].os_devices, ElementsAre("nvml0"));
  EXPECT_EQ(node.gpus[15].pci_bus_id, "0000:e7:00.0");
  EXPECT_EQ(node.gpus[15].uuid, "GPU-bb4648d3-e72b-4bac-a32f-4c9f3e4eb547");
  EXPECT_THAT(numa_nodes(node), ElementsAre(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1));
  // 6 switch links of 25 GB/s per GPU; a pair gets the smaller of its two GPUs' sums.
  expect_all_pairs(node, PathKind::kNvswitch, 150.0, Source::kHwlocMatrix, 6);
  EXPECT_TRUE(node.nics.empty());
  EXPECT_THAT(node.notes, IsEmpty());
}

TEST(FixtureP4d, EightA100BehindSixNvswitchesSeenOnlyOnPciHaveUnknownBandwidth) {
  const NodeTopology node = load("aws-ofi-nccl-p4d-24xlarge-8xa100-nvswitch-4xefa.xml");
  ASSERT_EQ(node.gpu_count(), 8);
  ASSERT_EQ(node.nvswitches.size(), 6u);
  for (const NvSwitchInfo& sw : node.nvswitches) EXPECT_EQ(sw.name, "GA100 [A100 NVSwitch]");
  for (const GpuInfo& gpu : node.gpus) {
    EXPECT_EQ(gpu.model, "GA100 [A100 SXM4 40GB]");  // the PCI device name: no CUDA/NVML device
    EXPECT_EQ(gpu.model_source, Source::kHwloc);
    EXPECT_DOUBLE_EQ(gpu.memory_bytes, 0.0);
    EXPECT_TRUE(gpu.uuid.empty());
    // DRM card*/renderD* are not CUDA devices; the opencl* devices hang off the host bridge.
    EXPECT_THAT(gpu.os_devices, IsEmpty());
    EXPECT_NEAR(gpu.pcie_gbytes, 31.507692, 1e-5);
  }
  EXPECT_EQ(node.gpus[0].pci_bus_id, "0000:10:1c.0");
  EXPECT_EQ(node.gpus[7].pci_bus_id, "0000:a0:1d.0");
  EXPECT_THAT(numa_nodes(node), ElementsAre(0, 0, 0, 0, 1, 1, 1, 1));
  expect_all_pairs(node, PathKind::kNvswitch, 0.0, Source::kNone, 0);
  ASSERT_EQ(node.notes.size(), 1u);
  EXPECT_THAT(node.notes[0], HasSubstr("6 NVSwitches"));
  EXPECT_THAT(node.notes[0], HasSubstr("unknown bandwidth"));
}

TEST(FixtureP4d, FourEfaInterfacesAreActive) {
  const NodeTopology node = load("aws-ofi-nccl-p4d-24xlarge-8xa100-nvswitch-4xefa.xml");
  EXPECT_THAT(active_openfabrics(node), ElementsAre("rdmap16s27", "rdmap32s27", "rdmap144s27", "rdmap160s27"));
  for (const NicInfo& nic : node.nics) {
    if (nic.name == "rdmap144s27") {
      EXPECT_EQ(nic.device, "Elastic Fabric Adapter (EFA)");
      EXPECT_EQ(nic.pci_bus_id, "0000:90:1b.0");
      EXPECT_EQ(nic.numa_node, 1);
      EXPECT_DOUBLE_EQ(nic.pcie_gbytes, 0.0);  // unknown in the VM
    }
  }
}

TEST(FixtureLassen, FourV100WithoutMatrixFollowThePcieRules) {
  const NodeTopology node = load("mpibind-lassen-power9-4xv100-nvlink-4xib.xml");
  ASSERT_EQ(node.gpu_count(), 4);
  for (const GpuInfo& gpu : node.gpus) {
    EXPECT_EQ(gpu.model, "Tesla V100-SXM2-16GB");
    EXPECT_DOUBLE_EQ(gpu.memory_bytes, 16515072 * kKiB);
    EXPECT_NEAR(gpu.pcie_gbytes, 15.753846, 1e-5);  // a PLX port on the way reports 1.97: not used
  }
  EXPECT_EQ(node.gpus[0].pci_bus_id, "0004:04:00.0");
  EXPECT_EQ(node.gpus[2].pci_bus_id, "0035:03:00.0");
  EXPECT_EQ(node.gpus[0].uuid, "GPU-04732404-7fc3-5ae6-cddd-c879b3a379bb");
  // NVML devices of hwloc 2.2 have no subtype: found by name.
  EXPECT_THAT(node.gpus[0].os_devices, ElementsAre("cuda0", "nvml0"));
  EXPECT_THAT(numa_nodes(node), ElementsAre(0, 0, 8, 8));
  EXPECT_EQ(node.gpus[2].package, 8);
  EXPECT_EQ(node.link(0, 1).kind, PathKind::kPcieSwitch);
  EXPECT_EQ(node.link(2, 3).kind, PathKind::kPcieSwitch);
  EXPECT_EQ(node.link(0, 2).kind, PathKind::kCrossSocket);
  EXPECT_EQ(node.link(1, 3).kind, PathKind::kCrossSocket);
  EXPECT_NEAR(node.link(0, 2).gbytes, 15.753846, 1e-5);
  EXPECT_EQ(node.link(0, 2).source, Source::kPcieRule);
  ASSERT_EQ(node.notes.size(), 1u);
  EXPECT_THAT(node.notes[0], HasSubstr("no NVLink information (no NVLinkBandwidth matrix"));
  EXPECT_THAT(node.notes[0], HasSubstr("PCIe rules used"));
  EXPECT_THAT(active_openfabrics(node), ElementsAre("mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"));
}

TEST(FixtureG4dn, EightT4FourPerSocketPairsAcrossSocketsAreCrossSocket) {
  const NodeTopology node = load("mpibind-aws-g4dn-metal-8xt4-pcie-efa.xml");
  ASSERT_EQ(node.gpu_count(), 8);
  for (const GpuInfo& gpu : node.gpus) {
    EXPECT_EQ(gpu.model, "Tesla T4");
    EXPECT_DOUBLE_EQ(gpu.memory_bytes, 15472384 * kKiB);
    EXPECT_NEAR(gpu.pcie_gbytes, 15.753846, 1e-5);
    // The root ports above the GPUs report 2.0 GB/s (an idle link); pairs use the GPUs' links.
  }
  EXPECT_THAT(numa_nodes(node), ElementsAre(0, 0, 0, 0, 1, 1, 1, 1));
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      if (a == b) continue;
      // Each GPU has its own root port: same socket = through the root complex.
      const PathKind expected = (a < 4) == (b < 4) ? PathKind::kHostBridge : PathKind::kCrossSocket;
      EXPECT_EQ(node.link(a, b).kind, expected) << a << "->" << b;
      EXPECT_NEAR(node.link(a, b).gbytes, 15.753846, 1e-5);
      EXPECT_EQ(node.link(a, b).source, Source::kPcieRule);
    }
  }
  EXPECT_THAT(active_openfabrics(node), ElementsAre("rdmap197s0"));
  EXPECT_EQ(node.nics[0].numa_node, 1);
}

TEST(FixturePascal, TwoP100BehindOnePcieSwitch) {
  const NodeTopology node = load("mpibind-pascal-2xp100-pcie-ib.xml");
  ASSERT_EQ(node.gpu_count(), 2);
  EXPECT_EQ(node.gpus[0].model, "Tesla P100-PCIE-16GB");
  EXPECT_EQ(node.gpus[0].pci_bus_id, "0000:04:00.0");
  EXPECT_EQ(node.gpus[1].pci_bus_id, "0000:07:00.0");
  EXPECT_DOUBLE_EQ(node.gpus[0].memory_bytes, 16671616 * kKiB);
  EXPECT_EQ(node.gpus[0].uuid, "GPU-affad486-897e-9778-18e8-26a7127927a8");
  EXPECT_THAT(numa_nodes(node), ElementsAre(0, 0));
  EXPECT_EQ(node.link(0, 1).kind, PathKind::kPcieSwitch);
  EXPECT_EQ(node.link(1, 0).kind, PathKind::kPcieSwitch);
  EXPECT_NEAR(node.link(0, 1).gbytes, 15.753846, 1e-5);
  EXPECT_EQ(node.link(0, 1).source, Source::kPcieRule);
  EXPECT_THAT(active_openfabrics(node), ElementsAre("mlx5_0"));
  for (const NicInfo& nic : node.nics) {
    if (nic.name == "mlx5_0") {
      EXPECT_EQ(nic.package, 0);
      EXPECT_EQ(nic.device, "MT27800 Family [ConnectX-5]");
    }
  }
}

TEST(FixtureDgx2, ExplicitGpuIndicesKeepTheirLinksAndEverySwitch) {
  DiscoveryOptions options;
  options.topology_xml = fixture("hwloc-test-nvidia-dgx2-v100-nvswitch.xml");
  options.gpu_indices = std::vector<int>{8, 0};
  const NodeTopology node = discover_node(options);
  ASSERT_EQ(node.gpu_count(), 2);
  EXPECT_EQ(node.gpus[0].pci_bus_id, "0000:b7:00.0");
  EXPECT_EQ(node.gpus[1].pci_bus_id, "0000:34:00.0");
  EXPECT_EQ(node.link(0, 1).kind, PathKind::kNvswitch);
  EXPECT_DOUBLE_EQ(node.link(0, 1).gbytes, 150.0);
  EXPECT_EQ(node.link(1, 1).kind, PathKind::kSelf);
  EXPECT_EQ(node.nvswitches.size(), 12u);
}

TEST(FixtureDgx2, SelectionFromTheEnvironmentUsesSlurmStepGpus) {
  DiscoveryOptions options;
  options.topology_xml = fixture("hwloc-test-nvidia-dgx2-v100-nvswitch.xml");
  options.env.slurm_step_gpus = "0-1,15";
  options.env.cuda_visible_devices = "0";  // ignored: Slurm's list wins
  const NodeTopology node = discover_node(options);
  ASSERT_EQ(node.gpu_count(), 3);
  EXPECT_EQ(node.gpus[2].pci_bus_id, "0000:e7:00.0");
}

}  // namespace
}  // namespace layerplan
