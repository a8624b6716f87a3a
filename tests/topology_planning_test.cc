// The planner on discovered nodes: four V100s planned on an NVSwitch board (DGX-2,
// 150 GB/s per pair) and on a node where discovery finds only PCIe (Lassen's export has no
// NVLink matrix: 12 GB/s, 10 across sockets) are priced over their own links, and each plan
// is the better one on its own links. Before weight sync was priced in NCCL's buckets, the
// NVLink plan split some layers by channels to synchronize fewer replicas; with bucketed
// all-reduces that sync is cheap on both boards, and ResNet-50 gets the same plan on both.
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

StrategyCost priced_on(const JobPlan& where, const std::vector<Configuration>& configs) {
  const CostModel model(where.graph, where.devices);
  return price_strategy(model, "other", configs);
}

class NvlinkVersusPcieTest : public ::testing::TestWithParam<const char*> {};

TEST_P(NvlinkVersusPcieTest, EachPlanIsTheBetterOneOnItsOwnLinks) {
  const NodeTopology nvswitch = load("hwloc-test-nvidia-dgx2-v100-nvswitch.xml", {0, 1, 2, 3});
  const NodeTopology pcie = load("mpibind-lassen-power9-4xv100-nvlink-4xib.xml", {0, 1, 2, 3});
  ASSERT_EQ(nvswitch.link(0, 1).kind, PathKind::kNvswitch);
  ASSERT_NE(pcie.link(0, 1).kind, PathKind::kNvlink);
  ASSERT_NE(pcie.link(0, 1).kind, PathKind::kNvswitch);

  JobRequest request;
  request.model = GetParam();
  request.batch = 64;
  const AdminConfig config;
  for (const PlanMode mode : {PlanMode::kLayerwise, PlanMode::kAuto}) {
    request.mode = mode;
    const JobPlan on_nvlink = plan_job(request, nvswitch, config);
    const JobPlan on_pcie = plan_job(request, pcie, config);
    // Same GPU figures on both: only the links differ.
    ASSERT_EQ(on_nvlink.devices.device().peak_flops, on_pcie.devices.device().peak_flops);
    const auto nv_configs = configurations(on_nvlink.plan.chosen);
    const auto pcie_configs = configurations(on_pcie.plan.chosen);
    for (const std::string& d : channel_splits_only_on_nvlink(on_nvlink, on_pcie)) {
      RecordProperty("channel_split_on_nvlink_only", d);
    }
    if (mode == PlanMode::kLayerwise) {
      // The search's plan is the faster one by the timeline on its own links, and the other
      // board's plan is no faster than the search's lower bound.
      EXPECT_LE(on_nvlink.plan.chosen.step_s(), priced_on(on_nvlink, pcie_configs).step_s() * (1 + 1e-9));
      EXPECT_LE(on_pcie.plan.chosen.step_s(), priced_on(on_pcie, nv_configs).step_s() * (1 + 1e-9));
      EXPECT_LE(on_pcie.plan.lower_bound_s, priced_on(on_pcie, nv_configs).step_s() * (1 + 1e-9));
    } else {
      // Auto takes the searched plan, or data parallelism when the searched plan is not
      // faster by more than the simplicity margin.
      for (const JobPlan* job : {&on_nvlink, &on_pcie}) {
        const Plan& p = job->plan;
        EXPECT_LE((1 - p.min_gain) * p.chosen.step_s(), p.layer_wise.step_s() * (1 + 1e-9));
        for (const StrategyCost& b : p.baselines) EXPECT_LE(p.layer_wise.step_s(), b.step_s() * (1 + 1e-9));
        EXPECT_LE(p.chosen.step_s(), p.baselines.front().step_s() * (1 + 1e-9));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, NvlinkVersusPcieTest, ::testing::Values("resnet50", "inception_v3"));

}  // namespace
}  // namespace layerplan
