// Sub-cluster candidates, idle GPUs and the simplicity margin (planner/node_prefixes.h), on a
// one-NIC cluster where a plan on one node is competitive with data parallelism on all 64 GPUs.
#include "planner/node_prefixes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "model/zoo.h"
#include "tests/idle_plan_fixture.h"
#include "topology/cluster_spec.h"

namespace layerplan {
namespace {

// At 4 images per GPU the step is short and the one NIC per node slows data parallelism
// over 64 GPUs: data parallelism on one node is faster (docs/planner.md, "Sub-cluster candidates").
constexpr int kImagesPerGpu = 4;

ClusterSpec one_nic_cluster(int nodes = 8) { return testing_idle::one_nic_cluster(nodes); }

class OneNicTest : public ::testing::Test {
 protected:
  const DeviceGraph devices_ = build_device_graph(one_nic_cluster());
  const ModelGraph graph_ = build_zoo_model("resnet50", int64_t{kImagesPerGpu} * devices_.device_count());
  const CostModel model_{graph_, devices_, PlanOptions{}.sync_options()};

  StrategyCost priced(const std::string& name, const std::vector<Configuration>& configs) const {
    return price_strategy(model_, name, configs, PlanOptions{}.memory);
  }
};

TEST(NodePrefixes, NodeCountsArePowersOfTwoThatDivideNodesAndBatch) {
  const DeviceGraph eight = build_device_graph(one_nic_cluster(8));
  EXPECT_EQ(prefix_node_counts(64 * 32, eight), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(prefix_node_counts(16, eight), (std::vector<int>{1, 2}));  // 16 images split over 8 or 16 GPUs
  EXPECT_EQ(prefix_node_counts(12, eight), (std::vector<int>{}));      // not even over one node
  EXPECT_EQ(prefix_node_counts(48 * 32, build_device_graph(one_nic_cluster(6))), (std::vector<int>{1, 2}));
  EXPECT_TRUE(prefix_node_counts(8 * 32, build_device_graph(one_nic_cluster(1))).empty());
}

TEST(NodePrefixes, FirstNodesKeepTheGpusAndLinks) {
  const DeviceGraph devices = build_device_graph(one_nic_cluster());
  const DeviceGraph two = first_nodes(devices, 2);
  EXPECT_EQ(two.nodes(), 2);
  EXPECT_EQ(two.gpus_per_node(), 8);
  EXPECT_EQ(two.device().model, devices.device().model);
  EXPECT_EQ(two.device().peak_flops, devices.device().peak_flops);
  EXPECT_EQ(two.network().bandwidth, devices.network().bandwidth);
  EXPECT_EQ(two.intra_link(1, 6).bandwidth, devices.intra_link(1, 6).bandwidth);
  EXPECT_EQ(nodes_text(1, 8), "1 node (8 GPUs)");
  EXPECT_EQ(nodes_text(4, 8), "4 nodes (32 GPUs)");
}

TEST_F(OneNicTest, CandidatesOnEveryPrefixArePricedOnTheWholeJob) {
  const std::vector<StrategyCost> candidates = node_prefix_candidates(graph_, devices_, model_, PlanOptions{});
  std::vector<std::string> names;
  for (const StrategyCost& c : candidates) names.push_back(c.name);
  for (int k : {1, 2, 4}) {
    const std::string name = "data parallel on " + nodes_text(k, 8);
    const auto at = std::find(names.begin(), names.end(), name);
    ASSERT_NE(at, names.end()) << name;
    const StrategyCost& c = candidates[static_cast<size_t>(at - names.begin())];
    // The whole job's model: every device of the job has a memory row, and the step is
    // data parallelism on k*8 devices priced there.
    EXPECT_EQ(c.memory.devices.size(), 64u);
    EXPECT_DOUBLE_EQ(c.step_s(), priced("x", data_parallel(graph_, k * 8)).step_s()) << name;
  }
  for (const StrategyCost& c : candidates) {
    EXPECT_NE(c.name.find(" on "), std::string::npos) << c.name;
    // A sub-plan equal to data parallelism on its nodes is the data-parallel candidate already.
    if (c.name.rfind("data parallel on ", 0) != 0) {
      for (int k : {1, 2, 4}) EXPECT_FALSE(equals_data_parallel(c, k * 8)) << c.name;
    }
  }
  // The one-NIC network makes one node competitive: data parallelism on 8 GPUs is within
  // 1.5x of data parallelism on all 64 though it has 8x less compute (faster, today).
  const double all = priced("data parallel", data_parallel(graph_, 64)).step_s();
  EXPECT_LT(candidates.front().step_s(), 1.5 * all);
  // No two candidates are the same plan (a search on 2 nodes that uses 1 is the one on 1 node).
  for (size_t a = 0; a < candidates.size(); ++a) {
    for (size_t b = a + 1; b < candidates.size(); ++b) {
      bool same = true;
      for (size_t l = 0; l < candidates[a].layers.size(); ++l) {
        same = same && candidates[a].layers[l].config == candidates[b].layers[l].config;
      }
      EXPECT_FALSE(same) << candidates[a].name << " and " << candidates[b].name;
    }
  }
}

TEST_F(OneNicTest, IdleDevicesOfAPlanOnOneNode) {
  const StrategyCost one_node = priced("data parallel on 1 node (8 GPUs)", data_parallel(graph_, 8));
  const IdleDevices idle = idle_devices_of(one_node, graph_, devices_, PlanOptions{});
  EXPECT_EQ(idle.job_devices, 64);
  EXPECT_EQ(idle.idle_devices, 56);
  EXPECT_EQ(idle.job_nodes, 8);
  EXPECT_EQ(idle.used_nodes, 1);
  // The same step on a job of one node.
  const DeviceGraph node = first_nodes(devices_, 1);
  const CostModel alone(graph_, node, PlanOptions{}.sync_options());
  const double expected = price_strategy(alone, "x", data_parallel(graph_, 8)).step_s();
  EXPECT_DOUBLE_EQ(idle.used_nodes_step_s, expected);
  EXPECT_GT(idle.used_nodes_step_s, 0.0);

  Plan plan;
  plan.chosen = one_node;
  record_idle_devices(plan, graph_, devices_, PlanOptions{});
  EXPECT_EQ(plan.idle_devices, 56);
  EXPECT_EQ(plan.job_devices, 64);
  EXPECT_EQ(plan.used_nodes, 1);
  EXPECT_EQ(plan.job_nodes, 8);
  EXPECT_DOUBLE_EQ(plan.used_nodes_step_s, expected);
}

TEST_F(OneNicTest, NothingIdleUnderDataParallelism) {
  const StrategyCost dp = priced("data parallel", data_parallel(graph_, 64));
  const IdleDevices idle = idle_devices_of(dp, graph_, devices_, PlanOptions{});
  EXPECT_EQ(idle.idle_devices, 0);
  EXPECT_EQ(idle.used_nodes, 8);
  EXPECT_EQ(idle.used_nodes_step_s, dp.step_s());
}

TEST_F(OneNicTest, DataParallelOnEveryLayerIsLabelledSo) {
  StrategyCost searched = priced("layer-wise", data_parallel(graph_, 64));
  EXPECT_TRUE(equals_data_parallel(searched, 64));
  EXPECT_FALSE(equals_data_parallel(searched, 8));
  EXPECT_TRUE(label_data_parallel(searched, devices_));
  EXPECT_EQ(searched.name, kDataParallelEveryLayer);
  StrategyCost baseline = priced("data parallel", data_parallel(graph_, 64));
  EXPECT_TRUE(label_data_parallel(baseline, devices_));
  EXPECT_EQ(baseline.name, "data parallel");
  // Data parallelism on the first node, or on part of it.
  StrategyCost node = priced("layer-wise", data_parallel(graph_, 8));
  EXPECT_TRUE(label_data_parallel(node, devices_));
  EXPECT_EQ(node.name, "data parallel on 1 node (8 GPUs)");
  StrategyCost four = priced("layer-wise", data_parallel(graph_, 4));
  EXPECT_TRUE(label_data_parallel(four, devices_));
  EXPECT_EQ(four.name, "data parallel on 4 GPUs");

  StrategyCost model = priced("layer-wise", model_parallel(graph_, 64));
  EXPECT_FALSE(equals_data_parallel(model, 64));
  EXPECT_FALSE(label_data_parallel(model, devices_));
  EXPECT_EQ(model.name, "layer-wise");
  // One layer otherwise (the classifier split by channels) is not data parallelism.
  std::vector<Configuration> mixed = data_parallel(graph_, 64);
  const auto fc = std::find_if(graph_.layers().begin(), graph_.layers().end(),
                               [](const Layer& l) { return l.kind == LayerKind::kFullyConnected; });
  ASSERT_NE(fc, graph_.layers().end());
  mixed[static_cast<size_t>(fc->id)] = model_parallel(graph_, 64)[static_cast<size_t>(fc->id)];
  EXPECT_FALSE(equals_data_parallel(priced("layer-wise", mixed), 64));
  EXPECT_FALSE(equals_data_parallel(StrategyCost{}, 64));  // no layers: the search fell back
}

StrategyCost with_step(const std::string& name, double step_s, int64_t peak_bytes = 0) {
  StrategyCost s;
  s.name = name;
  s.timeline.step_s = step_s;
  s.memory.devices.push_back(DeviceMemory{peak_bytes});
  return s;
}

TEST(SimplicityMargin, DataParallelismStaysWithinTheMargin) {
  const StrategyCost dp = with_step("data parallel", 1.0);
  const StrategyCost close = with_step("layer-wise", 0.98);
  const StrategyCost far = with_step("layer-wise", 0.95);
  const StrategyCost slower = with_step("model parallel", 1.2);

  MarginChoice c = choose_with_margin({&dp, &close, &slower}, dp, 0.03, 1000);
  EXPECT_EQ(c.chosen, &dp);
  EXPECT_EQ(c.set_aside_name, "layer-wise");
  EXPECT_DOUBLE_EQ(c.set_aside_step_s, 0.98);

  c = choose_with_margin({&dp, &far, &slower}, dp, 0.03, 1000);
  EXPECT_EQ(c.chosen, &far);
  EXPECT_TRUE(c.set_aside_name.empty());

  c = choose_with_margin({&slower}, dp, 0.03, 1000);  // data parallelism need not be a candidate
  EXPECT_EQ(c.chosen, &dp);
  EXPECT_TRUE(c.set_aside_name.empty());

  c = choose_with_margin({&dp, &close}, dp, 0.0, 1000);  // no margin: the fastest
  EXPECT_EQ(c.chosen, &close);
  c = choose_with_margin({&dp, &far}, dp, 0.10, 1000);  // 5 % faster, 10 % asked
  EXPECT_EQ(c.chosen, &dp);
  EXPECT_EQ(c.set_aside_step_s, 0.95);
}

TEST(SimplicityMargin, OnlyPlansThatFitCount) {
  const StrategyCost dp = with_step("data parallel", 1.0, 500);
  const StrategyCost close_big = with_step("layer-wise", 0.98, 2000);
  const StrategyCost far_big = with_step("layer-wise", 0.5, 2000);
  // What does not fit is neither chosen nor set aside.
  MarginChoice c = choose_with_margin({&dp, &close_big, &far_big}, dp, 0.03, 1000);
  EXPECT_EQ(c.chosen, &dp);
  EXPECT_TRUE(c.set_aside_name.empty());
  // Data parallelism does not fit: the fastest that does, margin or not.
  const StrategyCost dp_big = with_step("data parallel", 1.0, 2000);
  const StrategyCost close_small = with_step("owt", 0.99, 500);
  c = choose_with_margin({&dp_big, &close_small}, dp_big, 0.03, 1000);
  EXPECT_EQ(c.chosen, &close_small);
  c = choose_with_margin({&dp_big, &far_big}, dp_big, 0.03, 1000);
  EXPECT_EQ(c.chosen, nullptr);
}

}  // namespace
}  // namespace layerplan
