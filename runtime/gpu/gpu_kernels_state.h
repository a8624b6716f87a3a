#pragma once
// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
// What GpuKernels holds (gpu_kernels.h), shared by the files that implement it.
#include "runtime/gpu/gpu_context.h"
#include "runtime/gpu/gpu_conv.h"
#include "runtime/gpu/gpu_kernels.h"

namespace layerplan {

struct GpuKernels::State {
  gpu::GpuContext ctx;
  gpu::GpuConv conv;
  State(int device, Precision precision, size_t arena_bytes) : ctx(device, precision, arena_bytes), conv(ctx) {}
};

}  // namespace layerplan
