// NIC rates from sysfs (topology/nic_rates.h) and how the network estimate uses them
// (docs/topology.md, "NIC rates from sysfs"): fake sysfs trees in a scratch folder, with
// rates that parse, ports that are down, and files that are garbage, unreadable or missing.
#include <sys/stat.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/scratch_dir.h"
#include "topology/discovery.h"
#include "topology/nic_rates.h"
#include "topology/topology_device_graph.h"

namespace layerplan {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::string kXe8640 =
    std::string(LAYERPLAN_SOURCE_DIR) + "/tests/data/topologies/flux-dell-xe8640-4xh100-nvlink-4xndr.xml";

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// SYSFS/class/infiniband/NAME/ports/PORT/{state,rate}; an empty state writes no state file.
void ib_port(const fs::path& sysfs, const std::string& name, int port, const std::string& state,
             const std::string& rate) {
  const fs::path dir = sysfs / "class" / "infiniband" / name / "ports" / std::to_string(port);
  if (!state.empty()) write(dir / "state", state + "\n");
  write(dir / "rate", rate + "\n");
}

NicInfo make_nic(const std::string& name, const std::string& kind, bool active) {
  NicInfo nic;
  nic.name = name;
  nic.kind = kind;
  nic.active = active;
  return nic;
}

NodeTopology node_with(std::vector<NicInfo> nics) {
  NodeTopology node;
  node.nics = std::move(nics);
  return node;
}

const NicInfo& find_nic(const NodeTopology& node, const std::string& name) {
  for (const NicInfo& nic : node.nics) {
    if (nic.name == name) return nic;
  }
  throw std::runtime_error("no NIC " + name);
}

TEST(NicRatesParse, InfinibandRateText) {
  EXPECT_EQ(parse_ib_rate("400 Gb/sec (4X NDR)\n"), 400.0);
  EXPECT_EQ(parse_ib_rate("2.5 Gb/sec (1X SDR)"), 2.5);
  EXPECT_EQ(parse_ib_rate("100 Gb/sec"), 100.0);
  for (const char* bad : {"", "fast", "400", "400 Gb/s", "-5 Gb/sec (4X)", "0 Gb/sec (4X)", "Gb/sec", "400Gb/sec"}) {
    EXPECT_FALSE(parse_ib_rate(bad).has_value()) << bad;
  }
}

TEST(NicRatesParse, EthernetSpeedInMegabits) {
  bool garbage = true;
  EXPECT_EQ(parse_net_speed("25000\n", garbage), 25.0);
  EXPECT_FALSE(garbage);
  EXPECT_FALSE(parse_net_speed("-1\n", garbage).has_value());  // link down
  EXPECT_FALSE(garbage);
  EXPECT_FALSE(parse_net_speed("0", garbage).has_value());
  EXPECT_FALSE(garbage);
  for (const char* bad : {"", "fast", "25 Gb/s", "-7", "1e5", "99999999999999999999999"}) {
    EXPECT_FALSE(parse_net_speed(bad, garbage).has_value()) << bad;
    EXPECT_TRUE(garbage) << bad;
  }
}

TEST(NicRates, TheXe8640sActiveHcaTakesItsActivePortsRate) {
  ScratchDir sysfs;
  ib_port(sysfs.path(), "mlx5_0", 1, "4: ACTIVE", "400 Gb/sec (4X NDR)");
  ib_port(sysfs.path(), "mlx5_1", 1, "1: DOWN", "10 Gb/sec (4X SDR)");
  DiscoveryOptions options;
  options.topology_xml = kXe8640;
  options.sysfs_root = sysfs.path().string();
  const NodeTopology node = discover_node(options);
  const NicInfo& hca = find_nic(node, "mlx5_0");
  EXPECT_DOUBLE_EQ(hca.rate_gbits, 400.0);
  EXPECT_EQ(hca.rate_from, "sysfs: mlx5_0 port 1");
  EXPECT_DOUBLE_EQ(find_nic(node, "mlx5_1").rate_gbits, 0.0) << "a port that is down gives no rate";

  const NetworkEstimate net = estimate_network(node, FabricConfig{});
  ASSERT_EQ(net.ports.size(), 1u);
  EXPECT_EQ(net.ports[0].from, "sysfs: mlx5_0 port 1");
  EXPECT_DOUBLE_EQ(net.ports[0].gbits, 400.0);
  const double expected = hca.pcie_gbytes > 0 ? std::min(50.0, hca.pcie_gbytes) : 50.0;
  EXPECT_DOUBLE_EQ(net.gbytes, expected);
  EXPECT_EQ(net.how, "1 active NIC: mlx5_0 400 Gb/s (sysfs: mlx5_0 port 1), capped by its PCIe link");

  FabricConfig admin;
  admin.nic_gbits = 200.0;  // the admin's figure wins over sysfs
  const NetworkEstimate set = estimate_network(node, admin);
  EXPECT_EQ(set.ports[0].from, "admin config");
  EXPECT_EQ(set.how, "1 active NIC x 200 Gb/s (admin config), capped by its PCIe link");
}

TEST(NicRates, AnExportIsNotThisMachineSoSysfsIsReadOnlyWhenNamed) {
  DiscoveryOptions options;
  options.topology_xml = kXe8640;
  const NodeTopology node = discover_node(options);
  EXPECT_DOUBLE_EQ(find_nic(node, "mlx5_0").rate_gbits, 0.0);
  const NetworkEstimate net = estimate_network(node, FabricConfig{});
  EXPECT_EQ(net.ports[0].from, "default");
  EXPECT_DOUBLE_EQ(net.ports[0].gbits, kDefaultNicGbits);
}

TEST(NicRates, TheFastestActivePortCountsAndPortsWithoutStateAreRead) {
  ScratchDir sysfs;
  ib_port(sysfs.path(), "mlx5_0", 1, "1: DOWN", "400 Gb/sec (4X NDR)");
  ib_port(sysfs.path(), "mlx5_0", 2, "4: ACTIVE", "200 Gb/sec (4X HDR)");
  ib_port(sysfs.path(), "rdmap0", 1, "", "100 Gb/sec");
  NodeTopology node = node_with({make_nic("mlx5_0", "OpenFabrics", true), make_nic("rdmap0", "OpenFabrics", true)});
  add_sysfs_nic_rates(node, sysfs.path().string());
  EXPECT_EQ(find_nic(node, "mlx5_0").rate_from, "sysfs: mlx5_0 port 2");
  EXPECT_DOUBLE_EQ(find_nic(node, "mlx5_0").rate_gbits, 200.0);
  EXPECT_DOUBLE_EQ(find_nic(node, "rdmap0").rate_gbits, 100.0);
  EXPECT_THAT(node.notes, IsEmpty());
  const NetworkEstimate net = estimate_network(node, FabricConfig{});
  EXPECT_DOUBLE_EQ(net.gbytes, 25.0 + 12.5);
  EXPECT_EQ(net.how,
            "2 active NICs: mlx5_0 200 Gb/s (sysfs: mlx5_0 port 2), rdmap0 100 Gb/s (sysfs: rdmap0 port 1), capped "
            "by each NIC's PCIe link");
}

TEST(NicRates, GarbageUnreadableAndMissingFilesFallBackWithANote) {
  ScratchDir sysfs;
  ib_port(sysfs.path(), "mlx5_0", 1, "4: ACTIVE", "fast");
  // A folder where the rate should be, and a FIFO nobody writes to: neither may block or crash.
  fs::create_directories(sysfs.path() / "class/infiniband/mlx5_1/ports/1/rate");
  const fs::path fifo = sysfs.path() / "class/infiniband/mlx5_2/ports/1/rate";
  fs::create_directories(fifo.parent_path());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  NodeTopology node = node_with({make_nic("mlx5_0", "OpenFabrics", true), make_nic("mlx5_1", "OpenFabrics", true),
                                 make_nic("mlx5_2", "OpenFabrics", true), make_nic("mlx5_3", "OpenFabrics", true),
                                 make_nic("../x", "OpenFabrics", true)});
  add_sysfs_nic_rates(node, sysfs.path().string());
  for (const NicInfo& nic : node.nics) EXPECT_DOUBLE_EQ(nic.rate_gbits, 0.0) << nic.name;
  ASSERT_EQ(node.notes.size(), 4u);
  EXPECT_EQ(node.notes[0], "mlx5_0 port 1: " + (sysfs.path() / "class/infiniband/mlx5_0/ports/1/rate").string() +
                               " says 'fast', expected e.g. '400 Gb/sec (4X NDR)': no rate from sysfs");
  EXPECT_THAT(node.notes[1], HasSubstr("mlx5_1 port 1: "));
  EXPECT_THAT(node.notes[1], HasSubstr("is a directory, not a regular file: no rate from sysfs"));
  EXPECT_THAT(node.notes[2], HasSubstr("is a FIFO, not a regular file: no rate from sysfs"));
  EXPECT_EQ(node.notes[3], "mlx5_3: no ports under " + (sysfs.path() / "class/infiniband/mlx5_3/ports").string() +
                               ": no rate from sysfs");
  const NetworkEstimate net = estimate_network(node, FabricConfig{});
  EXPECT_EQ(net.ports[0].from, "default");
  EXPECT_THAT(net.how, HasSubstr("x 100 Gb/s (default)"));

  NodeTopology nothing = node_with({make_nic("mlx5_0", "OpenFabrics", true)});
  add_sysfs_nic_rates(nothing, (sysfs.path() / "absent").string());
  EXPECT_THAT(nothing.notes, ElementsAre(HasSubstr("mlx5_0: no ports under")));
}

TEST(NicRates, WithoutAnActiveFabricPortTheFastestEthernetInterfaceCounts) {
  ScratchDir sysfs;
  write(sysfs.path() / "class/net/eth0/speed", "25000\n");
  write(sysfs.path() / "class/net/eth1/speed", "100000\n");
  write(sysfs.path() / "class/net/eth2/speed", "-1\n");
  write(sysfs.path() / "class/net/eth3/speed", "lots\n");
  NodeTopology node = node_with({make_nic("eth0", "network", false), make_nic("eth1", "network", false),
                                 make_nic("eth2", "network", false), make_nic("eth3", "network", false),
                                 make_nic("eth4", "network", false), make_nic("mlx5_0", "OpenFabrics", false)});
  add_sysfs_nic_rates(node, sysfs.path().string());
  EXPECT_EQ(find_nic(node, "eth1").rate_from, "sysfs: eth1 speed");
  EXPECT_DOUBLE_EQ(find_nic(node, "eth0").rate_gbits, 25.0);
  EXPECT_DOUBLE_EQ(find_nic(node, "eth2").rate_gbits, 0.0);
  ASSERT_EQ(node.notes.size(), 1u) << "a link that is down or absent is no mistake; garbage is";
  EXPECT_EQ(node.notes[0], "eth3: " + (sysfs.path() / "class/net/eth3/speed").string() +
                               " says 'lots', expected Mb/s, e.g. '25000': no rate from sysfs");
  const NetworkEstimate net = estimate_network(node, FabricConfig{});
  EXPECT_EQ(net.nics, 1);
  EXPECT_DOUBLE_EQ(net.gbytes, 12.5);
  EXPECT_EQ(net.how,
            "no active InfiniBand/RoCE/EFA interface found: 1 x 100 Gb/s (sysfs: eth1 speed), the fastest Ethernet "
            "interface");

  // With an active InfiniBand port the Ethernet interfaces are not used, and not noted.
  NodeTopology fabric = node_with({make_nic("eth3", "network", false), make_nic("mlx5_0", "OpenFabrics", true)});
  ib_port(sysfs.path(), "mlx5_0", 1, "4: ACTIVE", "400 Gb/sec (4X NDR)");
  add_sysfs_nic_rates(fabric, sysfs.path().string());
  EXPECT_THAT(fabric.notes, IsEmpty());
  EXPECT_EQ(estimate_network(fabric, FabricConfig{}).ports[0].from, "sysfs: mlx5_0 port 1");
}

TEST(NicRates, TheAdminsPortCountTakesTheDiscoveredRate) {
  ScratchDir sysfs;
  ib_port(sysfs.path(), "mlx5_0", 1, "4: ACTIVE", "400 Gb/sec (4X NDR)");
  NodeTopology node = node_with({make_nic("mlx5_0", "OpenFabrics", true)});
  add_sysfs_nic_rates(node, sysfs.path().string());
  FabricConfig fabric;
  fabric.nics_per_node = 8;
  const NetworkEstimate net = estimate_network(node, fabric);
  EXPECT_EQ(net.nics, 8);
  EXPECT_DOUBLE_EQ(net.gbytes, 400.0);
  EXPECT_EQ(net.how, "8 x 400 Gb/s (sysfs: mlx5_0 port 1) (fabric.nics_per_node)");
}

}  // namespace
}  // namespace layerplan
