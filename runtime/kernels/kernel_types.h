#pragma once
// The values kernels take and return besides tensors (runtime/kernels/kernels.h): the
// layer a kernel computes, weighted gradients, the partial sums of batch norm, the loss
// tile; and the dropout mask and running-statistics update every backend shares.
#include <cstdint>
#include <vector>

#include "model/geometry.h"
#include "model/model_graph.h"
#include "runtime/kernels/params.h"
#include "runtime/kernels/tensor.h"

namespace layerplan {

// The layer a kernel computes, with the graph that knows its inputs' shapes.
struct LayerRef {
  const ModelGraph& graph;
  const Layer& layer;

  LayerRef(const ModelGraph& g, int id) : graph(g), layer(g.layer(id)) {}
  const Shape& input_shape(int slot) const { return graph.input_shape(layer, slot); }
  Box required_input(int slot, const Box& out_box) const { return required_input_box(graph, layer, slot, out_box); }
};

// Input gradient (over the box the forward read) and the tile's weight-gradient shard.
struct WeightedGrads {
  Tensor input;
  LayerParams params;
};

// Per-channel partial sums of a batch-norm input over one tile. Summing them over the
// tiles that split samples/height/width (add) gives the statistics of the whole batch.
struct BatchNormStats {
  Interval channels;
  std::vector<double> sum, sum_sq;
  int64_t count = 0;  // elements per channel

  void add(const BatchNormStats& other);  // throws unless the channel ranges match
};

// Per-channel partial sums of the batch-norm backward over one tile: sum of dy and of
// dy * x_hat. Reduced like BatchNormStats; the tile's own (unreduced) sums are its bias
// and weight gradients (batch_norm_weight_grads).
struct BatchNormGradStats {
  Interval channels;
  std::vector<double> sum_dy, sum_dy_xhat;

  void add(const BatchNormGradStats& other);
};

// The loss layer's output for a tile of samples: softmax probabilities (saved for the
// backward) and the tile's share of the mean cross-entropy, sum over the tile's samples
// of -log p[label] divided by the *global* batch size, so that the shares of all tiles
// sum to the single-device mean loss (PyTorch's CrossEntropyLoss, reduction='mean').
struct LossTile {
  Tensor probabilities;
  double loss = 0;
};

// Every zoo dropout is torchvision's nn.Dropout(p=0.5); model files may set another
// (Layer::dropout_ratio).
inline constexpr double kDropoutProbability = kDefaultDropoutRatio;
// Whether dropout with drop probability `probability` keeps the element at NCHW linear
// index `index` of the whole tensor: a hash of (seed, index), so every plan drops the
// same elements.
bool dropout_keeps(uint64_t seed, int64_t index, double probability = kDropoutProbability);

// Running statistics update as PyTorch's training mode does it: momentum-weighted, with
// the unbiased variance of the reduced (global) statistics.
void update_running_stats(const BatchNormStats& global, double momentum, LayerParams* params);
// The tile's batch-norm weight (sum dy*x_hat) and bias (sum dy) gradient shard.
LayerParams batch_norm_weight_grads(const BatchNormGradStats& local);

}  // namespace layerplan
