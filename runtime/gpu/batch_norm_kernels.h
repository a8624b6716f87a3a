#pragma once
// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
// Training-mode batch norm of one tile on the GPU, in the steps of the kernel interface
// around the caller's all-reduce (docs/kernels.md, "Batch norm: partial statistics"): the
// tile's per-channel sums, the forward with the global statistics, the backward's sums and
// the input gradient. Own kernels, since cuDNN's batch norm computes the statistics of its
// own tensor only. Sums are in double, one block per channel, reduced in a fixed order (no
// atomics), so they do not change from run to run. The tensor is exactly the tile's box,
// N x C x HW with contiguous (n, c) planes; means, inverse deviations and sums are device
// arrays of C doubles.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace layerplan::gpu {

struct Planes {
  int64_t n = 0, c = 0, hw = 0;  // samples, channels, elements per plane
};

void batch_norm_statistics(const float* x, Planes p, double* sum, double* sum_sq, cudaStream_t stream);
// y = (x - mean[c]) * inv_std[c] * gamma[c] + beta[c]
void batch_norm_forward(const float* x, float* y, Planes p, const double* mean, const double* inv_std,
                        const float* gamma, const float* beta, cudaStream_t stream);
// Per channel: sum of dy and of dy * (x - mean[c]) * inv_std[c].
void batch_norm_backward_sums(const float* x, const float* dy, Planes p, const double* mean, const double* inv_std,
                              double* sum_dy, double* sum_dy_xhat, cudaStream_t stream);
// dx = gamma*inv_std/m * (m*dy - sum_dy - x_hat*sum_dy_xhat), m elements per channel in the batch.
void batch_norm_backward(const float* x, const float* dy, float* dx, Planes p, const double* mean,
                         const double* inv_std, const float* gamma, const double* sum_dy, const double* sum_dy_xhat,
                         double m, cudaStream_t stream);

}  // namespace layerplan::gpu
