// scripts/gpu-check's executor row (docs/gpu-backend.md): the executor with the GPU kernels
// and the transport that emulates 1, 2 and 4 devices on ONE GPU (emulated_transport.h: NCCL
// refuses two ranks on one GPU), LeNet-5 and the batch-norm/residual/concat test net, the
// data, model, OWT, layer-wise and 5 random plans, 5 SGD steps: losses and weights equal to
// the CPU single-device run (reference kernels) within 1e-4 relative.
// NOT YET RUN ON A GPU: it needs one, so it is a program for gpu-check, not a CTest test.
#include <cstdio>

#include "model/zoo.h"
#include "runtime/gpu/emulated_transport.h"
#include "runtime/gpu/gpu_inventory.h"
#include "runtime/gpu/gpu_kernels.h"
#include "tests/executor_test_util.h"

namespace layerplan::testing {
namespace {

constexpr double kTolerance = 1e-4;
constexpr int kSteps = 5;

TrainResult train_on_gpu(GpuKernels& kernels, const ModelGraph& graph, const std::vector<Configuration>& plan) {
  EmulatedDevicesTransport transport(0);
  ExecutorOptions options;
  options.sgd = test_sgd();
  Executor executor(graph, plan, kernels, transport, options);
  TrainResult r;
  for (const Batch& b : test_batches(graph, kSteps)) r.losses.push_back(executor.step(b.images, b.labels));
  for (const Layer& layer : graph.layers()) {
    r.params.push_back(has_params(layer.kind) ? executor.gathered_params(layer.id) : LayerParams{});
  }
  r.traffic = transport.counts();
  return r;
}

// One line per (net, device count): the worst plan's difference.
bool check_net(GpuKernels& kernels, const ModelGraph& graph) {
  const TrainResult cpu = train(graph, single_device_plan(graph), kSteps);
  bool ok = true;
  for (const int devices : {1, 2, 4}) {
    std::vector<NamedPlan> plans = {{"one device", single_device_plan(graph)}};
    if (devices > 1) plans = plans_to_test(graph, devices, 5, 2026);
    double worst = 0;
    for (const NamedPlan& plan : plans) {
      const TrainResult gpu = train_on_gpu(kernels, graph, plan.configs);
      const double d = max_difference(gpu, cpu);
      if (d > kTolerance) std::printf("  %s, %s: %.3g\n", graph.name().c_str(), plan.name.c_str(), d);
      worst = std::max(worst, d);
    }
    const bool pass = worst <= kTolerance;
    ok = ok && pass;
    std::printf("%s on %d emulated device%s, %zu plans: max relative difference %.3g %s\n", graph.name().c_str(),
                devices, devices == 1 ? "" : "s", plans.size(), worst, pass ? "ok" : "FAIL");
  }
  return ok;
}

}  // namespace
}  // namespace layerplan::testing

int main() {
  using namespace layerplan;
  try {
    require_gpus(probe_gpus(), 1);
    GpuKernels kernels(0, Precision::kFp32);
    bool ok = testing::check_net(kernels, lenet5(8));
    ok = testing::check_net(kernels, testing::residual_inception_net()) && ok;
    std::printf("executor %s\n", ok ? "ok" : "FAIL");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::printf("executor FAIL: %s\n", e.what());
    return 1;
  }
}
