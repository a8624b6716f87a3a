// NVML at run time without a GPU: a fake libnvidia-ml (tests/fake_nvml/) loaded through
// LAYERPLAN_NVML_LIBRARY describes NVLinks for GPUs of a real hwloc export, and discovery's
// live path (find_links) turns them into GPU links; a missing or failing library leaves
// the PCIe rules with a note that says why.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "topology/hwloc_reader.h"
#include "topology/link_discovery.h"
#include "topology/nvml_links.h"

namespace layerplan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
const char* const kG4dn = "mpibind-aws-g4dn-metal-8xt4-pcie-efa.xml";
const char* const kP4d = "aws-ofi-nccl-p4d-24xlarge-8xa100-nvswitch-4xefa.xml";
const char* const kG4dnFirstSocket = "0000:18:00.0,0000:19:00.0,0000:35:00.0,0000:36:00.0";

HwlocNode read_fixture(const std::string& name) {
  return read_hwloc_xml(std::string(LAYERPLAN_SOURCE_DIR) + "/tests/data/topologies/" + name);
}

class NvmlLinks : public ::testing::Test {
 protected:
  void SetUp() override {
    clear();
    setenv("LAYERPLAN_NVML_LIBRARY", LAYERPLAN_FAKE_NVML, 1);
  }
  void TearDown() override { clear(); }

  static void clear() {
    for (const char* name : {"LAYERPLAN_NVML_LIBRARY", "LAYERPLAN_FAKE_NVML_INIT_ERROR", "LAYERPLAN_FAKE_NVML_GPUS",
                             "LAYERPLAN_FAKE_NVML_SWITCHES", "LAYERPLAN_FAKE_NVML_VERSION",
                             "LAYERPLAN_FAKE_NVML_HIDDEN", "LAYERPLAN_FAKE_NVML_LINKS_PER_PAIR"}) {
      unsetenv(name);
    }
  }
};

TEST_F(NvmlLinks, LibraryPathComesFromTheEnvironmentOrTheDriverName) {
  EXPECT_EQ(nvml_library_path(), LAYERPLAN_FAKE_NVML);
  unsetenv("LAYERPLAN_NVML_LIBRARY");
  EXPECT_EQ(nvml_library_path(), "libnvidia-ml.so.1");
}

TEST_F(NvmlLinks, FullyMeshedGpusBecomeNvlinkPairsTheOthersStayPcie) {
  setenv("LAYERPLAN_FAKE_NVML_GPUS", kG4dnFirstSocket, 1);
  setenv("LAYERPLAN_FAKE_NVML_LINKS_PER_PAIR", "6", 1);
  const NodeTopology node = find_links(read_fixture(kG4dn), /*from_xml=*/false, /*use_nvml=*/true);
  ASSERT_EQ(node.gpu_count(), 8);
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      if (a == b) continue;
      EXPECT_EQ(node.link(a, b).kind, PathKind::kNvlink) << a << "->" << b;
      EXPECT_DOUBLE_EQ(node.link(a, b).gbytes, 150.0);  // 6 links x 25 GB/s (NVLink 3.0)
      EXPECT_EQ(node.link(a, b).nvlinks, 6);
      EXPECT_EQ(node.link(a, b).source, Source::kNvml);
    }
  }
  EXPECT_EQ(node.link(0, 4).kind, PathKind::kCrossSocket);
  EXPECT_EQ(node.link(0, 4).source, Source::kPcieRule);
  EXPECT_EQ(node.link(4, 5).kind, PathKind::kHostBridge);
  // hwloc already knew these GPUs' model and UUID: NVML does not replace them.
  EXPECT_EQ(node.gpus[0].model, "Tesla T4");
  EXPECT_EQ(node.gpus[0].uuid, "GPU-029490c8-a116-638b-7018-1a6b7a9002ef");
  ASSERT_EQ(node.notes.size(), 1u);
  EXPECT_THAT(node.notes[0], HasSubstr("NVML could not open 4 of 8 GPUs (0000:e7:00.0, "));
}

