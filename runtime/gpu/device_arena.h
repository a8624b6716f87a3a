#pragma once
// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
// The one device allocation of a rank (docs/gpu-backend.md, "Device memory"): cudaMalloc'd
// once at start-up, then handed out by a bump pointer that each kernel call resets, so no
// step calls cudaMalloc. A request beyond the capacity throws, naming both sizes; the peak
// is what a run reports as its device memory.
#include <cstddef>

namespace layerplan::gpu {

class DeviceArena {
 public:
  explicit DeviceArena(size_t capacity_bytes);
  ~DeviceArena();
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;

  // `bytes` of device memory, 256-byte aligned, valid until the next reset().
  void* allocate(size_t bytes);
  template <typename T>
  T* allocate_n(size_t count) {
    return static_cast<T*>(allocate(count * sizeof(T)));
  }
  void reset() { used_ = 0; }

  size_t capacity() const { return capacity_; }
  size_t peak() const { return peak_; }

 private:
  char* base_ = nullptr;
  size_t capacity_ = 0;
  size_t used_ = 0;
  size_t peak_ = 0;
};

}  // namespace layerplan::gpu
