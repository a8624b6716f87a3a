// The executor with the oneDNN kernels (the ones `layerplan train` uses by default) trains
// every plan to the numbers of one device with the reference kernels: LeNet-5 and the net
// with a residual block, an Inception-style concat and batch norm, on 1 and 4 devices, for
// the baselines, the layer-wise plan and random plans, 5 SGD steps. oneDNN sums in other
// orders than the loops, so the tolerance is that of executor_exactness_test (1e-4)
// rather than bitwise; tiles that read producers in place and gradients handed over
// whole (executor.cc) are exercised here with the fast kernels.
#include <gtest/gtest.h>

#include "model/zoo.h"
#include "tests/executor_test_util.h"

namespace layerplan::testing {
namespace {

constexpr int kSteps = 5;
constexpr int kRandomPlans = 5;
constexpr double kTolerance = 1e-4;

void expect_onednn_matches_reference(const ModelGraph& graph, int devices) {
  const TrainResult want = train(graph, single_device_plan(graph), kSteps);
  ASSERT_GT(std::abs(want.losses.front() - want.losses.back()), 1e-3);
  for (const NamedPlan& plan : plans_to_test(graph, devices, kRandomPlans, 300u + static_cast<uint32_t>(devices))) {
    const TrainResult got = train(graph, plan.configs, kSteps, test_sgd(), "onednn");
    EXPECT_LE(max_difference(got, want), kTolerance) << graph.name() << " on " << devices << " devices, " << plan.name;
  }
}

TEST(ExecutorOnednn, LeNet5On1Device) { expect_onednn_matches_reference(lenet5(4), 1); }
TEST(ExecutorOnednn, LeNet5On4Devices) { expect_onednn_matches_reference(lenet5(4), 4); }
TEST(ExecutorOnednn, ResidualInceptionOn1Device) { expect_onednn_matches_reference(residual_inception_net(), 1); }
TEST(ExecutorOnednn, ResidualInceptionOn4Devices) { expect_onednn_matches_reference(residual_inception_net(), 4); }

TEST(ExecutorOnednn, ToleranceCatchesADifferentLearningRate) {
  const ModelGraph graph = residual_inception_net();
  const TrainResult want = train(graph, single_device_plan(graph), kSteps);
  SgdOptions sgd = test_sgd();
  sgd.lr *= 1.01;
  EXPECT_GT(max_difference(train(graph, single_device_plan(graph), kSteps, sgd, "onednn"), want), kTolerance);
}

}  // namespace
}  // namespace layerplan::testing
