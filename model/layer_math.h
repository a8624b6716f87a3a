#pragma once
// Parameter, FLOP and byte counts of a whole layer (all samples of the batch). A
// multiply-add counts as two FLOPs; MACs count it once, the unit of published
// "GFLOPs" tables such as torchvision's.
#include <array>
#include <cstdint>
#include <string>

#include "model/model_graph.h"

namespace layerplan {

// Why `layer` (whose inputs are in `graph`) is beyond the limits of common/limits.h: its
// output elements, parameters or multiply-adds, each computed with overflow checks; ""
// when it is within them. ModelGraph refuses such a layer as it is added, so the counts
// below never overflow for a graph that exists.
std::string layer_size_problem(const ModelGraph& graph, const Layer& layer);

// Trainable parameters (batch-norm counts weight and bias, not running statistics).
int64_t parameter_count(const ModelGraph& graph, const Layer& layer);
int64_t parameter_count(const ModelGraph& graph);

// Multiply-accumulates of the forward pass of conv2d and fully-connected layers; 0 for
// every other kind. The model's total throws std::overflow_error above 2^63 (a model of
// kMaxLayers layers of kMaxLayerMacs each would be).
int64_t forward_macs(const ModelGraph& graph, const Layer& layer);
int64_t forward_macs(const ModelGraph& graph);

// Arithmetic of the forward and the backward pass (input and weight gradients).
double forward_flops(const ModelGraph& graph, const Layer& layer);
double backward_flops(const ModelGraph& graph, const Layer& layer);

// Whether the layer's output channel dimension indexes its parameters, so that a
// channel split divides its weights into shards (conv2d, fully-connected, batch-norm).
bool channel_split_shards_weights(LayerKind kind);

// The input channel that output channel `c` of a channel shuffle or channel slice copies:
// (c % groups) * (C / groups) + c / groups, or first_channel + c.
int64_t source_channel(const Layer& layer, int64_t c);

// Dimensions (NCHW) the kind can be split along: conv and pooling n, c, h, w;
// fully-connected and global pooling n, c; softmax and flatten n; concat and channel
// shuffle all but their channel axis; input n, h, w; element-wise layers (ReLU,
// batch-norm, dropout, add, activation, mul) and channel slices any.
std::array<bool, kNumDims> splittable_dims(LayerKind kind);

}  // namespace layerplan
