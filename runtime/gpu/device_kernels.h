#pragma once
// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
// The backend's own CUDA kernels (device_kernels.cu), where no cuDNN or cuBLAS call fits:
// moving boxes between NCHW buffers (packing for NCCL, unpacking, adding halo gradients,
// padding a tile into its convolution buffer), filling, ReLU and bias. Each is queued on
// `stream` and returns at once.
#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>

namespace layerplan::gpu {

using Dims4 = std::array<int64_t, 4>;  // n, c, h, w

// The elements of a box of extents `box` at `src_at` in the NCHW buffer `src` (extents
// src_ext) to `dst_at` in `dst` (extents dst_ext), copied, or added when `add`.
// Packing: dst_ext = box, dst_at = 0; unpacking the other way round.
void copy_box(const float* src, const Dims4& src_ext, const Dims4& src_at, float* dst, const Dims4& dst_ext,
              const Dims4& dst_at, const Dims4& box, bool add, cudaStream_t stream);

void fill(float* data, int64_t count, float value, cudaStream_t stream);
void add_into(float* y, const float* x, int64_t count, cudaStream_t stream);  // y += x
void relu_forward(const float* x, float* y, int64_t count, cudaStream_t stream);
// dx = dy where y > 0, else 0 (y: the forward's output).
void relu_backward(const float* y, const float* dy, float* dx, int64_t count, cudaStream_t stream);
// y[n][c][h][w] += bias[c] over an NCHW buffer of extents `ext`.
void add_channel_bias(float* y, const float* bias, const Dims4& ext, cudaStream_t stream);

}  // namespace layerplan::gpu
