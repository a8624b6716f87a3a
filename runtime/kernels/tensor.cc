#include "runtime/kernels/tensor.h"

#include <stdexcept>
#include <string>

namespace layerplan {

Tensor::Tensor(const Box& box) {
  set_box(box);
  data_.assign(static_cast<size_t>(box.volume()), 0.0f);
}

Tensor::Tensor(const Box& box, Uninitialized) {
  set_box(box);
  data_.resize(static_cast<size_t>(box.volume()));
}

void Tensor::set_box(const Box& box) {
  for (int d = 0; d < kNumDims; ++d) {
    if (box.dim[d].hi < box.dim[d].lo) throw std::invalid_argument("tensor box " + box.str() + " is inverted");
    ext_[d] = box.dim[d].size();
  }
  box_ = box;
}

Tensor::Tensor(const Box& box, std::vector<float> data) {
  set_box(box);
  data_.assign(data.begin(), data.end());
  if (static_cast<int64_t>(data_.size()) != box.volume()) {
    throw std::invalid_argument("tensor of box " + box.str() + " needs " + std::to_string(box.volume()) +
                                " floats, got " + std::to_string(data_.size()));
  }
}

Shape Tensor::shape() const { return Shape{ext_}; }

bool Tensor::contains(const Box& box) const {
  if (box.empty()) return true;
  for (int d = 0; d < kNumDims; ++d) {
    if (box.dim[d].lo < box_.dim[d].lo || box.dim[d].hi > box_.dim[d].hi) return false;
  }
  return true;
}

void require_covers(const Tensor& t, const Box& box, const char* what) {
  if (!t.contains(box)) {
    throw std::invalid_argument(std::string(what) + " must cover " + box.str() + ", got a tensor of " + t.box().str());
  }
}

namespace {

// Calls row(src_offset, dst_offset, length) for each contiguous W-row of a ∩ b.
template <typename Row>
int64_t for_each_row(const Tensor& src, const Tensor& dst, Row&& row) {
  const Box common = intersect(src.box(), dst.box());
  if (common.empty()) return 0;
  const int64_t len = common.dim[3].size();
  const int64_t channels = common.dim[1].size();
  const int64_t planes = common.dim[0].size() * channels;
  // Rows are disjoint, so threads change nothing in the result; small boxes stay serial.
#pragma omp parallel for schedule(static) if (common.volume() > (1 << 18))
  for (int64_t plane = 0; plane < planes; ++plane) {
    const int64_t n = common.dim[0].lo + plane / channels, c = common.dim[1].lo + plane % channels;
    for (int64_t h = common.dim[2].lo; h < common.dim[2].hi; ++h) {
      row(src.offset(n, c, h, common.dim[3].lo), dst.offset(n, c, h, common.dim[3].lo), len);
    }
  }
  return common.volume();
}

}  // namespace

int64_t copy_intersection(const Tensor& src, Tensor* dst) {
  float* out = dst->data();
  const float* in = src.data();
  return for_each_row(src, *dst, [&](int64_t s, int64_t d, int64_t len) {
    for (int64_t i = 0; i < len; ++i) out[d + i] = in[s + i];
  });
}

int64_t add_intersection(const Tensor& src, Tensor* dst) {
  float* out = dst->data();
  const float* in = src.data();
  return for_each_row(src, *dst, [&](int64_t s, int64_t d, int64_t len) {
    for (int64_t i = 0; i < len; ++i) out[d + i] += in[s + i];
  });
}

Tensor crop(const Tensor& src, const Box& box) {
  require_covers(src, box, "the tensor to crop");
  if (src.box() == box) return src;
  Tensor out(box, Tensor::kUninitialized);
  copy_intersection(src, &out);
  return out;
}

}  // namespace layerplan
