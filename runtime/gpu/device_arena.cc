// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
#include "runtime/gpu/device_arena.h"

#include <string>

#include "runtime/gpu/cuda_check.h"

namespace layerplan::gpu {

DeviceArena::DeviceArena(size_t capacity_bytes) : capacity_(capacity_bytes) {
  void* base = nullptr;
  check(cudaMalloc(&base, capacity_bytes), "cudaMalloc of the device arena");
  base_ = static_cast<char*>(base);
}

DeviceArena::~DeviceArena() { cudaFree(base_); }

void* DeviceArena::allocate(size_t bytes) {
  constexpr size_t kAlign = 256;
  const size_t begin = (used_ + kAlign - 1) / kAlign * kAlign;
  if (begin + bytes > capacity_) {
    throw std::runtime_error("device arena: a kernel needs " + std::to_string(begin + bytes) +
                             " bytes, the arena has " + std::to_string(capacity_));
  }
  used_ = begin + bytes;
  if (used_ > peak_) peak_ = used_;
  return base_ + begin;
}

}  // namespace layerplan::gpu
