// `layerplan topo` and `layerplan plan --topology-xml` as a user runs them: the GPUs, the
// bandwidth matrix, the NICs and where each value came from; the job's GPUs from flags
// or the environment; plans on discovered nodes; and one clear line with exit code 2 for
// every kind of bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "tests/cli_harness.h"
#include "tests/cli_usage_error.h"

namespace layerplan {
namespace {

using namespace testing_cli;  // NOLINT: the harness is this file's vocabulary
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kXe8640 = data_file("topologies/flux-dell-xe8640-4xh100-nvlink-4xndr.xml");
const std::string kDgx2 = data_file("topologies/hwloc-test-nvidia-dgx2-v100-nvswitch.xml");
const std::string kG4dn = data_file("topologies/mpibind-aws-g4dn-metal-8xt4-pcie-efa.xml");

TEST(TopoCommand, ShowsGpusMatrixNicsAndSources) {
  const Outcome r = run({"topo", "--topology-xml", kXe8640});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("4 NVIDIA GPUs"));
  EXPECT_THAT(r.out, HasSubstr("NVIDIA H100 80GB HBM3"));
  EXPECT_THAT(r.out, HasSubstr("  150.0"));
  EXPECT_THAT(r.out, HasSubstr("NVLink from hwloc matrix: 12"));
  EXPECT_THAT(r.out, HasSubstr("mlx5_0"));
  EXPECT_THAT(r.out, HasSubstr("To other nodes: 12.5 GB/s one way (1 active NIC"));
}

TEST(TopoCommand, JsonHasEveryPairAndItsSource) {
  ScratchDir dir;
  const std::string file = (dir.path() / "topo.json").string();
  const Outcome r = run({"topo", "--topology-xml", kDgx2, "--json", file});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const auto doc = nlohmann::json::parse(read_text(file));
  ASSERT_EQ(doc["gpus"].size(), 16u);
  ASSERT_EQ(doc["links"].size(), 16u * 15u);
  for (const auto& link : doc["links"]) {
    EXPECT_EQ(link["path"], "NVSwitch");
    EXPECT_DOUBLE_EQ(link["gbytes"].get<double>(), 150.0);
    EXPECT_EQ(link["source"], "hwloc matrix");
  }
  EXPECT_EQ(doc["nvswitches"].size(), 12u);
}

TEST(TopoCommand, TheJobsGpusComeFromFlagsOrTheEnvironment) {
  Outcome r = run({"topo", "--topology-xml", kG4dn, "--gpus", "1,6"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("2 NVIDIA GPUs"));
  r = run({"topo", "--topology-xml", kG4dn}, {"SLURM_STEP_GPUS=0-2", "CUDA_VISIBLE_DEVICES=0"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("3 NVIDIA GPUs"));
  r = run({"topo"}, {"LAYERPLAN_TOPOLOGY_XML=" + kG4dn, "CUDA_VISIBLE_DEVICES=4,5,6,7"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("4 NVIDIA GPUs"));
}

TEST(TopoCommand, BadInputIsOneLineAndExitTwo) {
  expect_usage_error(run({"topo", "--topology-xml", "/nonexistent/node.xml"}), "/nonexistent/node.xml");
  expect_usage_error(run({"topo", "--topology-xml", kG4dn, "--gpus", "0,9"}), "9");
  expect_usage_error(run({"topo", "--topology-xml", kG4dn, "--gpus", "zero"}), "--gpus 'zero'");
  expect_usage_error(run({"topo", "--topology-xml", kG4dn}, {"CUDA_VISIBLE_DEVICES=MIG-abc"}), "MIG");
  expect_usage_error(run({"topo", "--topology-xml", kG4dn, "--config", "/nonexistent/layerplan.toml"}),
                     "admin config '/nonexistent/layerplan.toml' cannot be read");
}

TEST(TopoCommand, BrokenFilesAreOneLineAndExitTwo) {
  ScratchDir dir;
  const std::string malformed = (dir.path() / "malformed.xml").string();
  write_text(malformed, "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n<object type=\"Machine\"\n");
  expect_usage_error(run({"topo", "--topology-xml", malformed}), malformed);

  // An hwloc 3 export: the fixture with its version changed, as hwloc 3 writes it by default.
  std::string text = read_text(kG4dn);
  const size_t at = text.find("version=\"2.0\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 13, "version=\"3.0\"");
  const std::string v3 = (dir.path() / "v3.xml").string();
  write_text(v3, text);
  const Outcome r = run({"topo", "--topology-xml", v3});
  expect_usage_error(r, "lstopo --of v2xml");
  EXPECT_THAT(r.err, HasSubstr("hwloc 3"));

  const std::string config = (dir.path() / "layerplan.toml").string();
  write_text(config, "[fabric]\nnic_gbits = \"fast\"\n");
  expect_usage_error(run({"topo", "--topology-xml", kG4dn, "--config", config}),
                     config + ":2:13: fabric.nic_gbits: nic_gbits 'fast': expected a bandwidth");
  const std::string before = read_text(config);
  expect_usage_error(run({"plan", "--topology-xml", kG4dn, "--config", config, "--json", config}), config + ":2:13");
  EXPECT_EQ(read_text(config), before) << "a failed command must leave --json's file as it was";
}

TEST(PlanOnTopology, PlansIdenticalNodesAndWritesAPlanFile) {
  ScratchDir dir;
  const std::string file = (dir.path() / "plan.json").string();
  const Outcome r = run({"plan", "--topology-xml", kXe8640, "--nodes", "2", "--model", "resnet50", "--json", file});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, StartsWith("model resnet50, batch 256, 2 nodes x 4 NVIDIA H100 80GB HBM3"));
  const auto doc = nlohmann::json::parse(read_text(file));
  EXPECT_EQ(doc["cluster"]["devices"], 8);
  EXPECT_EQ(doc["cluster"]["gpu"], "NVIDIA H100 80GB HBM3");
}

TEST(PlanOnTopology, ClusterFlagsDoNotMixWithADiscoveredNode) {
  expect_usage_error(run({"plan", "--topology-xml", kXe8640, "--gpus", "8"}), "use one or the other");
  expect_usage_error(run({"plan", "--nodes", "2"}), "--nodes, --gpu-ids and --config go with --topology-xml");
  expect_usage_error(run({"plan", "--topology-xml", kXe8640, "--mode", "fast"}),
                     "--mode: 'fast': expected layerwise, auto, data, model or owt");
}

}  // namespace
}  // namespace layerplan
