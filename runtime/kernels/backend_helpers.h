#pragma once
// Helpers the kernel backends share (not public API): element loops in global
// coordinates, batch-norm normalization, and the per-side padding of a tile's window.
#include <array>
#include <cstdint>
#include <vector>

#include "model/geometry.h"
#include "model/model_graph.h"
#include "runtime/kernels/kernel_types.h"
#include "runtime/kernels/tensor.h"

namespace layerplan::kernels_internal {

// Calls body(n, c, h, w) for every element of `b`, in NCHW order (global coordinates).
template <typename Body>
void for_each_element(const Box& b, Body&& body) {
  for (int64_t n = b.dim[0].lo; n < b.dim[0].hi; ++n)
    for (int64_t c = b.dim[1].lo; c < b.dim[1].hi; ++c)
      for (int64_t h = b.dim[2].lo; h < b.dim[2].hi; ++h)
        for (int64_t w = b.dim[3].lo; w < b.dim[3].hi; ++w) body(n, c, h, w);
}

// Per channel mean and 1/sqrt(var + eps) of reduced batch-norm statistics, with the
// biased variance (as PyTorch normalizes).
struct Normalization {
  std::vector<double> mean, inv_std;
};
Normalization normalization(const BatchNormStats& s, double eps);

// Batch-norm backward sums of a tile, zero for each of its channels, for a backend to add into.
BatchNormGradStats zero_grad_stats(const Box& out_box);

// Zero padding a tile's window needs before (l) and after (r) its input box, along H
// (index 0) and W (1): nonzero only where the windows reach past the true border.
struct TilePadding {
  std::array<int64_t, 2> l{0, 0}, r{0, 0};
};
TilePadding tile_padding(const Window& w, const Box& out_box, const Box& in_box);

// PyTorch's divisor of average-pooling output row (column) `o` along one axis of input
// extent `in`: the window clipped to the padded input [-pad, in + pad) when padding
// counts (a ceil_mode overhang past it never counts), else to the input [0, in). The
// divisor of element (oh, ow) is the product of the two axes' divisors.
int64_t avg_pool_axis_count(int64_t o, int kernel, int stride, int pad, int64_t in, bool count_include_pad);
// That divisor for output element (oh, ow) of an average pool reading `in`.
double avg_pool_divisor(const Window& w, const Shape& in, int64_t oh, int64_t ow);
// Whether some window of the pool divides by other than kernel_h * kernel_w (what
// libraries' "include padding" mode divides by everywhere).
bool avg_pool_divisor_varies(const Window& w, const Shape& in, const Shape& out);
// Multiplies every element (n, c, oh, ow) of `t` by kernel_h * kernel_w / divisor: turns
// an average that divides by the whole kernel into PyTorch's, and back for gradients.
void rescale_avg_pool(const Window& w, const Shape& in, Tensor& t);

}  // namespace layerplan::kernels_internal
