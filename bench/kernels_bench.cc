// oneDNN against the reference loops on a ResNet-50 3x3 convolution (N=8, C=K=64, 56x56,
// pad 1) and a MobileNet v2 depthwise one (N=8, C=K=144, groups 144, 56x56, pad 1):
// forward, and backward (input and weight gradients), on plain NCHW tensors of one whole
// tile. Run: build/bench/kernels_bench. The argument is oneDNN's OpenMP thread
// count; the reference loops are single-threaded.
#include <benchmark/benchmark.h>

#include <random>

#include "runtime/kernels/kernels.h"

namespace layerplan {
namespace {

struct ConvCase {
  ModelGraph graph{"bench"};
  int conv = 0;
  int channels = 0, groups = 1, inputs_per_group = 0;
  LayerParams params;
  Tensor input, grad_output;

  explicit ConvCase(int c = 64, int g = 1) : channels(c), groups(g), inputs_per_group(c / g) {
    const int in = graph.input("in", Shape{{8, channels, 56, 56}});
    conv = graph.conv2d("conv", in, channels, Window::square(3, 1, 1), false, groups);
    std::mt19937 rng(1);
    std::normal_distribution<float> normal;
    auto fill = [&](std::vector<float>& v) {
      for (float& x : v) x = normal(rng);
    };
    params = zero_params(graph, graph.layer(conv));
    fill(params.weight);
    input = Tensor(Box::whole(graph.layer(in).output));
    grad_output = Tensor(Box::whole(graph.layer(conv).output));
    std::vector<float> v(static_cast<size_t>(input.size()));
    fill(v);
    input = Tensor(input.box(), v);
    fill(v);
    grad_output = Tensor(grad_output.box(), v);
  }
  // One pass: each output element reads channels/groups inputs of 3x3 taps.
  double flops() const { return 2.0 * 8 * channels * 56 * 56 * inputs_per_group * 9; }
};

void run_conv(benchmark::State& state, const ConvCase& c, const char* backend, bool backward) {
  auto kernels = make_kernels(backend, static_cast<int>(state.range(0)));
  const LayerRef l(c.graph, c.conv);
  const Box out = Box::whole(l.layer.output);
  for (auto _ : state) {
    if (backward) {
      benchmark::DoNotOptimize(kernels->conv2d_backward(l, c.params, c.input, c.grad_output));
    } else {
      benchmark::DoNotOptimize(kernels->conv2d_forward(l, c.params, c.input, out));
    }
  }
  // Backward is two passes (input and weight gradients).
  state.counters["GFLOP/s"] =
      benchmark::Counter(c.flops() * (backward ? 2 : 1) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void conv(benchmark::State& state, const char* backend, bool backward) {
  static const ConvCase c;
  run_conv(state, c, backend, backward);
}

void depthwise(benchmark::State& state, const char* backend, bool backward) {
  static const ConvCase c(144, 144);
  run_conv(state, c, backend, backward);
}

BENCHMARK_CAPTURE(conv, onednn_forward, "onednn", false)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(conv, onednn_backward, "onednn", true)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(conv, reference_forward, "reference", false)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);
BENCHMARK_CAPTURE(conv, reference_backward, "reference", true)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);
BENCHMARK_CAPTURE(depthwise, onednn_forward, "onednn", false)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(depthwise, onednn_backward, "onednn", true)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(depthwise, reference_forward, "reference", false)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);
BENCHMARK_CAPTURE(depthwise, reference_backward, "reference", true)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

}  // namespace
}  // namespace layerplan

BENCHMARK_MAIN();
