// NOT YET RUN ON A GPU: in CI it runs only with no GPU visible (docs/gpu-backend.md, "What has run where").
#include "runtime/gpu/gpu_inventory.h"

#include <cuda_runtime_api.h>

#include <cstdlib>

#include "common/error.h"

namespace layerplan {
namespace {

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

std::string visible_devices_text() {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  return v ? std::string("; CUDA_VISIBLE_DEVICES='") + v + "'" : "";
}

}  // namespace

GpuInventory probe_gpus() {
  GpuInventory inventory;
  cudaRuntimeGetVersion(&inventory.runtime_version);
  cudaDriverGetVersion(&inventory.driver_version);  // 0 when no driver is loaded
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    if (inventory.driver_version == 0) {
      inventory.problem = "no NVIDIA driver";
    } else if (status == cudaErrorInsufficientDriver) {
      inventory.problem = "the NVIDIA driver supports CUDA " + version_text(inventory.driver_version) +
                          ", this layerplan needs CUDA " + version_text(inventory.runtime_version);
    } else {
      inventory.problem = cudaGetErrorString(status);
    }
    return inventory;
  }
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, d) == cudaSuccess) {
      inventory.names.emplace_back(properties.name);
    } else {
      inventory.names.emplace_back("GPU " + std::to_string(d));
    }
  }
  return inventory;
}

void require_gpus(const GpuInventory& inventory, int needed) {
  const int found = static_cast<int>(inventory.names.size());
  if (found >= needed) return;
  std::string line = "this run needs " + std::to_string(needed) + (needed == 1 ? " GPU" : " GPUs") + ", found " +
                     std::to_string(found);
  if (!inventory.problem.empty()) line += ": " + inventory.problem;
  line += visible_devices_text();
  throw UsageError(line);
}

}  // namespace layerplan
