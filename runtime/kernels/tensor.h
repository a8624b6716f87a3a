#pragma once
// A tensor of a box: dense NCHW float data for one box (region) of a layer's whole output
// tensor. Tiles, the halos a tile reads, and gradients of either are all tensors of a box;
// the box says which elements of the whole tensor the data holds, so that moving data
// between tiles is copying the intersection of two boxes.
#include <cstdint>
#include <new>
#include <utility>
#include <vector>

#include "model/geometry.h"

namespace layerplan {

// std::allocator whose value-less construct() leaves floats uninitialized, so that a
// buffer a kernel overwrites entirely is not first zeroed (one pass over memory saved).
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <typename U>
  explicit UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

class Tensor {
 public:
  enum Uninitialized { kUninitialized };

  Tensor() = default;
  // Zeros over `box`.
  explicit Tensor(const Box& box);
  // Over `box`, values unspecified: for results that are written element by element.
  Tensor(const Box& box, Uninitialized);
  // `data` in NCHW order of the box; throws std::invalid_argument unless it has box.volume() floats.
  Tensor(const Box& box, std::vector<float> data);

  const Box& box() const { return box_; }
  // Extents of the box (not of the whole tensor).
  Shape shape() const;
  int64_t size() const { return static_cast<int64_t>(data_.size()); }
  float* data() { return data_.data(); }
  const float* data() const { return data_.data(); }
  std::vector<float> values() const { return {data_.begin(), data_.end()}; }  // a copy

  // Offset in data() of the element at *global* coordinates (n, c, h, w), which must lie
  // in the box (unchecked; use contains()).
  int64_t offset(int64_t n, int64_t c, int64_t h, int64_t w) const {
    return ((((n - box_.dim[0].lo) * ext_[1]) + (c - box_.dim[1].lo)) * ext_[2] + (h - box_.dim[2].lo)) * ext_[3] +
           (w - box_.dim[3].lo);
  }
  float& at(int64_t n, int64_t c, int64_t h, int64_t w) { return data_[static_cast<size_t>(offset(n, c, h, w))]; }
  float at(int64_t n, int64_t c, int64_t h, int64_t w) const { return data_[static_cast<size_t>(offset(n, c, h, w))]; }
  bool contains(const Box& box) const;

 private:
  Box box_;
  std::array<int64_t, kNumDims> ext_{0, 0, 0, 0};
  std::vector<float, UninitializedAllocator<float>> data_;

  void set_box(const Box& box);
};

// Copies the elements of src.box() ∩ dst->box() from src into dst (what a transfer between
// two tiles does). Returns the number of elements copied (0 when the boxes miss).
int64_t copy_intersection(const Tensor& src, Tensor* dst);
// Adds the elements of src.box() ∩ dst->box() into dst: how partial gradients of an input
// region (e.g. the halos that neighbouring tiles read) are summed at the region's owner.
int64_t add_intersection(const Tensor& src, Tensor* dst);
// The part of `src` inside `box`; throws std::invalid_argument unless src covers box.
Tensor crop(const Tensor& src, const Box& box);
// Throws std::invalid_argument naming `what` unless the tensor covers `box`.
void require_covers(const Tensor& t, const Box& box, const char* what);

}  // namespace layerplan
