// scripts/gpu-check's kernel row (docs/gpu-backend.md): every layer kind the GPU backend runs
// on the GPU (gpu_kernels.h: all kinds but flatten), forward and backward, on tiles with
// halos and at the borders of the tensor, in fp32-exact mode, against the oneDNN CPU
// backend: relative difference <= 1e-5 (the loss compared too).
// NOT YET RUN ON A GPU: it needs one, so it is a program for gpu-check, not a CTest test.
#include <cstdio>
#include <map>
#include <string>

#include "runtime/gpu/gpu_inventory.h"
#include "runtime/gpu/gpu_kernels.h"
#include "tests/executor_test_util.h"

namespace layerplan::testing {
namespace {

constexpr double kTolerance = 1e-5;

// Strided and padded windows, odd sizes, both pooling kinds: the border tiles get padding
// on one side only, which the legacy cuDNN calls cannot express (gpu_conv.h).
ModelGraph windows_net() {
  ModelGraph g("windows");
  const int x = g.input("data", Shape{{3, 3, 11, 11}});
  const int c1 = g.conv2d("conv_s2_p1", x, 8, Window::square(3, 2, 1), true);
  const int r = g.relu("relu", c1);
  const int m = g.max_pool("max_3_s2_p1", r, Window::square(3, 2, 1));
  const int a = g.avg_pool("avg_3_s1_p1", m, Window::square(3, 1, 1));
  // ceil_mode windows overhang the border (6 -> 3 and 4); an average without the padding.
  Window ceil = Window::square(3, 2);
  ceil.ceil_mode = true;
  g.max_pool("max_3_s2_ceil", r, ceil);
  ceil.pad_h = ceil.pad_w = 1;
  g.avg_pool("avg_3_s2_p1_ceil", r, ceil);
  ceil.count_include_pad = false;
  g.avg_pool("avg_3_s2_p1_ceil_exclude_pad", r, ceil);
  const int c2 = g.conv2d("conv_5_p2", a, 6, Window{5, 3, 1, 1, 2, 1}, false);
  g.fully_connected("fc", g.flatten("flatten", c2), 10);
  return g;
}

// Every kind but flatten (a copy, left to the reference loops); max-pool backward also runs
// the loops there, which the comparison covers alike.
bool on_gpu(LayerKind kind) { return kind != LayerKind::kFlatten && kind != LayerKind::kInput; }

// Whole tensors, and tiles split in n, c, h and w where the output has room (the loss
// splits samples only).
std::vector<Degrees> degrees_for(const Layer& layer) {
  if (layer.kind == LayerKind::kSoftmaxCrossEntropy) return {Degrees{{1, 1, 1, 1}}, Degrees{{2, 1, 1, 1}}};
  std::vector<Degrees> fitting;
  for (const Degrees& d : {Degrees{{1, 1, 1, 1}}, Degrees{{2, 1, 2, 2}}, Degrees{{1, 2, 3, 1}}, Degrees{{1, 1, 1, 3}},
                           Degrees{{2, 2, 1, 1}}, Degrees{{1, 3, 1, 1}}}) {
    const Shape& s = layer.output;
    if (d[0] <= s.n() && d[1] <= s.c() && d[2] <= s.h() && d[3] <= s.w()) fitting.push_back(d);
  }
  return fitting;
}

double difference(const LayerResult& got, const LayerResult& want) {
  double worst = relative_error(got.output.values(), want.output.values());
  worst = std::max(worst, std::abs(got.loss - want.loss) / std::max(std::abs(want.loss), 1e-30));
  for (size_t s = 0; s < want.grad_inputs.size(); ++s)
    worst = std::max(worst, relative_error(got.grad_inputs[s].values(), want.grad_inputs[s].values()));
  worst = std::max({worst, relative_error(got.grad_params.weight, want.grad_params.weight),
                    relative_error(got.grad_params.bias, want.grad_params.bias)});
  return worst;
}

// Max difference per layer kind over the nets' layers and tilings.
std::map<std::string, double> compare(Kernels& gpu, Kernels& onednn) {
  std::map<std::string, double> worst;
  std::mt19937 rng(20);
  for (const ModelGraph& graph : {windows_net(), residual_inception_net(2)}) {
    for (const Layer& layer : graph.layers()) {
      if (!on_gpu(layer.kind)) continue;
      const LayerData data = random_layer_data(graph, layer.id, rng);
      for (const Degrees& degrees : degrees_for(layer)) {
        const double d = difference(run_tiled(gpu, graph, layer.id, data, degrees),
                                    run_tiled(onednn, graph, layer.id, data, degrees));
        double& w = worst[std::string(kind_name(layer.kind))];
        w = std::max(w, d);
        if (d > kTolerance)
          std::printf("  %s %s %s: %.3g\n", graph.name().c_str(), layer.name.c_str(), degrees.str().c_str(), d);
      }
    }
  }
  return worst;
}

}  // namespace
}  // namespace layerplan::testing

int main() {
  using namespace layerplan;
  try {
    require_gpus(probe_gpus(), 1);
    GpuKernels gpu(0, Precision::kFp32);
    const auto onednn = make_kernels("onednn", 1);
    bool ok = true;
    for (const auto& [kind, worst] : testing::compare(gpu, *onednn)) {
      const bool pass = worst <= testing::kTolerance;
      ok = ok && pass;
      std::printf("%s: max relative difference %.3g %s\n", kind.c_str(), worst, pass ? "ok" : "FAIL");
    }
    std::printf("peak device memory %.1f MiB\n", static_cast<double>(gpu.peak_device_bytes()) / (1 << 20));
    std::printf("kernels %s\n", ok ? "ok" : "FAIL");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::printf("kernels FAIL: %s\n", e.what());
    return 1;
  }
}
