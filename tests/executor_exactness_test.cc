// The executor trains every plan to the numbers of one device: for LeNet-5 and a net with a
// residual block and an Inception-style concat, on 1, 2 and 4 devices, data parallel, model
// parallel, OWT, the layer-wise plan and 20 random plans give the same per-step losses and
// final parameters after 5 SGD steps as the single-device run (relative difference ≤ 1e-4).
#include <gtest/gtest.h>

#include "model/layer_math.h"
#include "model/zoo.h"
#include "tests/executor_test_util.h"

namespace layerplan::testing {
namespace {

constexpr int kSteps = 5;
constexpr int kRandomPlans = 20;
constexpr double kTolerance = 1e-4;

void expect_all_plans_match_one_device(const ModelGraph& graph, int devices,
                                       int64_t bucket_bytes = ExecutorOptions{}.gradient_bucket_bytes) {
  const TrainResult want = train(graph, single_device_plan(graph), kSteps);
  // The losses must move, or equal losses would say little.
  ASSERT_GT(std::abs(want.losses.front() - want.losses.back()), 1e-3);
  for (const NamedPlan& plan : plans_to_test(graph, devices, kRandomPlans, 100u + static_cast<uint32_t>(devices))) {
    const TrainResult got = train(graph, plan.configs, kSteps, test_sgd(), "reference", bucket_bytes);
    EXPECT_LE(max_difference(got, want), kTolerance) << graph.name() << " on " << devices << " devices, " << plan.name
                                                     << ", buckets of " << bucket_bytes << " bytes";
  }
}

TEST(ExecutorExactness, LeNet5On1Device) { expect_all_plans_match_one_device(lenet5(4), 1); }
TEST(ExecutorExactness, LeNet5On2Devices) { expect_all_plans_match_one_device(lenet5(4), 2); }
TEST(ExecutorExactness, LeNet5On4Devices) { expect_all_plans_match_one_device(lenet5(4), 4); }
// Buckets of 64 bytes (16 gradients): every layer's shards are reduced right after its
// backward, several buckets per layer where shards are larger.
TEST(ExecutorExactness, SmallGradientBucketsOn4Devices) {
  expect_all_plans_match_one_device(lenet5(4), 4, 64);
  expect_all_plans_match_one_device(residual_inception_net(), 4, 64);
}
TEST(ExecutorExactness, ResidualInceptionOn1Device) { expect_all_plans_match_one_device(residual_inception_net(), 1); }
TEST(ExecutorExactness, ResidualInceptionOn2Devices) { expect_all_plans_match_one_device(residual_inception_net(), 2); }
TEST(ExecutorExactness, ResidualInceptionOn4Devices) { expect_all_plans_match_one_device(residual_inception_net(), 4); }

// Pools whose windows overhang the border (ceil_mode) and an average that leaves padding
// out (count_include_pad false): tiles at the border read past the input.
ModelGraph ceil_pool_net() {
  ModelGraph g("ceil_pools");
  const int x = g.input("data", Shape{{4, 3, 12, 12}});
  const int r = g.relu("relu", g.conv2d("conv", x, 8, Window::square(3, 1, 1), true));
  Window max = Window::square(3, 2);
  max.ceil_mode = true;  // 12 -> 6, the last window reads one row past the input
  Window exclude = Window::square(3, 1, 1);
  exclude.count_include_pad = false;
  Window avg = Window::square(3, 2, 1);
  avg.ceil_mode = true;  // 6 -> 4, the last window overhangs the padded input
  const int p = g.avg_pool("avg_ceil", g.avg_pool("avg_exclude", g.max_pool("max_ceil", r, max), exclude), avg);
  g.softmax_cross_entropy("loss", g.fully_connected("fc", g.global_avg_pool("gap", p), 10));
  return g;
}

// Every layer split 2x2 along height and width where it can be, else by samples.
std::vector<Configuration> spatial_plan(const ModelGraph& graph) {
  std::vector<Configuration> plan;
  for (const Layer& layer : graph.layers()) {
    const bool spatial = splittable_dims(layer.kind)[2] && layer.output.h() % 2 == 0 && layer.output.w() % 2 == 0;
    plan.push_back({spatial ? Degrees{{1, 1, 2, 2}} : Degrees{{4, 1, 1, 1}}, {0, 1, 2, 3}});
  }
  return plan;
}

TEST(ExecutorExactness, CeilModeAndExcludedPaddingPoolsOn4Devices) {
  const ModelGraph graph = ceil_pool_net();
  EXPECT_EQ(graph.layer(3).output, (Shape{{4, 8, 6, 6}}));
  EXPECT_EQ(graph.layer(5).output, (Shape{{4, 8, 4, 4}}));
  const TrainResult want = train(graph, single_device_plan(graph), kSteps);
  ASSERT_GT(std::abs(want.losses.front() - want.losses.back()), 1e-3);
  const std::vector<Configuration> spatial = spatial_plan(graph);
  for (int id : {3, 4, 5}) ASSERT_EQ(spatial[static_cast<size_t>(id)].degrees.str(), "h2 w2");
  for (const std::string_view backend : {"reference", "onednn"}) {
    EXPECT_LE(max_difference(train(graph, spatial, kSteps, test_sgd(), backend), want), kTolerance) << backend;
  }
  expect_all_plans_match_one_device(graph, 4);
}

// AdamW and Nesterov SGD, each with clipping by the global norm (which must count every
// shard once and agree across tiles), label smoothing and no decay on biases and batch norm:
// every plan trains the numbers of one device.
TEST(ExecutorExactness, OptimizerSettingsOn4Devices) {
  ExecutorOptions adamw;
  adamw.optimizer = OptimizerKind::kAdamW;
  adamw.adamw = {.lr = 0.002, .beta1 = 0.9, .beta2 = 0.99, .eps = 1e-8, .weight_decay = 0.05};
  ExecutorOptions nesterov;
  nesterov.sgd = test_sgd();
  nesterov.sgd.nesterov = true;
  for (ExecutorOptions options : {adamw, nesterov}) {
    options.clip_grad_norm = 0.5;
    options.label_smoothing = 0.1;
    options.decay_bn_bias = false;
    for (const ModelGraph& graph : {lenet5(4), residual_inception_net()}) {
      const TrainResult want = train_with(graph, single_device_plan(graph), kSteps, options);
      ASSERT_GT(std::abs(want.losses.front() - want.losses.back()), 1e-3) << graph.name();
      // Clipping is in force: without it the run differs.
      ExecutorOptions unclipped = options;
      unclipped.clip_grad_norm = 0;
      EXPECT_GT(max_difference(train_with(graph, single_device_plan(graph), kSteps, unclipped), want), kTolerance);
      for (const NamedPlan& plan : plans_to_test(graph, 4, 8, 404u)) {
        EXPECT_LE(max_difference(train_with(graph, plan.configs, kSteps, options), want), kTolerance)
            << graph.name() << ", " << plan.name;
      }
    }
  }
}

// The comparison can fail: a slightly different learning rate is caught.
TEST(ExecutorExactness, ToleranceCatchesADifferentLearningRate) {
  const ModelGraph graph = lenet5(4);
  const TrainResult want = train(graph, single_device_plan(graph), kSteps);
  SgdOptions sgd = test_sgd();
  sgd.lr *= 1.01;
  EXPECT_GT(max_difference(train(graph, data_parallel(graph, 2), kSteps, sgd), want), kTolerance);
}

// The plans of the 4-device tests do split every dimension somewhere, and use several
// devices per layer, so the equalities above exercise halos, channel shards and replicas.
TEST(ExecutorExactness, RandomPlansSplitEveryDimension) {
  for (const ModelGraph& graph : {lenet5(4), residual_inception_net()}) {
    std::array<bool, kNumDims> split{};
    for (const NamedPlan& plan : plans_to_test(graph, 4, kRandomPlans, 104u)) {
      for (const Configuration& c : plan.configs) {
        for (int d = 0; d < kNumDims; ++d) split[static_cast<size_t>(d)] |= c.degrees[d] > 1;
      }
    }
    for (int d = 0; d < kNumDims; ++d) EXPECT_TRUE(split[static_cast<size_t>(d)]) << graph.name() << " dim " << d;
  }
}

// The layer-wise plan the tests run is not the single-device plan.
TEST(ExecutorExactness, LayerWisePlanUsesSeveralDevices) {
  for (const ModelGraph& graph : {lenet5(4), residual_inception_net()}) {
    int most = 0;
    for (const Configuration& c : layer_wise_plan(graph, 4)) most = std::max(most, c.tiles());
    EXPECT_EQ(most, 4) << graph.name();
  }
}

TEST(ExecutorSgd, MatchesTorchOptimSgd) {
  // torch.optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.01), p = 1, grads 0.5 then -0.25:
  // step 1: d = 0.5 + 0.01 = 0.51, buf = 0.51, p = 1 - 0.051 = 0.949
  // step 2: d = -0.25 + 0.00949 = -0.24051, buf = 0.459 - 0.24051 = 0.21849, p = 0.949 - 0.021849
  const SgdOptions sgd{.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01};
  std::vector<float> p{1.0f}, buf;
  sgd_update(sgd, {0.5f}, &p, &buf);
  EXPECT_NEAR(p[0], 0.949, 1e-6);
  sgd_update(sgd, {-0.25f}, &p, &buf);
  EXPECT_NEAR(buf[0], 0.21849, 1e-6);
  EXPECT_NEAR(p[0], 0.949 - 0.021849, 1e-6);
}

TEST(ExecutorPlan, RejectsAPlanOfTheWrongLength) {
  const ModelGraph graph = lenet5(4);
  const auto kernels = make_kernels("reference");
  InProcessTransport transport;
  std::vector<Configuration> plan = single_device_plan(graph);
  plan.pop_back();
  EXPECT_THROW(Executor(graph, plan, *kernels, transport), std::invalid_argument);
}

}  // namespace
}  // namespace layerplan::testing
