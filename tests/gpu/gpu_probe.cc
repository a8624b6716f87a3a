// NOT YET RUN ON A GPU: compiled and linked in CI only; it needs a GPU (docs/gpu-backend.md).
// layerplan_gpu_probe: what scripts/gpu-check runs first on a GPU machine. It prints the
// GPUs the CUDA runtime sees, then joins an NCCL communicator through the ranks' rendezvous
// (share_from_rank0, as `layerplan train --backend gpu` will) and checks one all-reduce on
// the GPU. Alone it is one rank meeting itself through a fresh rendezvous directory; under
// `layerplan launch` or srun it is one rank of many, on the GPU of its local rank.
//   gpu_probe 0 '3 GPUs (...)' ... prints: "nccl ranks N join_ms X all-reduce ok"
// Exit codes: 0 done, 1 a wrong sum or a communication error, 2 no GPU / bad environment.
#include <cuda_runtime_api.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "runtime/gloo_communicator.h"
#include "runtime/gpu/gpu_inventory.h"
#include "runtime/gpu/nccl_world.h"

namespace {

using Clock = std::chrono::steady_clock;

int run() {
  const layerplan::GpuInventory gpus = layerplan::probe_gpus();
  std::printf("gpus %zu", gpus.names.size());
  for (const std::string& name : gpus.names) std::printf(" [%s]", name.c_str());
  std::printf(" driver %d runtime %d\n", gpus.driver_version, gpus.runtime_version);
  std::optional<layerplan::GlooOptions> world = layerplan::world_from_env();
  std::string made_dir;
  if (!world) {
    char dir[] = "/tmp/layerplan_gpu_probe_XXXXXX";
    if (::mkdtemp(dir) == nullptr) throw layerplan::UsageError("cannot make a rendezvous directory in /tmp");
    made_dir = dir;
    world = layerplan::GlooOptions{};
    world->store_dir = made_dir;
  }
  layerplan::require_gpus(gpus, world->local_rank + 1);
  const auto start = Clock::now();
  layerplan::NcclWorld nccl(*world, world->local_rank);
  const double join_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  std::vector<float> host(1024, 1.0f);
  void* memory = nullptr;
  if (cudaMalloc(&memory, host.size() * sizeof(float)) != cudaSuccess) throw layerplan::UsageError("cudaMalloc failed");
  auto* device = static_cast<float*>(memory);
  if (cudaMemcpy(device, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess) {
    throw layerplan::UsageError("cannot copy to the GPU");
  }
  nccl.all_reduce_sum(device, host.size());
  cudaMemcpy(host.data(), device, host.size() * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(device);
  if (!made_dir.empty()) std::filesystem::remove_all(made_dir);
  for (float v : host) {
    if (v != static_cast<float>(nccl.size())) {
      std::fprintf(stderr, "rank %d: all-reduce gave %g, expected %d\n", nccl.rank(), static_cast<double>(v),
                   nccl.size());
      return 1;
    }
  }
  if (nccl.rank() == 0) std::printf("nccl ranks %d join_ms %.1f all-reduce ok\n", nccl.size(), join_ms);
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const layerplan::UsageError& e) {
    std::fprintf(stderr, "gpu_probe: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_probe: %s\n", e.what());
    return 1;
  }
}
