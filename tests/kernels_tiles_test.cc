// Tiling is exact: computing every tile of a configuration from its required input box
// and assembling the tiles gives the whole-tensor result, and the input-gradient halos
// and weight-gradient shards of the tiles sum to the whole-tensor backward.
#include <gtest/gtest.h>

#include <random>

#include "kernels_test_util.h"
#include "planner/config_space.h"
#include "runtime/kernels/reference_kernels.h"

namespace layerplan {
namespace {

using testing::LayerData;
using testing::LayerResult;
using testing::relative_error;
using testing::run_tiled;

// One layer of every kind and window the zoo uses, over a 6x6x12x12 input (batch and
// channels divisible by 2 and 3, height and width by 2, 3 and 4).
ModelGraph tile_model() {
  ModelGraph g("tiles");
  const int in = g.input("in", Shape{{6, 6, 12, 12}});
  const int conv = g.conv2d("conv3x3", in, 6, Window::square(3, 1, 1), true);
  g.conv2d("conv3x3_s2", in, 6, Window::square(3, 2, 1), false);
  g.conv2d("conv5x5_nopad", in, 3, Window::square(5), true);
  g.conv2d("conv7x7_s2_p3", in, 6, Window::square(7, 2, 3), false);
  g.conv2d("conv1x1", in, 4, Window::square(1), false);
  g.conv2d("conv1x3", in, 6, Window{1, 3, 1, 1, 0, 1}, true);
  g.conv2d("conv11_s4_p2", in, 6, Window::square(11, 4, 2), true);  // AlexNet's stem: 2x2 output
  g.max_pool("maxpool3_s2_p1", in, Window::square(3, 2, 1));
  g.max_pool("maxpool2_s2", in, Window::square(2, 2));
  g.max_pool("maxpool3_s2", in, Window::square(3, 2));  // 5x5: halos overlap between tiles
  const int pool = g.avg_pool("avgpool3_s1_p1", in, Window::square(3, 1, 1));
  g.global_avg_pool("gap", in);
  const int relu = g.relu("relu", in);
  g.batch_norm("bn", in);
  g.dropout("dropout", in);
  const int flat = g.flatten("flatten", in);
  const int fc = g.fully_connected("fc", flat, 6);
  g.concat("concat", {conv, relu, pool});
  g.add("add", {conv, relu});
  g.activation("relu6", in, ActivationKind::kClip, 0.0, 6.0);
  g.activation("sigmoid", in, ActivationKind::kSigmoid);
  g.activation("silu", in, ActivationKind::kSilu);
  g.activation("hardsigmoid", in, ActivationKind::kHardSigmoid, kHardSigmoidAlpha, kHardSigmoidBeta);
  g.activation("hardswish", in, ActivationKind::kHardSwish);
  g.mul("mul", conv, relu);
  // Squeeze-and-excitation's scale: a tile that splits h or w sums part of its gradient.
  g.mul("mul_broadcast", conv, g.global_avg_pool("scale", conv));
  g.softmax_cross_entropy("loss", fc);
  // ceil_mode: the last window of the border tile reads past the input (6x6, not 5x5).
  Window ceil = Window::square(3, 2);
  ceil.ceil_mode = true;
  g.max_pool("maxpool3_s2_ceil", in, ceil);
  ceil = Window::square(5, 2, 1);  // the overhang passes the padding: divides by 5x4 there
  ceil.ceil_mode = true;
  g.avg_pool("avgpool5_s2_p1_ceil", in, ceil);
  ceil.count_include_pad = false;
  g.avg_pool("avgpool5_s2_p1_ceil_exclude_pad", in, ceil);
  Window exclude = Window::square(3, 1, 1);
  exclude.count_include_pad = false;
  g.avg_pool("avgpool3_s1_p1_exclude_pad", in, exclude);
  return g;
}

std::vector<Degrees> configurations(const Layer& layer) {
  const std::vector<Degrees> all = {
      {{2, 1, 1, 1}}, {{3, 1, 1, 1}}, {{1, 2, 1, 1}}, {{1, 3, 1, 1}}, {{1, 1, 2, 1}}, {{1, 1, 1, 3}},
      {{1, 1, 3, 2}}, {{1, 1, 4, 1}}, {{2, 3, 1, 1}}, {{1, 2, 2, 2}}, {{3, 1, 2, 1}}, {{2, 1, 1, 2}},
  };
  auto splittable = splittable_dims(layer.kind);
  // The planner keeps concat's channels whole, but the kernel maps any channel range to
  // parts of its inputs; check that too.
  if (layer.kind == LayerKind::kConcat) splittable[1] = true;
  std::vector<Degrees> out;
  for (const Degrees& d : all) {
    bool ok = true;
    for (int dim = 0; dim < kNumDims; ++dim) {
      if (d[dim] > 1 && (!splittable[static_cast<size_t>(dim)] || layer.output[dim] % d[dim] != 0)) ok = false;
    }
    if (ok) out.push_back(d);
  }
  return out;
}

// Forward results of the reference loops are bitwise equal however the tensor is cut:
// each output element runs the same loop. Batch norm's sums are reduced in another order.
bool exact_forward(LayerKind kind) { return kind != LayerKind::kBatchNorm; }

void expect_tiles_match_whole(Kernels& kernels, double forward_tolerance) {
  const ModelGraph g = tile_model();
  std::mt19937 rng(42);
  int checked = 0;  // (layer, configuration) pairs
  for (const Layer& layer : g.layers()) {
    if (layer.kind == LayerKind::kInput) continue;
    const LayerData d = testing::random_layer_data(g, layer.id, rng);
    ReferenceKernels reference;
    const LayerResult whole = run_tiled(reference, g, layer.id, d, Degrees{});
    const std::vector<Degrees> configs = configurations(layer);
    EXPECT_GE(configs.size(), 2u) << layer.name;
    for (const Degrees& degrees : configs) {
      SCOPED_TRACE(layer.name + " split " + degrees.str() + " on " + std::string(kernels.name()));
      const LayerResult tiled = run_tiled(kernels, g, layer.id, d, degrees);
      const double tol = exact_forward(layer.kind) ? forward_tolerance : 1e-5;
      EXPECT_LE(relative_error(tiled.output.values(), whole.output.values()), tol);
      EXPECT_NEAR(tiled.loss, whole.loss, 1e-6 * std::max(1.0, std::abs(whole.loss)));
      for (size_t s = 0; s < whole.grad_inputs.size(); ++s) {
        EXPECT_LE(relative_error(tiled.grad_inputs[s].values(), whole.grad_inputs[s].values()), 1e-5)
            << "input gradient of slot " << s;
      }
      EXPECT_LE(relative_error(tiled.grad_params.weight, whole.grad_params.weight), 1e-5) << "weight gradient";
      EXPECT_LE(relative_error(tiled.grad_params.bias, whole.grad_params.bias), 1e-5) << "bias gradient";
      ++checked;
    }
  }
  EXPECT_GE(checked, 130);
}

TEST(KernelTiles, ReferenceTilesAssembleExactlyToTheWholeTensor) {
  ReferenceKernels kernels;
  expect_tiles_match_whole(kernels, 0.0);
}

TEST(KernelTiles, OnednnTilesMatchTheWholeTensorReference) {
  auto kernels = make_kernels("onednn", 1);
  expect_tiles_match_whole(*kernels, 1e-5);
}

TEST(KernelTiles, TheWholeTensorGradientIsNotJustOneTilesShare) {
  // Guards the test above: a tile's halo gradient alone differs from the whole one, so
  // the comparison would catch a driver that dropped the summation.
  const ModelGraph g = tile_model();
  std::mt19937 rng(1);
  const int conv = 1;
  const LayerData d = testing::random_layer_data(g, conv, rng);
  ReferenceKernels kernels;
  const LayerResult whole = run_tiled(kernels, g, conv, d, Degrees{});
  const Box tile = tile_box(g.layer(conv).output, Degrees{{1, 1, 2, 1}}, 0);
  const WeightedGrads one =
      kernels.conv2d_backward(LayerRef(g, conv), d.params, d.inputs[0], crop(d.grad_output, tile));
  Tensor partial(Box::whole(g.layer(0).output));
  add_intersection(one.input, &partial);
  EXPECT_GT(relative_error(partial.values(), whole.grad_inputs[0].values()), 0.1);
  EXPECT_EQ(one.input.box(), required_input_box(g, g.layer(conv), 0, tile));
  EXPECT_EQ(one.input.box().dim[2], (Interval{0, 7}));  // 6 rows plus a 1-row halo
}

}  // namespace
}  // namespace layerplan
