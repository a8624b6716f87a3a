// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
#include "runtime/gpu/pointwise_kernels.h"

#include "runtime/gpu/cuda_check.h"
#include "runtime/gpu/device_index.h"

namespace layerplan::gpu {
namespace {

constexpr int kThreads = 256;

int blocks_for(int64_t count) {
  const int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65535 * 16 ? blocks : 65535 * 16);
}

struct DropoutTile {
  int64_t ext[4], origin[4], whole[4];
};

// SplitMix64's finalizer, as kernel_types.cc's dropout_keeps.
__device__ uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

__global__ void dropout_kernel(const float* x, float* y, DropoutTile t, int64_t count, uint64_t seed,
                               double probability) {
  const double scale = 1.0 / (1.0 - probability);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t index = whole_tensor_index(i, t.ext, t.origin, t.whole);
    const uint64_t bits = mix(mix(seed + 0x9e3779b97f4a7c15ULL) ^ static_cast<uint64_t>(index));
    const double u = static_cast<double>(bits >> 40) / 16777216.0;
    y[i] = u >= probability ? static_cast<float>(x[i] * scale) : 0.0f;
  }
}

__global__ void gap_forward_kernel(const float* x, float* y, int64_t planes, int64_t area) {
  for (int64_t p = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; p < planes;
       p += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double acc = 0;
    for (int64_t k = 0; k < area; ++k) acc += x[p * area + k];
    y[p] = static_cast<float>(acc / static_cast<double>(area));
  }
}

__global__ void gap_backward_kernel(const float* dy, float* dx, int64_t planes, int64_t area) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < planes * area;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    dx[i] = static_cast<float>(dy[i / area] / static_cast<double>(area));
}

// GELU and its derivative, as ActivationFunction (runtime/kernels/activation_math.h).
constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kKappa = 0.044715;

__device__ double gelu_of(double x, bool tanh_form) {
  if (tanh_form) return 0.5 * x * (1.0 + tanh(kSqrt2OverPi * (x + kKappa * x * x * x)));
  return 0.5 * x * (1.0 + erf(x * kSqrtHalf));
}

__device__ double gelu_derivative(double x, bool tanh_form) {
  if (tanh_form) {
    const double t = tanh(kSqrt2OverPi * (x + kKappa * x * x * x));
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * kSqrt2OverPi * (1.0 + 3.0 * kKappa * x * x);
  }
  return 0.5 * (1.0 + erf(x * kSqrtHalf)) + x * kInvSqrt2Pi * exp(-0.5 * x * x);
}

__global__ void gelu_forward_kernel(const float* x, float* y, int64_t count, bool tanh_form) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = static_cast<float>(gelu_of(x[i], tanh_form));
}

__global__ void gelu_backward_kernel(const float* x, const float* dy, float* dx, int64_t count, bool tanh_form) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    dx[i] = static_cast<float>(static_cast<double>(dy[i]) * gelu_derivative(x[i], tanh_form));
}

__global__ void softmax_forward_kernel(const float* x, const int64_t* labels, float* probabilities, double* loss,
                                       int64_t samples, int64_t classes) {
  for (int64_t s = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; s < samples;
       s += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float* row = x + s * classes;
    float* p = probabilities + s * classes;
    double top = row[0];
    for (int64_t k = 1; k < classes; ++k) top = row[k] > top ? row[k] : top;
    double total = 0;
    for (int64_t k = 0; k < classes; ++k) total += exp(row[k] - top);
    for (int64_t k = 0; k < classes; ++k) p[k] = static_cast<float>(exp(row[k] - top) / total);
    loss[s] = log(total) + top - row[labels[s]];
  }
}

__global__ void softmax_backward_kernel(const float* probabilities, const int64_t* labels, float* dx, int64_t samples,
                                        int64_t classes, double batch) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < samples * classes;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float v = probabilities[i];
    if (i % classes == labels[i / classes]) v -= 1.0f;
    dx[i] = static_cast<float>(v / batch);
  }
}

