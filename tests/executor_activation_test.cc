// The executor trains a MobileNet-v3-style net (hard swish, a squeeze-and-excitation block
// whose hard-sigmoid scale multiplies the block's input, SiLU, sigmoid, ReLU6, batch norm
// and dropout with non-default settings) to the numbers of one device on plans that split
// height (each tile of the mul returns a partial gradient of the (n, c, 1, 1) scale, which
// must be summed at its owner), channels, and on random plans.
#include <gtest/gtest.h>

#include "tests/executor_split_checks.h"

namespace layerplan::testing {
namespace {

constexpr int kSteps = 4;
constexpr double kTolerance = 1e-4;

struct SeNet {
  ModelGraph graph{"se_block"};
  int squeeze = 0, excite = 0, mul = 0;
};

SeNet se_net() {
  SeNet s;
  ModelGraph& g = s.graph;
  const int x = g.input("data", Shape{{4, 3, 8, 8}});
  const int bn = g.batch_norm("bn1", g.conv2d("conv1", x, 8, Window::square(3, 1, 1), false), 1e-3, 0.3);
  const int block = g.activation("hswish", bn, ActivationKind::kHardSwish);
  const int pooled = g.global_avg_pool("se_pool", block);
  s.squeeze = g.conv2d("se_fc1", pooled, 4, Window::square(1), true);
  s.excite = g.conv2d("se_fc2", g.relu("se_relu", s.squeeze), 8, Window::square(1), true);
  const int gate = g.activation("se_gate", s.excite, ActivationKind::kHardSigmoid, kHardSigmoidAlpha, kHardSigmoidBeta);
  s.mul = g.mul("se_scale", block, gate);
  const int conv2 = g.conv2d("conv2", s.mul, 8, Window::square(3, 1, 1), true);
  const int silu = g.activation("silu", conv2, ActivationKind::kSilu);
  const int both = g.mul("silu_times_sigmoid", silu, g.activation("sigmoid", conv2, ActivationKind::kSigmoid));
  const int r6 = g.activation("relu6", both, ActivationKind::kClip, 0.0, 6.0);
  const int d = g.dropout("dropout", g.global_avg_pool("gap", r6), 0.2);
  g.softmax_cross_entropy("loss", g.fully_connected("fc", d, 10));
  return s;
}

TEST(ExecutorActivations, SplittingHeightSumsTheScalesPartialGradients) {
  const SeNet s = se_net();
  const std::vector<Configuration> plan = split_plan(s.graph, Dim::kH);
  // The mul's tiles split h while its scale is one (n, c, 1, 1) tile on another device.
  ASSERT_EQ(plan[static_cast<size_t>(s.mul)].degrees[2], 2);
  ASSERT_EQ(plan[static_cast<size_t>(s.graph.layer(s.mul).inputs[1])].tiles(), 1);
  expect_matches_one_device(s.graph, plan, "h split", kSteps, kTolerance);
}

TEST(ExecutorActivations, SplittingChannelsMatchesOneDevice) {
  const SeNet s = se_net();
  const std::vector<Configuration> plan = split_plan(s.graph, Dim::kC);
  ASSERT_EQ(plan[static_cast<size_t>(s.mul)].degrees[1], 2);
  expect_matches_one_device(s.graph, plan, "c split", kSteps, kTolerance);
}

TEST(ExecutorActivations, EveryBaselineAndRandomPlanMatchesOneDevice) {
  const SeNet s = se_net();
  for (const NamedPlan& plan : plans_to_test(s.graph, 4, 8, 31u))
    expect_matches_one_device(s.graph, plan.configs, plan.name, kSteps, kTolerance);
}

// Guards the tests above: the excitation's weights do learn (its gradient flows back
// through the broadcast scale), and the oneDNN backend trains this net as the reference does.
TEST(ExecutorActivations, TheScaleGradientReachesTheExcitationWeights) {
  const SeNet s = se_net();
  const SgdOptions no_decay{.lr = 0.05, .momentum = 0.9, .weight_decay = 0};  // only gradients move weights
  const TrainResult before = train(s.graph, single_device_plan(s.graph), 0, no_decay);
  const TrainResult after = train(s.graph, single_device_plan(s.graph), kSteps, no_decay);
  for (const int id : {s.squeeze, s.excite}) {
    EXPECT_GT(
        relative_error(after.params[static_cast<size_t>(id)].weight, before.params[static_cast<size_t>(id)].weight),
        1e-5)
        << s.graph.layer(id).name;
  }
  const TrainResult onednn = train(s.graph, split_plan(s.graph, Dim::kH), kSteps, no_decay, "onednn");
  EXPECT_LE(max_difference(onednn, after), 1e-3);
}

}  // namespace
}  // namespace layerplan::testing
