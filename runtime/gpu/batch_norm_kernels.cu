// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
#include "runtime/gpu/batch_norm_kernels.h"

#include "runtime/gpu/cuda_check.h"
#include "runtime/gpu/device_index.h"

namespace layerplan::gpu {
namespace {

constexpr int kThreads = 256;  // a power of two: the tree reduction halves it

// Sums a and b over the block into a[0], b[0] (shared arrays of kThreads), in a fixed order.
__device__ void block_sum(double* a, double* b) {
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    __syncthreads();
    if (static_cast<int>(threadIdx.x) < stride) {
      a[threadIdx.x] += a[threadIdx.x + stride];
      b[threadIdx.x] += b[threadIdx.x + stride];
    }
  }
  __syncthreads();
}

__global__ void statistics_kernel(const float* x, Planes p, double* sum, double* sum_sq) {
  __shared__ double s[kThreads], q[kThreads];
  const int64_t c = blockIdx.x, count = p.n * p.hw;
  double a = 0, b = 0;
  for (int64_t k = threadIdx.x; k < count; k += kThreads) {
    const double v = x[channel_element(p.c, p.hw, c, k)];
    a += v;
    b += v * v;
  }
  s[threadIdx.x] = a;
  q[threadIdx.x] = b;
  block_sum(s, q);
  if (threadIdx.x == 0) {
    sum[c] = s[0];
    sum_sq[c] = q[0];
  }
}

__global__ void backward_sums_kernel(const float* x, const float* dy, Planes p, const double* mean,
                                     const double* inv_std, double* sum_dy, double* sum_dy_xhat) {
  __shared__ double s[kThreads], q[kThreads];
  const int64_t c = blockIdx.x, count = p.n * p.hw;
  double a = 0, b = 0;
  for (int64_t k = threadIdx.x; k < count; k += kThreads) {
    const int64_t i = channel_element(p.c, p.hw, c, k);
    const double g = dy[i];
    a += g;
    b += g * (x[i] - mean[c]) * inv_std[c];
  }
  s[threadIdx.x] = a;
  q[threadIdx.x] = b;
  block_sum(s, q);
  if (threadIdx.x == 0) {
    sum_dy[c] = s[0];
    sum_dy_xhat[c] = q[0];
  }
}

__global__ void forward_kernel(const float* x, float* y, Planes p, const double* mean, const double* inv_std,
                               const float* gamma, const float* beta) {
  const int64_t count = p.n * p.c * p.hw;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = (i / p.hw) % p.c;
    y[i] = static_cast<float>((x[i] - mean[c]) * inv_std[c] * gamma[c] + beta[c]);
  }
}

__global__ void backward_kernel(const float* x, const float* dy, float* dx, Planes p, const double* mean,
                                const double* inv_std, const float* gamma, const double* sum_dy,
                                const double* sum_dy_xhat, double m) {
  const int64_t count = p.n * p.c * p.hw;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = (i / p.hw) % p.c;
    const double xhat = (x[i] - mean[c]) * inv_std[c];
    dx[i] = static_cast<float>(gamma[c] * inv_std[c] / m * (m * dy[i] - sum_dy[c] - xhat * sum_dy_xhat[c]));
  }
}

int blocks_for(Planes p) {
  const int64_t blocks = (p.n * p.c * p.hw + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65535 * 16 ? blocks : 65535 * 16);
}

}  // namespace

void batch_norm_statistics(const float* x, Planes p, double* sum, double* sum_sq, cudaStream_t stream) {
  if (p.c == 0) return;
  statistics_kernel<<<static_cast<unsigned>(p.c), kThreads, 0, stream>>>(x, p, sum, sum_sq);
  check(cudaGetLastError(), "batch_norm_statistics");
}

void batch_norm_forward(const float* x, float* y, Planes p, const double* mean, const double* inv_std,
                        const float* gamma, const float* beta, cudaStream_t stream) {
  if (p.n * p.c * p.hw == 0) return;
  forward_kernel<<<blocks_for(p), kThreads, 0, stream>>>(x, y, p, mean, inv_std, gamma, beta);
  check(cudaGetLastError(), "batch_norm_forward");
}

void batch_norm_backward_sums(const float* x, const float* dy, Planes p, const double* mean, const double* inv_std,
                              double* sum_dy, double* sum_dy_xhat, cudaStream_t stream) {
  if (p.c == 0) return;
  backward_sums_kernel<<<static_cast<unsigned>(p.c), kThreads, 0, stream>>>(x, dy, p, mean, inv_std, sum_dy,
                                                                            sum_dy_xhat);
  check(cudaGetLastError(), "batch_norm_backward_sums");
}

void batch_norm_backward(const float* x, const float* dy, float* dx, Planes p, const double* mean,
                         const double* inv_std, const float* gamma, const double* sum_dy, const double* sum_dy_xhat,
                         double m, cudaStream_t stream) {
  if (p.n * p.c * p.hw == 0) return;
  backward_kernel<<<blocks_for(p), kThreads, 0, stream>>>(x, dy, dx, p, mean, inv_std, gamma, sum_dy, sum_dy_xhat, m);
  check(cudaGetLastError(), "batch_norm_backward");
}

}  // namespace layerplan::gpu