__global__ void channel_shuffle_kernel(const float* from, float* to, int64_t count, int64_t channels, int64_t area,
                                       int64_t groups, bool inverse) {
  const int64_t per_group = channels / groups;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t a = i % area, c = i / area % channels, n = i / area / channels;
    const int64_t source = ((n * channels) + (c % groups) * per_group + c / groups) * area + a;
    if (inverse) {
      to[source] = from[i];
    } else {
      to[i] = from[source];
    }
  }
}

}  // namespace

void dropout(const float* x, float* y, const Dims4& ext, const Dims4& origin, const Dims4& whole, uint64_t seed,
             double probability, cudaStream_t stream) {
  DropoutTile t{};
  int64_t count = 1;
  for (int d = 0; d < 4; ++d) {
    t.ext[d] = ext[d];
    t.origin[d] = origin[d];
    t.whole[d] = whole[d];
    count *= ext[d];
  }
  if (count == 0) return;
  dropout_kernel<<<blocks_for(count), kThreads, 0, stream>>>(x, y, t, count, seed, probability);
  check(cudaGetLastError(), "dropout");
}

void global_avg_pool_forward(const float* x, float* y, int64_t planes, int64_t area, cudaStream_t stream) {
  if (planes == 0) return;
  gap_forward_kernel<<<blocks_for(planes), kThreads, 0, stream>>>(x, y, planes, area);
  check(cudaGetLastError(), "global_avg_pool_forward");
}

void global_avg_pool_backward(const float* dy, float* dx, int64_t planes, int64_t area, cudaStream_t stream) {
  if (planes * area == 0) return;
  gap_backward_kernel<<<blocks_for(planes * area), kThreads, 0, stream>>>(dy, dx, planes, area);
  check(cudaGetLastError(), "global_avg_pool_backward");
}

void gelu_forward(const float* x, float* y, int64_t count, bool tanh, cudaStream_t stream) {
  if (count == 0) return;
  gelu_forward_kernel<<<blocks_for(count), kThreads, 0, stream>>>(x, y, count, tanh);
  check(cudaGetLastError(), "gelu_forward");
}

void gelu_backward(const float* x, const float* dy, float* dx, int64_t count, bool tanh, cudaStream_t stream) {
  if (count == 0) return;
  gelu_backward_kernel<<<blocks_for(count), kThreads, 0, stream>>>(x, dy, dx, count, tanh);
  check(cudaGetLastError(), "gelu_backward");
}

void softmax_cross_entropy_forward(const float* x, const int64_t* labels, float* probabilities, double* loss,
                                   int64_t samples, int64_t classes, cudaStream_t stream) {
  if (samples == 0) return;
  softmax_forward_kernel<<<blocks_for(samples), kThreads, 0, stream>>>(x, labels, probabilities, loss, samples,
                                                                       classes);
  check(cudaGetLastError(), "softmax_cross_entropy_forward");
}

void softmax_cross_entropy_backward(const float* probabilities, const int64_t* labels, float* dx, int64_t samples,
                                    int64_t classes, double batch, cudaStream_t stream) {
  if (samples * classes == 0) return;
  softmax_backward_kernel<<<blocks_for(samples * classes), kThreads, 0, stream>>>(probabilities, labels, dx, samples,
                                                                                  classes, batch);
  check(cudaGetLastError(), "softmax_cross_entropy_backward");
}

void channel_shuffle(const float* from, float* to, int64_t samples, int64_t channels, int64_t area, int64_t groups,
                     bool inverse, cudaStream_t stream) {
  const int64_t count = samples * channels * area;
  if (count == 0) return;
  channel_shuffle_kernel<<<blocks_for(count), kThreads, 0, stream>>>(from, to, count, channels, area, groups, inverse);
  check(cudaGetLastError(), "channel_shuffle");
}

}  // namespace layerplan::gpu
