#pragma once
// Helpers the kernel backends share (not public API): element loops in global
// coordinates, batch-norm normalization, and the per-side padding of a tile's window.
#include <array>
#include <cstdint>
#include <vector>

#include "model/geometry.h"
#include "model/model_graph.h"
#include "runtime/kernels/kernel_types.h"

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

}  // namespace layerplan::kernels_internal
