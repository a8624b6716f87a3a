#include "runtime/kernels/backend_helpers.h"

#include <algorithm>
#include <cmath>

namespace layerplan::kernels_internal {

Normalization normalization(const BatchNormStats& s, double eps) {
  Normalization z;
  for (size_t i = 0; i < s.sum.size(); ++i) {
    const double mean = s.sum[i] / static_cast<double>(s.count);
    const double var = std::max(0.0, s.sum_sq[i] / static_cast<double>(s.count) - mean * mean);  // biased
    z.mean.push_back(mean);
    z.inv_std.push_back(1.0 / std::sqrt(var + eps));
  }
  return z;
}

BatchNormGradStats zero_grad_stats(const Box& out_box) {
  BatchNormGradStats g;
  g.channels = out_box.dim[1];
  g.sum_dy.assign(static_cast<size_t>(g.channels.size()), 0.0);
  g.sum_dy_xhat = g.sum_dy;
  return g;
}

TilePadding tile_padding(const Window& w, const Box& out_box, const Box& in_box) {
  TilePadding p;
  const std::array<int, 2> kernel{w.kernel_h, w.kernel_w}, stride{w.stride_h, w.stride_w}, pad{w.pad_h, w.pad_w};
  for (size_t a = 0; a < 2; ++a) {
    const Interval& out = out_box.dim[a + 2];
    const Interval& in = in_box.dim[a + 2];
    const int64_t first = out.lo * stride[a] - pad[a];                  // first input row read
    const int64_t end = (out.hi - 1) * stride[a] - pad[a] + kernel[a];  // one past the last
    p.l[a] = in.lo - first;
    p.r[a] = end - in.hi;
  }
  return p;
}

int64_t avg_pool_axis_count(int64_t o, int kernel, int stride, int pad, int64_t in, bool count_include_pad) {
  const int64_t start = o * stride - pad;
  const int64_t end = start + kernel;
  if (count_include_pad) return std::min<int64_t>(end, in + pad) - start;
  return std::min<int64_t>(end, in) - std::max<int64_t>(start, 0);
}

double avg_pool_divisor(const Window& w, const Shape& in, int64_t oh, int64_t ow) {
  return static_cast<double>(avg_pool_axis_count(oh, w.kernel_h, w.stride_h, w.pad_h, in.h(), w.count_include_pad) *
                             avg_pool_axis_count(ow, w.kernel_w, w.stride_w, w.pad_w, in.w(), w.count_include_pad));
}

bool avg_pool_divisor_varies(const Window& w, const Shape& in, const Shape& out) {
  if (!w.count_include_pad) return w.pad_h > 0 || w.pad_w > 0 || w.ceil_mode;
  // Padding counts: only a last window that overhangs the padded input divides by less.
  return avg_pool_axis_count(out.h() - 1, w.kernel_h, w.stride_h, w.pad_h, in.h(), true) != w.kernel_h ||
         avg_pool_axis_count(out.w() - 1, w.kernel_w, w.stride_w, w.pad_w, in.w(), true) != w.kernel_w;
}

void rescale_avg_pool(const Window& w, const Shape& in, Tensor& t) {
  const double kernel = static_cast<double>(w.kernel_h) * w.kernel_w;
  for_each_element(t.box(), [&](int64_t n, int64_t c, int64_t oh, int64_t ow) {
    float& v = t.at(n, c, oh, ow);
    v = static_cast<float>(v * kernel / avg_pool_divisor(w, in, oh, ow));
  });
}

}  // namespace layerplan::kernels_internal
