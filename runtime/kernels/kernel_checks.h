#pragma once
// Argument checks and geometry shared by the kernel implementations (not public API).
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/kernels/kernels.h"

namespace layerplan::kernels_internal {

// Throws std::invalid_argument unless the layer has kind `kind`.
void check_kind(const LayerRef& l, LayerKind kind);
// Throws unless `out_box` is a non-empty box inside the layer's output.
void check_out_box(const LayerRef& l, const Box& out_box);
// The input of `slot` for computing `out_box`: `input` cropped to the required box;
// throws naming the layer and both boxes when `input` does not cover it.
Tensor required_input(const LayerRef& l, int slot, const Tensor& input, const Box& out_box);
// The same input without a copy where it can: `input` itself when its box is exactly the
// required one, else a cropped copy that this object owns.
class InputTile {
 public:
  InputTile(const LayerRef& l, int slot, const Tensor& input, const Box& out_box);
  InputTile(const InputTile&) = delete;
  InputTile& operator=(const InputTile&) = delete;
  const Tensor& operator*() const { return copy_ ? *copy_ : *input_; }

 private:
  const Tensor* input_;
  std::optional<Tensor> copy_;
};

// Throws unless `params` is the shard of out_box's channels of this layer.
void check_params(const LayerRef& l, const LayerParams& params, const Box& out_box);
// Throws unless `grad` has the box `expected` (named `what`).
void check_box(const Tensor& t, const Box& expected, const char* what, const LayerRef& l);

// Throws unless the (reduced) batch-norm sums are those of out_box's channels.
void check_batch_norm_stats(const LayerRef& l, const BatchNormStats& stats, const Box& out_box);
void check_batch_norm_stats(const LayerRef& l, const BatchNormGradStats& stats, const Box& out_box);

// Per channel mean and 1/sqrt(var + eps) of reduced batch-norm statistics, with the
// biased variance (as PyTorch normalizes).
struct Normalization {
  std::vector<double> mean, inv_std;
};
Normalization normalization(const BatchNormStats& s, double eps);

// Throws unless out_box keeps every element of a sample together (splits samples only):
// the loss's tiles, whose softmax runs over all classes.
void check_samples_only(const LayerRef& l, const Box& out_box);

// Throws unless there is one label in [0, classes) per sample of `box`.
void check_labels(const LayerRef& l, const std::vector<int64_t>& labels, const Box& box);

// Calls body(n, c, h, w) for every element of `b`, in NCHW order (global coordinates).
template <typename Body>
void for_each_element(const Box& b, Body&& body) {
  for (int64_t n = b.dim[0].lo; n < b.dim[0].hi; ++n)
    for (int64_t c = b.dim[1].lo; c < b.dim[1].hi; ++c)
      for (int64_t h = b.dim[2].lo; h < b.dim[2].hi; ++h)
        for (int64_t w = b.dim[3].lo; w < b.dim[3].hi; ++w) body(n, c, h, w);
}

// Zero padding a tile's window needs before (l) and after (r) its input box, along H
// (index 0) and W (1): nonzero only where the windows reach past the true border.
struct TilePadding {
  std::array<int64_t, 2> l{0, 0}, r{0, 0};
};
TilePadding tile_padding(const Window& w, const Box& out_box, const Box& in_box);

}  // namespace layerplan::kernels_internal
