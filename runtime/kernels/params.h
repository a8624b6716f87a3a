#pragma once
// The trainable parameters (and batch-norm running statistics) of one layer, in
// PyTorch's layout so that a torchvision state_dict loads without reordering:
//   conv2d          weight [out][in/groups][kh][kw], bias [out]
//   fully_connected weight [out][in], bias [out] (in = c*h*w of the input, NCHW order)
//   batch_norm      weight [c], bias [c], running_mean [c], running_var [c]
// A shard holds the rows [channels.lo, channels.hi) of the first dimension of every
// tensor: what a tile that splits the output channels computes with. The same type
// holds weight gradients (running statistics then empty).
#include <cstdint>
#include <vector>

#include "model/geometry.h"
#include "model/model_graph.h"

namespace layerplan {

struct LayerParams {
  Interval channels;  // output channels (features) of the layer this shard holds
  int64_t row = 0;    // weight elements per output channel (in/groups*kh*kw, in, or 1)
  std::vector<float> weight;
  std::vector<float> bias;          // empty when the layer has no bias
  std::vector<float> running_mean;  // batch norm only
  std::vector<float> running_var;   // batch norm only
  // Batch norm's epsilon: zero_params sets the layer's (Layer::epsilon: the model file's,
  // PyTorch's 1e-5 by default).
  double eps = kDefaultBatchNormEpsilon;
};

// Whether the layer kind has parameters (conv2d, fully_connected, batch_norm).
bool has_params(LayerKind kind);

// Parameters of channels [channels.lo, channels.hi) of `layer`, zero-filled (batch-norm
// weight and running_var are 1, as PyTorch initializes them). Throws
// std::invalid_argument for a kind without parameters or a range outside the layer.
LayerParams zero_params(const ModelGraph& graph, const Layer& layer, Interval channels);
LayerParams zero_params(const ModelGraph& graph, const Layer& layer);  // all channels

// Weight elements per output channel (in/groups*kh*kw, in, or 1) and whether there is a bias, of
// a layer with parameters, without allocating them (zero_params does the same checks).
struct ParamLayout {
  int64_t row = 0;
  bool has_bias = false;
};
ParamLayout param_layout(const ModelGraph& graph, const Layer& layer);

// A zero gradient of the same channels and shape as `params` (weight and bias only).
LayerParams gradient_like(const LayerParams& params);

// The shard of `full` (which must cover `channels`) for output channels `channels`.
LayerParams shard(const LayerParams& full, Interval channels);
// Adds a shard's values into the matching rows of `full` (weight and bias only): how
// weight-gradient shards of channel-split tiles assemble, and how replicas' gradients sum.
void add_shard(const LayerParams& part, LayerParams* full);

}  // namespace layerplan
