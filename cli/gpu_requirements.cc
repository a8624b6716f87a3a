#include "cli/gpu_requirements.h"

#include <cstdlib>

#include "common/error.h"
#include "runtime/gpu/gpu_binding.h"
#ifdef LAYERPLAN_HAVE_CUDA
#include "runtime/gpu/gpu_inventory.h"
#endif

namespace layerplan {
namespace {

#ifdef LAYERPLAN_HAVE_CUDA
int visible_gpus(int needed) {
  const GpuInventory inventory = probe_gpus();
  require_gpus(inventory, needed);
  return static_cast<int>(inventory.names.size());
}
#else
[[noreturn]] int visible_gpus(int /*needed*/) {
  throw UsageError(
      "--backend gpu: this layerplan is built without the GPU backend (configure with -DLAYERPLAN_CUDA=on where the "
      "CUDA toolkit 13, cuDNN and NCCL are installed)");
}
#endif

}  // namespace

void require_visible_gpus(int needed) { visible_gpus(needed); }

int require_gpu_of_this_rank() {
  const int local = local_rank_from_env();
  const int visible = visible_gpus(local + 1);
  return bind_local_rank(local, visible, std::getenv("CUDA_VISIBLE_DEVICES")).cuda_device;
}

}  // namespace layerplan
