// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
#include "runtime/gpu/gpu_context.h"

#include <stdexcept>

#include "runtime/gpu/cuda_check.h"

namespace layerplan::gpu {
namespace {

// The arena is made after the device is chosen.
size_t on_device(int device, size_t bytes) {
  check(cudaSetDevice(device), "cudaSetDevice");
  return bytes;
}

}  // namespace

GpuContext::GpuContext(int device, Precision precision, size_t arena_bytes)
    : device_(device), rules_(math_rules(precision)), arena_(on_device(device, arena_bytes)) {
  if (rules_.bf16_compute) throw std::invalid_argument("--precision bf16: the bf16 GPU kernels are not built yet");
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudnnCreate(&cudnn_), "cudnnCreate");
  check(cudnnSetStream(cudnn_, stream_), "cudnnSetStream");
  check(cublasCreate(&cublas_), "cublasCreate");
  check(cublasSetStream(cublas_, stream_), "cublasSetStream");
  // fp32: no TF32 anywhere, the exactness checks' mode; tf32: tensor cores allowed.
  check(cublasSetMathMode(cublas_, rules_.tensor_core_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH),
        "cublasSetMathMode");
}

GpuContext::~GpuContext() {
  cudaSetDevice(device_);
  if (cublas_ != nullptr) cublasDestroy(cublas_);
  if (cudnn_ != nullptr) cudnnDestroy(cudnn_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

cudnnMathType_t GpuContext::conv_math() const { return rules_.tensor_core_tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH; }

float* GpuContext::upload(const float* values, int64_t count) {
  float* d = arena_.allocate_n<float>(static_cast<size_t>(count));
  if (count > 0) {
    check(cudaMemcpyAsync(d, values, static_cast<size_t>(count) * sizeof(float), cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync to the device");
  }
  return d;
}

std::vector<float> GpuContext::download(const float* device_values, int64_t count) {
  std::vector<float> v(static_cast<size_t>(count));
  if (count > 0) {
    check(cudaMemcpyAsync(v.data(), device_values, v.size() * sizeof(float), cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpyAsync from the device");
  }
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  return v;
}

double* GpuContext::upload(const std::vector<double>& v) {
  auto* d = static_cast<double*>(arena_.allocate(v.size() * sizeof(double)));
  if (!v.empty()) {
    check(cudaMemcpyAsync(d, v.data(), v.size() * sizeof(double), cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync to the device");
  }
  return d;
}

int64_t* GpuContext::upload(const std::vector<int64_t>& v) {
  auto* d = static_cast<int64_t*>(arena_.allocate(v.size() * sizeof(int64_t)));
  if (!v.empty()) {
    check(cudaMemcpyAsync(d, v.data(), v.size() * sizeof(int64_t), cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync to the device");
  }
  return d;
}

std::vector<double> GpuContext::download_doubles(const double* device_values, int64_t count) {
  std::vector<double> v(static_cast<size_t>(count));
  if (count > 0) {
    check(cudaMemcpyAsync(v.data(), device_values, v.size() * sizeof(double), cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpyAsync from the device");
  }
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  return v;
}

Tensor GpuContext::download(const float* device_values, const Box& box) {
  return Tensor(box, download(device_values, box.volume()));
}

Dims4 extents(const Box& box) { return {box.dim[0].size(), box.dim[1].size(), box.dim[2].size(), box.dim[3].size()}; }

}  // namespace layerplan::gpu
