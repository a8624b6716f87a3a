#pragma once
// The argument checks of the public Kernels functions (kernels.cc), and the input tiles
// they hand the backends: not public API.
#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/kernels/kernels.h"

namespace layerplan::kernels_internal {

// Throws std::invalid_argument unless the layer has kind `kind` and `out_box` is a
// non-empty box inside its output.
void check_tile(const LayerRef& l, LayerKind kind, const Box& out_box);

// `tensor` restricted to `box` without a copy where it can: the tensor itself when its
// box is exactly `box`, else a cropped copy that this object owns (crop throws unless
// the tensor covers the box).
class TensorTile {
 public:
  TensorTile(const Tensor& tensor, const Box& box);
  explicit TensorTile(Tensor owned) : tensor_(nullptr), copy_(std::move(owned)) {}
  TensorTile(TensorTile&&) = default;  // a copy moves along; tensor_ is not ours
  TensorTile(const TensorTile&) = delete;
  TensorTile& operator=(const TensorTile&) = delete;
  TensorTile& operator=(TensorTile&&) = delete;
  ~TensorTile() = default;
  const Tensor& operator*() const { return copy_ ? *copy_ : *tensor_; }

 private:
  const Tensor* tensor_;
  std::optional<Tensor> copy_;
};

// The input of `slot` for computing `out_box`, cropped to exactly the box the tile
// reads; throws naming the layer and both boxes when `input` does not cover it.
TensorTile input_tile(const LayerRef& l, int slot, const Tensor& input, const Box& out_box);

// The inputs of a concat or add tile, each cropped as input_tile does; a slot whose
// required box is empty (a concat input the tile's channels miss) is not read and gets
// an empty tensor of that box. Throws unless there is one input per slot.
class InputTiles {
 public:
  InputTiles(const LayerRef& l, const std::vector<const Tensor*>& inputs, const Box& out_box);
  const std::vector<const Tensor*>& operator*() const { return pointers_; }

 private:
  std::vector<TensorTile> tiles_;
  std::vector<const Tensor*> pointers_;  // into tiles_
};

// Throws unless `params` is the shard of out_box's channels of this layer.
void check_params(const LayerRef& l, const LayerParams& params, const Box& out_box);
// Throws unless `t` has the box `expected` (named `what`).
void check_box(const Tensor& t, const Box& expected, const char* what, const LayerRef& l);

// Throws unless the (reduced) batch-norm sums are those of out_box's channels.
void check_batch_norm_stats(const LayerRef& l, const BatchNormStats& stats, const Box& out_box);
void check_batch_norm_stats(const LayerRef& l, const BatchNormGradStats& stats, const Box& out_box);

// Throws unless out_box keeps every element of a sample together (splits samples only):
// the loss's tiles, whose softmax runs over all classes.
void check_samples_only(const LayerRef& l, const Box& out_box);

// Throws unless there is one label in [0, classes) per sample of `box`.
void check_labels(const LayerRef& l, const std::vector<int64_t>& labels, const Box& box);

}  // namespace layerplan::kernels_internal
