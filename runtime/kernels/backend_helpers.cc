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

}  // namespace layerplan::kernels_internal
