// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
#include "runtime/gpu/device_kernels.h"

#include "runtime/gpu/cuda_check.h"
#include "runtime/gpu/device_index.h"

namespace layerplan::gpu {
namespace {

constexpr int kThreads = 256;

int blocks_for(int64_t count) {
  const int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65535 * 16 ? blocks : 65535 * 16);  // grid-stride loops cover the rest
}

struct BoxCopy {
  const float* src;
  float* dst;
  int64_t src_ext[4], src_at[4], dst_ext[4], dst_at[4], box[4];
};

__global__ void copy_box_kernel(BoxCopy p, int64_t count, bool add) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const BoxCopyIndex at = box_copy_index(i, p.box, p.src_ext, p.src_at, p.dst_ext, p.dst_at);
    p.dst[at.dst] = add ? p.dst[at.dst] + p.src[at.src] : p.src[at.src];
  }
}

__global__ void fill_kernel(float* data, int64_t count, float value) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    data[i] = value;
}

__global__ void add_kernel(float* y, const float* x, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] += x[i];
}

__global__ void relu_forward_kernel(const float* x, float* y, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

__global__ void relu_backward_kernel(const float* y, const float* dy, float* dx, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

__global__ void channel_bias_kernel(float* y, const float* bias, int64_t count, int64_t channels, int64_t plane) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] += bias[(i / plane) % channels];
}

void launched(const char* what) { check(cudaGetLastError(), what); }

}  // namespace

void copy_box(const float* src, const Dims4& src_ext, const Dims4& src_at, float* dst, const Dims4& dst_ext,
              const Dims4& dst_at, const Dims4& box, bool add, cudaStream_t stream) {
  BoxCopy p{src, dst, {}, {}, {}, {}, {}};
  int64_t count = 1;
  for (int d = 0; d < 4; ++d) {
    p.src_ext[d] = src_ext[d];
    p.src_at[d] = src_at[d];
    p.dst_ext[d] = dst_ext[d];
    p.dst_at[d] = dst_at[d];
    p.box[d] = box[d];
    count *= box[d];
  }
  if (count == 0) return;
  copy_box_kernel<<<blocks_for(count), kThreads, 0, stream>>>(p, count, add);
  launched("copy_box");
}

void fill(float* data, int64_t count, float value, cudaStream_t stream) {
  if (count == 0) return;
  fill_kernel<<<blocks_for(count), kThreads, 0, stream>>>(data, count, value);
  launched("fill");
}

void add_into(float* y, const float* x, int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  add_kernel<<<blocks_for(count), kThreads, 0, stream>>>(y, x, count);
  launched("add_into");
}

void relu_forward(const float* x, float* y, int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  relu_forward_kernel<<<blocks_for(count), kThreads, 0, stream>>>(x, y, count);
  launched("relu_forward");
}

void relu_backward(const float* y, const float* dy, float* dx, int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  relu_backward_kernel<<<blocks_for(count), kThreads, 0, stream>>>(y, dy, dx, count);
  launched("relu_backward");
}

void add_channel_bias(float* y, const float* bias, const Dims4& ext, cudaStream_t stream) {
  const int64_t count = ext[0] * ext[1] * ext[2] * ext[3];
  if (count == 0) return;
  channel_bias_kernel<<<blocks_for(count), kThreads, 0, stream>>>(y, bias, count, ext[1], ext[2] * ext[3]);
  launched("add_channel_bias");
}

}  // namespace layerplan::gpu
