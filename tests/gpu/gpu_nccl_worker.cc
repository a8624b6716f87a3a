// gpu_nccl_worker: the executor over the NCCL transport with the GPU kernels, one rank per
// GPU (docs/gpu-backend.md). Alone it is one rank meeting itself through a fresh rendezvous
// directory (what scripts/gpu-check runs on a one-GPU machine); with two GPUs or more,
//   layerplan launch --backend gpu --nproc N -- gpu_nccl_worker [MODEL [PLAN]]
// runs N ranks, rank k on the k-th visible GPU. Each rank trains MODEL (lenet5 | residual)
// with PLAN (dp | mp | owt | lw) for 5 SGD steps and checks that the losses equal the CPU
// in-process run within 1e-4 relative and that the elements it sent, per edge, direction
// and peer, equal the in-process counts whose source is its device.
// Prints "rank R ok: ..." and exits 0, "rank R WRONG: ..." and 1, or 2 without a GPU.
// NOT YET RUN ON A GPU.
#include <stdlib.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "common/error.h"
#include "model/zoo.h"
#include "runtime/gloo_communicator.h"
#include "runtime/gpu/gpu_binding.h"
#include "runtime/gpu/gpu_inventory.h"
#include "runtime/gpu/gpu_kernels.h"
#include "runtime/gpu/nccl_transport.h"
#include "tests/executor_test_util.h"

using namespace layerplan;
using namespace layerplan::testing;

namespace {

constexpr int kSteps = 5;

std::vector<Configuration> plan_named(const ModelGraph& graph, const std::string& name, int devices) {
  if (name == "dp") return data_parallel(graph, devices);
  if (name == "mp") return model_parallel(graph, devices);
  if (name == "owt") return one_weird_trick(graph, devices);
  if (name == "lw") return layer_wise_plan(graph, devices);
  throw UsageError("plan '" + name + "': expected dp, mp, owt or lw");
}

// What `all` counts as sent from `device`: the moves and the per-peer elements.
bool same_as_sent_by(const TrafficCounts& mine, const TrafficCounts& all, int device) {
  TrafficCounts want;
  for (const auto& [key, v] : all.forward)
    if (std::get<2>(key) == device) want.forward[key] = v;
  for (const auto& [key, v] : all.backward)
    if (std::get<2>(key) == device) want.backward[key] = v;
  for (const auto& [key, v] : all.pairs)
    if (key.first == device) want.pairs[key] = v;
  return mine.forward == want.forward && mine.backward == want.backward && mine.pairs == want.pairs;
}

int run(const std::string& model, const std::string& plan_name) {
  std::optional<GlooOptions> world = world_from_env();
  std::string made_dir;
  if (!world) {
    char dir[] = "/tmp/layerplan_gpu_nccl_worker_XXXXXX";
    if (::mkdtemp(dir) == nullptr) throw UsageError("cannot make a rendezvous directory in /tmp");
    made_dir = dir;
    world = GlooOptions{};
    world->store_dir = made_dir;
  }
  const GpuInventory gpus = probe_gpus();
  require_gpus(gpus, world->local_rank + 1);
  const int device =
      bind_local_rank(world->local_rank, static_cast<int>(gpus.names.size()), std::getenv("CUDA_VISIBLE_DEVICES"))
          .cuda_device;
  NcclWorld nccl(*world, device);
  const ModelGraph graph = model == "lenet5" ? lenet5(8) : residual_inception_net();
  const std::vector<Configuration> plan = plan_named(graph, plan_name, nccl.size());
  const TrainResult want = train(graph, plan, kSteps);

  ExecutorOptions options;
  options.sgd = test_sgd();
  NcclTransport transport(nccl, graph, plan, options.gradient_bucket_bytes);
  GpuKernels kernels(device, Precision::kFp32);
  Executor executor(graph, plan, kernels, transport, options);
  double worst = 0;
  int step = 0;
  for (const Batch& b : test_batches(graph, kSteps)) {
    const double loss = executor.step(b.images, b.labels);
    const double w = want.losses[static_cast<size_t>(step++)];
    worst = std::max(worst, std::abs(loss - w) / std::abs(w));
  }
  if (!made_dir.empty()) std::filesystem::remove_all(made_dir);
  std::string wrong;
  if (!(worst <= 1e-4)) wrong += " losses differ by " + std::to_string(worst) + ";";
  if (!same_as_sent_by(transport.counts(), want.traffic, nccl.rank())) wrong += " sent elements differ;";
  if (!wrong.empty()) {
    std::printf("rank %d WRONG: %s %s on %d ranks:%s\n", nccl.rank(), model.c_str(), plan_name.c_str(), nccl.size(),
                wrong.c_str());
    return 1;
  }
  std::printf("rank %d ok: %s %s on %d ranks, %d steps, loss difference %.3g, peak device memory %.1f MiB\n",
              nccl.rank(), model.c_str(), plan_name.c_str(), nccl.size(), kSteps, worst,
              static_cast<double>(kernels.peak_device_bytes()) / (1 << 20));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc > 1 ? argv[1] : "residual", argc > 2 ? argv[2] : "lw");
  } catch (const UsageError& e) {
    std::printf("gpu_nccl_worker: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::printf("gpu_nccl_worker: %s\n", e.what());
    return 1;
  }
}
