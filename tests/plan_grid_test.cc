// The searched plan is never slower by the step timeline than any baseline, any mix of it
// with data parallelism or any plan on the job's first nodes, over the grid a new user
// tries: five zoo models x four clusters x 4, 32 and 128 images per GPU. Cells where no
// plan fits in GPU memory are skipped (make_plan() refuses them), and counted.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error.h"
#include "model/zoo.h"
#include "planner/planner.h"
#include "topology/cluster_spec.h"

namespace layerplan {
namespace {

struct Cluster {
  std::string name;
  ClusterSpec spec;
};

ClusterSpec cluster(int nodes, int per_node, const std::string& gpu, Precision precision, double gbits, int nics) {
  ClusterSpec spec;
  spec.nodes = nodes;
  spec.gpus_per_node = per_node;
  spec.gpu = gpu;
  spec.precision = precision;
  spec.inter_bandwidth_gbits = gbits;
  spec.nics_per_node = nics;
  return spec;
}

std::vector<Cluster> clusters() {
  return {{"16 P100 (the paper's)", ClusterSpec::paper_cluster()},
          {"64 A100, 8 x 200 Gb/s", cluster(8, 8, "a100", Precision::kBf16, 200, 8)},
          {"256 H100, 8 x 400 Gb/s", cluster(32, 8, "h100", Precision::kBf16, 400, 8)},
          {"64 H100, 1 x 100 Gb/s", cluster(8, 8, "h100", Precision::kBf16, 100, 1)}};
}

class PlanGrid : public ::testing::TestWithParam<std::string> {};

TEST_P(PlanGrid, TheSearchedPlanIsNeverSlowerThanAnyBaselineOrMix) {
  int planned = 0;
  for (const Cluster& c : clusters()) {
    const DeviceGraph devices = build_device_graph(c.spec);
    for (const int64_t per_gpu : {4, 32, 128}) {
      SCOPED_TRACE(GetParam() + " on " + c.name + " at " + std::to_string(per_gpu) + " per GPU");
      const ModelGraph graph = build_zoo_model(GetParam(), per_gpu * devices.device_count());
      Plan plan;
      try {
        plan = make_plan(graph, devices);
      } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("fits no plan"), std::string::npos) << e.what();
        continue;
      }
      ++planned;
      ASSERT_FALSE(plan.fell_back()) << plan.warning;
      const double searched = plan.layer_wise.step_s() * (1 - 1e-12);
      for (const auto* group : {&plan.baselines, &plan.mixed, &plan.node_prefixes}) {
        for (const StrategyCost& s : *group) {
          EXPECT_LE(searched, s.step_s()) << s.name;
          EXPECT_LE(plan.lower_bound_s, s.step_s() * (1 + 1e-12)) << s.name;
        }
      }
      EXPECT_LE(plan.chosen.step_s(), plan.baselines.front().step_s() * (1 + 1e-12));
      EXPECT_GT(plan.lower_bound_s, 0);
    }
  }
  EXPECT_GE(planned, 10);
}

INSTANTIATE_TEST_SUITE_P(ZooModels, PlanGrid,
                         ::testing::Values("alexnet", "vgg16", "resnet50", "resnet101", "inception_v3"));

}  // namespace
}  // namespace layerplan