TEST_F(NvmlLinks, SwitchLinksBecomeNvswitchPairsAndFillWhatHwlocLacked) {
  setenv("LAYERPLAN_FAKE_NVML_GPUS",
         "0000:10:1c.0,0000:10:1d.0,0000:20:1c.0,0000:20:1d.0,0000:90:1c.0,0000:90:1d.0,0000:a0:1c.0,0000:a0:1d.0", 1);
  setenv("LAYERPLAN_FAKE_NVML_SWITCHES",
         "0000:80:1a.0,0000:80:1b.0,0000:80:1c.0,0000:80:1d.0,0000:80:1e.0,0000:80:1f.0", 1);
  setenv("LAYERPLAN_FAKE_NVML_VERSION", "5", 1);  // what A100s report (NVLink 3.1)
  const NodeTopology node = find_links(read_fixture(kP4d), /*from_xml=*/false, /*use_nvml=*/true);
  ASSERT_EQ(node.gpu_count(), 8);
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      if (a == b) continue;
      EXPECT_EQ(node.link(a, b).kind, PathKind::kNvswitch);
      EXPECT_DOUBLE_EQ(node.link(a, b).gbytes, 300.0);  // 12 links x 25 GB/s into the switches
      EXPECT_EQ(node.link(a, b).nvlinks, 12);
      EXPECT_EQ(node.link(a, b).source, Source::kNvml);
    }
  }
  EXPECT_EQ(node.gpus[0].model, "NVIDIA A100-SXM4-40GB");  // instead of the PCI name
  EXPECT_EQ(node.gpus[0].model_source, Source::kNvml);
  EXPECT_DOUBLE_EQ(node.gpus[0].memory_bytes, 40 * kGiB);
  EXPECT_EQ(node.gpus[0].memory_source, Source::kNvml);
  EXPECT_EQ(node.gpus[7].uuid, "GPU-fake0000-0000-0000-0000-0000000000a0");
  EXPECT_THAT(node.notes, IsEmpty());
}

TEST_F(NvmlLinks, PerLinkRateFollowsTheNvlinkVersion) {
  setenv("LAYERPLAN_FAKE_NVML_GPUS", kG4dnFirstSocket, 1);
  setenv("LAYERPLAN_FAKE_NVML_LINKS_PER_PAIR", "2", 1);
  const std::vector<std::pair<const char*, double>> cases = {{"1", 40.0}, {"2", 50.0}, {"6", 50.0}, {"7", 100.0}};
  for (const auto& [version, gbytes] : cases) {
    setenv("LAYERPLAN_FAKE_NVML_VERSION", version, 1);
    const NodeTopology node = find_links(read_fixture(kG4dn), false, true);
    EXPECT_DOUBLE_EQ(node.link(0, 1).gbytes, gbytes) << "NVLink version enum " << version;
  }
}

TEST_F(NvmlLinks, AGpuNvmlCannotOpenIsStillLinkedFromItsPeers) {
  setenv("LAYERPLAN_FAKE_NVML_GPUS", kG4dnFirstSocket, 1);
  setenv("LAYERPLAN_FAKE_NVML_HIDDEN", "0000:36:00.0", 1);
  const NodeTopology node = find_links(read_fixture(kG4dn), false, true);
  EXPECT_EQ(node.link(3, 0).kind, PathKind::kNvlink);
  EXPECT_DOUBLE_EQ(node.link(3, 0).gbytes, 150.0);
  EXPECT_THAT(node.notes[0], HasSubstr("NVML could not open 5 of 8 GPUs (0000:36:00.0, 0000:e7:00.0"));
}

