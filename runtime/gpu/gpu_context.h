#pragma once
// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
// What the GPU kernels of one device share: its stream, cuDNN and cuBLAS handles set to the
// run's precision, the device arena, and moving host tensors in and out of it. The executor's
// tensors are host memory today, so each kernel uploads its operands and downloads its
// results (docs/gpu-backend.md, "What is built"). Private to runtime/gpu.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <vector>

#include "runtime/gpu/device_arena.h"
#include "runtime/gpu/device_kernels.h"
#include "runtime/gpu/precision.h"
#include "runtime/kernels/tensor.h"

namespace layerplan::gpu {

class GpuContext {
 public:
  GpuContext(int device, Precision precision, size_t arena_bytes);
  ~GpuContext();
  GpuContext(const GpuContext&) = delete;
  GpuContext& operator=(const GpuContext&) = delete;

  cudaStream_t stream() const { return stream_; }
  cudnnHandle_t cudnn() const { return cudnn_; }
  cublasHandle_t cublas() const { return cublas_; }
  DeviceArena& arena() { return arena_; }
  const MathRules& rules() const { return rules_; }
  // cuDNN's math type for convolutions: CUDNN_FMA_MATH (no TF32) unless the rules allow TF32.
  cudnnMathType_t conv_math() const;

  // A copy of `values` in the arena (queued on the stream).
  float* upload(const float* values, int64_t count);
  float* upload(const Tensor& t) { return upload(t.data(), t.size()); }
  float* upload(const std::vector<float>& v) { return upload(v.data(), static_cast<int64_t>(v.size())); }
  double* upload(const std::vector<double>& v);
  int64_t* upload(const std::vector<int64_t>& v);
  // Waits for the stream, then copies `count` floats from the device.
  std::vector<float> download(const float* device_values, int64_t count);
  Tensor download(const float* device_values, const Box& box);
  std::vector<double> download_doubles(const double* device_values, int64_t count);

 private:
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  MathRules rules_;
  DeviceArena arena_;
};

// The extents of a box, as the device kernels take them.
Dims4 extents(const Box& box);

}  // namespace layerplan::gpu
