// oneDNN against the reference loops on ResNet-like shapes, where oneDNN picks its
// vectorized (JIT) implementations rather than the small-shape fallbacks that
// kernels_tiles_test's tiny layers reach.
#include <gtest/gtest.h>

#include <random>

#include "kernels_test_util.h"
#include "model/zoo.h"
#include "planner/config_space.h"
#include "runtime/kernels/reference_kernels.h"

namespace layerplan {
namespace {

using testing::relative_error;

TEST(OnednnKernels, MatchTheReferenceOnResnetShapesAndTiles) {
  ModelGraph g("resnet_like");
  const int in = g.input("in", Shape{{2, 32, 14, 14}});
  g.conv2d("conv3x3", in, 32, Window::square(3, 1, 1), false);
  g.conv2d("downsample", in, 64, Window::square(1, 2, 0), false);
  g.conv2d("stem", in, 16, Window::square(7, 2, 3), false);
  g.max_pool("maxpool", in, Window::square(3, 2, 1));
  g.avg_pool("avgpool", in, Window::square(3, 1, 1));
  g.global_avg_pool("gap", in);
  g.relu("relu", in);
  g.batch_norm("bn", in);
  g.fully_connected("fc", g.flatten("flatten", in), 64);
  auto onednn = make_kernels("onednn", 1);
  ReferenceKernels reference;
  std::mt19937 rng(7);
  const std::vector<Degrees> configs = {{{1, 1, 1, 1}}, {{1, 1, 1, 7}}, {{2, 2, 1, 1}}};
  for (const Layer& layer : g.layers()) {
    if (layer.kind == LayerKind::kInput || layer.kind == LayerKind::kFlatten) continue;
    const testing::LayerData d = testing::random_layer_data(g, layer.id, rng);
    const testing::LayerResult want = testing::run_tiled(reference, g, layer.id, d, Degrees{});
    for (Degrees degrees : configs) {
      if (layer.kind == LayerKind::kFullyConnected || layer.kind == LayerKind::kGlobalAvgPool) {
        degrees.d[3] = 1;  // split features (channels) and samples only
      }
      if (layer.output.w() % degrees[3] != 0) continue;
      SCOPED_TRACE(layer.name + " split " + degrees.str());
      const testing::LayerResult got = testing::run_tiled(*onednn, g, layer.id, d, degrees);
      EXPECT_LE(relative_error(got.output.values(), want.output.values()), 1e-5);
      EXPECT_LE(relative_error(got.grad_inputs[0].values(), want.grad_inputs[0].values()), 1e-5);
      EXPECT_LE(relative_error(got.grad_params.weight, want.grad_params.weight), 1e-5);
      EXPECT_LE(relative_error(got.grad_params.bias, want.grad_params.bias), 1e-5);
    }
  }
}

TEST(OnednnKernels, RunEveryLayerOfLenet5OnEveryConfigurationThePlannerConsidersOn4Gpus) {
  const ModelGraph g = lenet5(4);
  auto onednn = make_kernels("onednn", 1);
  ReferenceKernels reference;
  std::mt19937 rng(9);
  int checked = 0;
  for (const Layer& layer : g.layers()) {
    if (layer.kind == LayerKind::kInput) continue;
    const testing::LayerData d = testing::random_layer_data(g, layer.id, rng);
    const testing::LayerResult want = testing::run_tiled(reference, g, layer.id, d, Degrees{});
    for (const Degrees& degrees : candidate_degrees(layer, 4, 4)) {
      SCOPED_TRACE(layer.name + " split " + degrees.str());
      const testing::LayerResult got = testing::run_tiled(*onednn, g, layer.id, d, degrees);
      EXPECT_LE(relative_error(got.output.values(), want.output.values()), 1e-5);
      EXPECT_NEAR(got.loss, want.loss, 1e-5 * std::max(1.0, want.loss));
      EXPECT_LE(relative_error(got.grad_inputs[0].values(), want.grad_inputs[0].values()), 1e-5);
      EXPECT_LE(relative_error(got.grad_params.weight, want.grad_params.weight), 1e-5);
      ++checked;
    }
  }
  EXPECT_GE(checked, 40);
}

}  // namespace
}  // namespace layerplan
