// The planner on discovered nodes: four V100s planned on an NVSwitch board (DGX-2,
// 150 GB/s per pair) and on a node where discovery finds only PCIe (Lassen's export has no
// NVLink matrix: 12 GB/s, 10 across sockets) get different plans, and the prices say why.
// On NVLink some layers are split by channels as well as samples: their weights are
// synchronized among fewer replicas, and the activations that move instead cost little at
// 150 GB/s; over PCIe those moves cost more than the sync they save. Each plan is the
// cheaper one on its own links and the dearer one on the other's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "job/job_plan.h"
#include "planner/cost_model.h"
#include "topology/discovery.h"

namespace layerplan {
namespace {

const std::string kTopologies = std::string(LAYERPLAN_SOURCE_DIR) + "/tests/data/topologies/";

NodeTopology load(const std::string& file, std::vector<int> gpus) {
  DiscoveryOptions options;
  options.topology_xml = kTopologies + file;
  options.gpu_indices = std::move(gpus);
  return discover_node(options);
}

std::vector<Configuration> configurations(const StrategyCost& s) {
  std::vector<Configuration> out;
  for (const LayerCost& l : s.layers) out.push_back(l.config);
  return out;
}

// Layers the NVLink plan splits by channels and the PCIe plan does not, as "name: NV vs PCIe".
std::vector<std::string> channel_splits_only_on_nvlink(const JobPlan& nv, const JobPlan& pcie) {
  std::vector<std::string> out;
  for (const Layer& l : nv.graph.layers()) {
    const Configuration& a = nv.plan.chosen.layers[static_cast<size_t>(l.id)].config;
    const Configuration& b = pcie.plan.chosen.layers[static_cast<size_t>(l.id)].config;
    if (a.degrees[1] > 1 && b.degrees[1] == 1) out.push_back(l.name + ": " + a.str() + " vs " + b.str());
  }
  return out;
}

double step_on(const JobPlan& where, const std::vector<Configuration>& configs) {
  const CostModel model(where.graph, where.devices);
  return price_strategy(model, "other", configs).step_s();
}

class NvlinkVersusPcieTest : public ::testing::TestWithParam<const char*> {};

TEST_P(NvlinkVersusPcieTest, PlansDifferWherePricesSayTheyShould) {
  const NodeTopology nvswitch = load("hwloc-test-nvidia-dgx2-v100-nvswitch.xml", {0, 1, 2, 3});
  const NodeTopology pcie = load("mpibind-lassen-power9-4xv100-nvlink-4xib.xml", {0, 1, 2, 3});
  ASSERT_EQ(nvswitch.link(0, 1).kind, PathKind::kNvswitch);
  ASSERT_NE(pcie.link(0, 1).kind, PathKind::kNvlink);
  ASSERT_NE(pcie.link(0, 1).kind, PathKind::kNvswitch);

  JobRequest request;
  request.mode = PlanMode::kLayerwise;
  request.model = GetParam();
  request.batch = 64;
  const AdminConfig config;
  const JobPlan on_nvlink = plan_job(request, nvswitch, config);
  const JobPlan on_pcie = plan_job(request, pcie, config);
  // Same GPU figures on both: only the links differ.
  ASSERT_EQ(on_nvlink.devices.device().peak_flops, on_pcie.devices.device().peak_flops);

  const auto nv_configs = configurations(on_nvlink.plan.chosen);
  const auto pcie_configs = configurations(on_pcie.plan.chosen);
  // Layers the NVLink plan splits by channel (less weight to synchronize, activations to
  // move) where the PCIe plan keeps data parallelism.
  const std::vector<std::string> differ = channel_splits_only_on_nvlink(on_nvlink, on_pcie);
  EXPECT_FALSE(differ.empty()) << "no layer is channel-split on NVLink only";
  for (const std::string& d : differ) RecordProperty("channel_split_on_nvlink_only", d);
  // Each plan is strictly better on its own links than the other plan there.
  EXPECT_LT(on_nvlink.plan.chosen.step_s(), step_on(on_nvlink, pcie_configs));
  EXPECT_LT(on_pcie.plan.chosen.step_s(), step_on(on_pcie, nv_configs));
  // The NVLink plan buys its time by moving activations between GPUs.
  EXPECT_GT(on_nvlink.plan.chosen.transfer_bytes, on_pcie.plan.chosen.transfer_bytes);
}

INSTANTIATE_TEST_SUITE_P(Models, NvlinkVersusPcieTest, ::testing::Values("resnet50", "inception_v3"));

}  // namespace
}  // namespace layerplan