TEST_F(NvmlLinks, MissingLibraryLeavesThePcieRulesWithANote) {
  setenv("LAYERPLAN_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  NodeTopology direct = read_fixture(kG4dn).topology;
  const NvmlReport report = add_nvml_links(direct);
  EXPECT_FALSE(report.loaded);
  EXPECT_THAT(report.why, HasSubstr("/nonexistent/libnvidia-ml.so.1 not loaded ("));

  const NodeTopology node = find_links(read_fixture(kG4dn), false, true);
  EXPECT_EQ(node.link(0, 1).kind, PathKind::kHostBridge);
  EXPECT_EQ(node.link(0, 1).source, Source::kPcieRule);
  ASSERT_EQ(node.notes.size(), 1u);
  EXPECT_THAT(node.notes[0], HasSubstr("no NVLink information (no NVLinkBandwidth matrix; NVML not available: "
                                       "/nonexistent/libnvidia-ml.so.1 not loaded"));
  EXPECT_THAT(node.notes[0], HasSubstr("PCIe rules used"));
}

TEST_F(NvmlLinks, FailedInitSaysWithWhichCode) {
  setenv("LAYERPLAN_FAKE_NVML_INIT_ERROR", "9", 1);
  const NodeTopology node = find_links(read_fixture(kG4dn), false, true);
  EXPECT_EQ(node.link(0, 4).kind, PathKind::kCrossSocket);
  ASSERT_EQ(node.notes.size(), 1u);
  EXPECT_THAT(node.notes[0], HasSubstr("NVML not available: nvmlInit_v2 failed with code 9 (Driver Not Loaded)"));
}

TEST_F(NvmlLinks, ALibraryWithoutNvmlSymbolsIsNamed) {
  setenv("LAYERPLAN_NVML_LIBRARY", "libm.so.6", 1);
  NodeTopology node = read_fixture(kG4dn).topology;
  const NvmlReport report = add_nvml_links(node);
  EXPECT_FALSE(report.loaded);
  EXPECT_EQ(report.why, "libm.so.6 lacks nvmlInit_v2");
}

TEST_F(NvmlLinks, NvmlReportingNoLinksMeansPcieWithoutGuessing) {
  setenv("LAYERPLAN_FAKE_NVML_GPUS", kG4dnFirstSocket, 1);
  setenv("LAYERPLAN_FAKE_NVML_LINKS_PER_PAIR", "0", 1);
  const NodeTopology node = find_links(read_fixture(kP4d), false, true);
  // p4d's GPUs are unknown to this fake NVML, but NVML answered: no NVSwitch guess.
  EXPECT_EQ(node.link(0, 1).kind, PathKind::kHostBridge);
  EXPECT_THAT(node.notes,
              ElementsAre(HasSubstr("could not open 8 of 8"), "NVML reports no active NVLink: PCIe rules used"));
}

TEST_F(NvmlLinks, NvmlIsShutDownAfterUse) {
  void* fake = dlopen(LAYERPLAN_FAKE_NVML, RTLD_NOW);  // keeps the counter loaded
  ASSERT_NE(fake, nullptr) << dlerror();
  auto shutdowns = reinterpret_cast<int (*)()>(dlsym(fake, "fake_nvml_shutdowns"));
  ASSERT_NE(shutdowns, nullptr);
  const int before = shutdowns();
  setenv("LAYERPLAN_FAKE_NVML_GPUS", kG4dnFirstSocket, 1);
  NodeTopology node = read_fixture(kG4dn).topology;
  EXPECT_TRUE(add_nvml_links(node).loaded);
  EXPECT_EQ(shutdowns(), before + 1);
  dlclose(fake);
}

TEST_F(NvmlLinks, XmlInputNeverQueriesNvml) {
  setenv("LAYERPLAN_FAKE_NVML_GPUS", kG4dnFirstSocket, 1);
  const NodeTopology node = find_links(read_fixture(kG4dn), /*from_xml=*/true, /*use_nvml=*/true);
  EXPECT_EQ(node.link(0, 1).kind, PathKind::kHostBridge);
  EXPECT_THAT(node.notes[0], HasSubstr("NVML is not queried for XML input"));
}

}  // namespace
}  // namespace layerplan
