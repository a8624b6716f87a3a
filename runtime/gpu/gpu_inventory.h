#pragma once
// NOT YET RUN ON A GPU: in CI it runs only with no GPU visible (docs/gpu-backend.md, "What has run where").
// The GPUs this process can use, as the CUDA runtime sees them (CUDA_VISIBLE_DEVICES
// respected), and the one-line refusal when a run needs more than there are
// (docs/gpu-backend.md). Built only with the GPU backend (-DLAYERPLAN_CUDA); the CUDA
// runtime is linked statically, so the binary starts where no NVIDIA driver is installed
// and says so instead.
#include <string>
#include <vector>

namespace layerplan {

struct GpuInventory {
  std::vector<std::string> names;  // one per visible GPU, in CUDA's order
  int driver_version = 0;          // CUDA's encoding (13000 = 13.0); 0 without a driver
  int runtime_version = 0;         // the CUDA runtime linked in
  std::string problem;             // why none are usable ("" when the query worked)
};

// Asks the CUDA runtime; never throws.
GpuInventory probe_gpus();

// Throws UsageError with one line naming what was found and what was needed, e.g.
// "this run needs 4 GPUs, found 0: no NVIDIA driver (CUDA: ...); CUDA_VISIBLE_DEVICES=''".
void require_gpus(const GpuInventory& inventory, int needed);

}  // namespace layerplan
