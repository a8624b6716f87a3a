#pragma once
// Which GPU a rank computes on (docs/gpu-backend.md, "Which GPU a rank uses"): local rank k
// uses the k-th GPU the CUDA runtime shows, i.e. the k-th entry of CUDA_VISIBLE_DEVICES
// when it is set. Pure host logic, tested in CI without a GPU; the caller counts the GPUs
// (probe_gpus) and refuses a run that needs more (require_gpus).
#include <optional>
#include <string>
#include <vector>

namespace layerplan {

// CUDA_VISIBLE_DEVICES as the CUDA runtime reads it: comma-separated indices, GPU-<uuid>
// or MIG-<uuid> entries, up to the first entry that is none of those (CUDA ignores it and
// the rest). nullopt when unset (every GPU is visible); an empty list when set but empty.
std::optional<std::vector<std::string>> visible_gpu_entries(const char* cuda_visible_devices);

struct GpuBinding {
  int cuda_device = 0;   // the CUDA ordinal (cudaSetDevice) among the visible GPUs
  std::string physical;  // what it is on the machine: the CUDA_VISIBLE_DEVICES entry, else the ordinal
};

// The GPU of local rank `local_rank` (0-based) when `visible` GPUs are seen. Throws
// UsageError with one line ("rank 3 needs the 4th visible GPU, found 2; ...") when there
// are not enough.
GpuBinding bind_local_rank(int local_rank, int visible, const char* cuda_visible_devices);

// This process's local rank: LAYERPLAN_LOCAL_RANK (layerplan launch), else LOCAL_RANK
// (torchrun and the launchers that follow it), else SLURM_LOCALID (srun), else 0. Throws
// UsageError for a value that is not a number >= 0.
int local_rank_from_env();

}  // namespace layerplan
