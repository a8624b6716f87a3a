#pragma once
// What `--backend gpu` requires of the machine, checked before a run starts: the GPU
// backend built in (-DLAYERPLAN_CUDA), an NVIDIA driver new enough, and enough visible GPUs.
// Each failure is one UsageError line naming what was found and what was needed
// (runtime/gpu/gpu_inventory.h).
namespace layerplan {

// `needed` GPUs visible to this process (layerplan launch: one per rank).
void require_visible_gpus(int needed);

// This rank's GPU: the local rank's visible GPU (runtime/gpu/gpu_binding.h). Returns its
// CUDA ordinal.
int require_gpu_of_this_rank();

}  // namespace layerplan
