// Grouped and depthwise convolutions on both kernel backends: the whole tensor against a
// direct computation written out here from the definition, and every tile split (output
// channels inside a group, across whole groups, across a group's border; samples; rows
// and columns with halos) assembling to the whole-tensor reference.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "kernels_test_util.h"
#include "runtime/kernels/reference_kernels.h"

namespace layerplan {
namespace {

using testing::LayerData;
using testing::LayerResult;
using testing::relative_error;
using testing::run_tiled;

// Input 2x12x8x8; each convolution reads it directly.
ModelGraph grouped_model() {
  ModelGraph g("grouped");
  const int in = g.input("in", Shape{{2, 12, 8, 8}});
  g.conv2d("depthwise3x3", in, 12, Window::square(3, 1, 1), true, 12);
  g.conv2d("depthwise3x3_s2", in, 12, Window::square(3, 2, 1), false, 12);
  g.conv2d("depthwise_x2_5x5", in, 24, Window::square(5, 1, 2), true, 12);  // 1 in, 2 out per group
  g.conv2d("group3_3x3", in, 12, Window::square(3, 1, 1), true, 3);         // 4 in, 4 out
  g.conv2d("group2_1x3_s2", in, 6, Window{1, 3, 2, 2, 0, 1}, false, 2);     // 6 in, 3 out
  g.conv2d("group4_1x1", in, 24, Window::square(1), true, 4);               // 3 in, 6 out
  return g;
}

// Whole-tensor results straight from the definition (PyTorch's conv2d with `groups`):
// y[n][k][i][j] = b[k] + sum_{c,u,v} w[k][c][u][v] x[n][g(k)*cin + c][i*s-p+u][j*s-p+v],
// with g(k) = k / cout, cin and cout the channels per group; and its gradients.
LayerResult direct(const ModelGraph& graph, const Layer& layer, const LayerData& d) {
  const Shape in = graph.input_shape(layer, 0), out = layer.output;
  const Window& w = layer.window;
  const int64_t cin = in.c() / layer.groups, cout = out.c() / layer.groups;
  LayerResult r;
  r.output = Tensor(Box::whole(out));
  r.grad_inputs.emplace_back(Box::whole(in));
  r.grad_params = d.params;
  std::fill(r.grad_params.weight.begin(), r.grad_params.weight.end(), 0.0f);
  std::fill(r.grad_params.bias.begin(), r.grad_params.bias.end(), 0.0f);
  const Tensor& x = d.inputs[0];
  auto weight_at = [&](int64_t k, int64_t c, int u, int v) {
    return static_cast<size_t>(((k * cin + c) * w.kernel_h + u) * w.kernel_w + v);
  };
  for (int64_t n = 0; n < out.n(); ++n) {
    for (int64_t k = 0; k < out.c(); ++k) {
      const int64_t first = k / cout * cin;
      for (int64_t i = 0; i < out.h(); ++i) {
        for (int64_t j = 0; j < out.w(); ++j) {
          double acc = d.params.bias.empty() ? 0.0 : d.params.bias[static_cast<size_t>(k)];
          const double g = d.grad_output.at(n, k, i, j);
          if (!d.params.bias.empty()) r.grad_params.bias[static_cast<size_t>(k)] += static_cast<float>(g);
          for (int64_t c = 0; c < cin; ++c) {
            for (int u = 0; u < w.kernel_h; ++u) {
              for (int v = 0; v < w.kernel_w; ++v) {
                const int64_t h = i * w.stride_h - w.pad_h + u, col = j * w.stride_w - w.pad_w + v;
                if (h < 0 || h >= in.h() || col < 0 || col >= in.w()) continue;
                const size_t wi = weight_at(k, c, u, v);
                acc += static_cast<double>(d.params.weight[wi]) * x.at(n, first + c, h, col);
                r.grad_inputs[0].at(n, first + c, h, col) += static_cast<float>(g * d.params.weight[wi]);
                r.grad_params.weight[wi] += static_cast<float>(g * x.at(n, first + c, h, col));
              }
            }
          }
          r.output.at(n, k, i, j) = static_cast<float>(acc);
        }
      }
    }
  }
  return r;
}

void expect_close(const LayerResult& got, const LayerResult& want, double tolerance) {
  EXPECT_LE(relative_error(got.output.values(), want.output.values()), tolerance) << "output";
  EXPECT_LE(relative_error(got.grad_inputs[0].values(), want.grad_inputs[0].values()), tolerance) << "input gradient";
  EXPECT_LE(relative_error(got.grad_params.weight, want.grad_params.weight), tolerance) << "weight gradient";
  EXPECT_LE(relative_error(got.grad_params.bias, want.grad_params.bias), tolerance) << "bias gradient";
}

TEST(GroupedConvKernels, WholeTensorMatchesTheDefinitionOnBothBackends) {
  const ModelGraph g = grouped_model();
  std::mt19937 rng(7);
  for (const Layer& layer : g.layers()) {
    if (layer.kind != LayerKind::kConv2d) continue;
    const LayerData d = testing::random_layer_data(g, layer.id, rng);
    const LayerResult want = direct(g, layer, d);
    for (const char* backend : {"reference", "onednn"}) {
      SCOPED_TRACE(layer.name + " on " + backend);
      auto kernels = make_kernels(backend, 1);
      expect_close(run_tiled(*kernels, g, layer.id, d, Degrees{}), want, 1e-5);
    }
  }
}

// Channel degrees 2 to 12 cut inside groups, along their borders and across them (group
// 3 of 4 channels split c2: [0,6) holds group 0 and half of group 1).
std::vector<Degrees> splits(const Layer& layer) {
  const std::vector<Degrees> all = {
      {{2, 1, 1, 1}}, {{1, 2, 1, 1}}, {{1, 3, 1, 1}}, {{1, 4, 1, 1}}, {{1, 6, 1, 1}}, {{1, 12, 1, 1}},
      {{1, 1, 2, 1}}, {{1, 1, 1, 4}}, {{1, 2, 2, 1}}, {{2, 3, 1, 2}}, {{1, 4, 2, 2}}, {{1, 8, 1, 1}},
  };
  std::vector<Degrees> out;
  for (const Degrees& d : all) {
    bool ok = true;
    for (int dim = 0; dim < kNumDims; ++dim) ok = ok && layer.output[dim] % d[dim] == 0;
    if (ok) out.push_back(d);
  }
  return out;
}

void expect_tiles_match_whole(const std::string& backend, double forward_tolerance) {
  const ModelGraph g = grouped_model();
  std::mt19937 rng(3);
  auto kernels = make_kernels(backend, 1);
  ReferenceKernels reference;
  int checked = 0, straddling = 0;
  for (const Layer& layer : g.layers()) {
    if (layer.kind != LayerKind::kConv2d) continue;
    const LayerData d = testing::random_layer_data(g, layer.id, rng);
    const LayerResult whole = run_tiled(reference, g, layer.id, d, Degrees{});
    const int64_t per_group = layer.output.c() / layer.groups;
    for (const Degrees& degrees : splits(layer)) {
      SCOPED_TRACE(layer.name + " split " + degrees.str() + " on " + backend);
      const LayerResult tiled = run_tiled(*kernels, g, layer.id, d, degrees);
      EXPECT_LE(relative_error(tiled.output.values(), whole.output.values()), forward_tolerance);
      EXPECT_LE(relative_error(tiled.grad_inputs[0].values(), whole.grad_inputs[0].values()), 1e-5);
      EXPECT_LE(relative_error(tiled.grad_params.weight, whole.grad_params.weight), 1e-5);
      EXPECT_LE(relative_error(tiled.grad_params.bias, whole.grad_params.bias), 1e-5);
      const int64_t tile_channels = layer.output.c() / degrees[1];
      if (tile_channels % per_group != 0 && tile_channels > per_group) ++straddling;
      ++checked;
    }
  }
  EXPECT_GE(checked, 50);
  EXPECT_GE(straddling, 3);  // tiles that start or end inside a group and span more than one
}

TEST(GroupedConvKernels, ReferenceTilesAssembleExactlyToTheWholeTensor) { expect_tiles_match_whole("reference", 0.0); }

TEST(GroupedConvKernels, OnednnTilesMatchTheWholeTensorReference) { expect_tiles_match_whole("onednn", 1e-5); }

TEST(GroupedConvKernels, DepthwiseChannelTileReadsAndReturnsOnlyItsOwnChannels) {
  const ModelGraph g = grouped_model();
  const int dw = 1;
  std::mt19937 rng(5);
  const LayerData d = testing::random_layer_data(g, dw, rng);
  const Box tile = tile_box(g.layer(dw).output, Degrees{{1, 4, 1, 1}}, 2);  // channels [6, 9)
  for (const char* backend : {"reference", "onednn"}) {
    auto kernels = make_kernels(backend, 1);
    const LayerRef l(g, dw);
    const WeightedGrads grads = kernels->conv2d_backward(
        l, shard(d.params, tile.dim[1]), crop(d.inputs[0], l.required_input(0, tile)), crop(d.grad_output, tile));
    EXPECT_EQ(grads.input.box().dim[1], (Interval{6, 9})) << backend;
    EXPECT_EQ(grads.params.weight.size(), 3u * 9u) << backend;
  }
}

}  // namespace
}  // namespace layerplan
