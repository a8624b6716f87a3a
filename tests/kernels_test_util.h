#pragma once
// Helpers of the kernels tests: random tensors and parameters, an error measure, and a
// small driver that runs one layer on every tile of a configuration the way the executor
// will (inputs cut to each tile's required box, batch-norm sums reduced over tiles, input
// gradients summed at their owner, weight-gradient shards added up).
#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "model/geometry.h"
#include "runtime/kernels/kernels.h"

namespace layerplan::testing {

// max |got - want| over max |want|: the error relative to the tensor's scale.
inline double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return INFINITY;
  double diff = 0, scale = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::abs(static_cast<double>(want[i])));
  }
  return scale == 0 ? diff : diff / scale;
}

inline std::vector<float> random_values(size_t count, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = normal(rng);
  return v;
}

inline Tensor random_tensor(const Shape& shape, std::mt19937& rng) {
  const Box box = Box::whole(shape);
  return Tensor(box, random_values(static_cast<size_t>(box.volume()), rng));
}

inline LayerParams random_params(const ModelGraph& graph, const Layer& layer, std::mt19937& rng) {
  LayerParams p = zero_params(graph, layer);
  p.weight = random_values(p.weight.size(), rng);
  p.bias = random_values(p.bias.size(), rng);
  return p;
}

// Whole tensors of one layer: what the tiles read.
struct LayerData {
  std::vector<Tensor> inputs;   // per slot, each over its whole shape
  LayerParams params;           // all channels (has_params kinds only)
  Tensor grad_output;           // over the whole output
  std::vector<int64_t> labels;  // loss only: one per sample
  uint64_t seed = 11;           // dropout only
};

inline LayerData random_layer_data(const ModelGraph& graph, int id, std::mt19937& rng) {
  const Layer& layer = graph.layer(id);
  LayerData d;
  for (size_t slot = 0; slot < layer.inputs.size(); ++slot) {
    d.inputs.push_back(random_tensor(graph.input_shape(layer, static_cast<int>(slot)), rng));
  }
  if (has_params(layer.kind)) d.params = random_params(graph, layer, rng);
  d.grad_output = random_tensor(layer.output, rng);
  for (int64_t n = 0; n < layer.output.n(); ++n) d.labels.push_back((n * 7 + 3) % layer.output.c());
  return d;
}

// The layer's results assembled from all tiles.
struct LayerResult {
  Tensor output;
  double loss = 0;
  std::vector<Tensor> grad_inputs;  // per slot, summed over tiles
  LayerParams grad_params;          // summed over tiles (has_params kinds only)
};

// Runs forward and backward of layer `id` on every tile of `degrees` with `kernels`.
// Odd tiles get whole input tensors (the kernel crops), even tiles exactly their boxes.
inline LayerResult run_tiled(Kernels& kernels, const ModelGraph& graph, int id, const LayerData& d,
                             const Degrees& degrees) {
  const LayerRef l(graph, id);
  const Layer& layer = l.layer;
  const int count = degrees.product();
  std::vector<Box> boxes;
  for (int t = 0; t < count; ++t) boxes.push_back(tile_box(layer.output, degrees, t));
  auto input_of = [&](int t, int slot) {
    if (t % 2 == 1) return d.inputs[static_cast<size_t>(slot)];
    return crop(d.inputs[static_cast<size_t>(slot)], l.required_input(slot, boxes[static_cast<size_t>(t)]));
  };
  auto params_of = [&](const Box& b) { return shard(d.params, b.dim[1]); };
  auto labels_of = [&](const Box& b) {
    return std::vector<int64_t>(d.labels.begin() + b.dim[0].lo, d.labels.begin() + b.dim[0].hi);
  };

  LayerResult r;
  r.output = Tensor(Box::whole(layer.output));
  for (size_t slot = 0; slot < layer.inputs.size(); ++slot) {
    r.grad_inputs.emplace_back(Box::whole(graph.input_shape(layer, static_cast<int>(slot))));
  }
  if (has_params(layer.kind)) {
    r.grad_params = zero_params(graph, layer);
    std::fill(r.grad_params.weight.begin(), r.grad_params.weight.end(), 0.0f);
    r.grad_params.running_mean.clear();
    r.grad_params.running_var.clear();
  }
  std::vector<Tensor> outputs(static_cast<size_t>(count));

  // Batch norm: the statistics of all tiles of the same channels, summed (the all-reduce).
  std::map<int64_t, BatchNormStats> stats;
  std::map<int64_t, BatchNormGradStats> grad_stats;
  if (layer.kind == LayerKind::kBatchNorm) {
    for (int t = 0; t < count; ++t) {
      const Box& b = boxes[static_cast<size_t>(t)];
      const BatchNormStats s = kernels.batch_norm_statistics(l, input_of(t, 0), b);
      auto [it, fresh] = stats.emplace(b.dim[1].lo, s);
      if (!fresh) it->second.add(s);
    }
  }
  for (int t = 0; t < count; ++t) {
    const Box& b = boxes[static_cast<size_t>(t)];
    Tensor& y = outputs[static_cast<size_t>(t)];
    switch (layer.kind) {
      case LayerKind::kConv2d:
        y = kernels.conv2d_forward(l, params_of(b), input_of(t, 0), b);
        break;
      case LayerKind::kMaxPool:
        y = kernels.max_pool_forward(l, input_of(t, 0), b);
        break;
      case LayerKind::kAvgPool:
        y = kernels.avg_pool_forward(l, input_of(t, 0), b);
        break;
      case LayerKind::kGlobalAvgPool:
        y = kernels.global_avg_pool_forward(l, input_of(t, 0), b);
        break;
      case LayerKind::kFullyConnected:
        y = kernels.fully_connected_forward(l, params_of(b), input_of(t, 0), b);
        break;
      case LayerKind::kRelu:
        y = kernels.relu_forward(l, input_of(t, 0), b);
        break;
      case LayerKind::kBatchNorm:
        y = kernels.batch_norm_forward(l, params_of(b), input_of(t, 0), stats.at(b.dim[1].lo), b);
        break;
      case LayerKind::kDropout:
        y = kernels.dropout_forward(l, input_of(t, 0), b, d.seed);
        break;
      case LayerKind::kFlatten:
        y = kernels.flatten_forward(l, input_of(t, 0), b);
        break;
      case LayerKind::kConcat:
      case LayerKind::kAdd: {
        std::vector<Tensor> ins;
        for (size_t s = 0; s < layer.inputs.size(); ++s) ins.push_back(input_of(t, static_cast<int>(s)));
        std::vector<const Tensor*> ptrs;
        for (const Tensor& in : ins) ptrs.push_back(&in);
        y = layer.kind == LayerKind::kConcat ? kernels.concat_forward(l, ptrs, b) : kernels.add_forward(l, ptrs, b);
        break;
      }
      case LayerKind::kSoftmaxCrossEntropy: {
        LossTile lt = kernels.softmax_cross_entropy_forward(l, input_of(t, 0), labels_of(b), b);
        y = lt.probabilities;
        r.loss += lt.loss;
        break;
      }
      case LayerKind::kActivation:
        y = kernels.activation_forward(l, input_of(t, 0), b);
        break;
      case LayerKind::kMul: {
        const Tensor x = input_of(t, 0), scale = input_of(t, 1);
        y = kernels.mul_forward(l, {&x, &scale}, b);
        break;
      }
      case LayerKind::kChannelShuffle:
        y = kernels.channel_shuffle_forward(l, input_of(t, 0), b);
        break;
      case LayerKind::kChannelSlice:
        y = kernels.channel_slice_forward(l, input_of(t, 0), b);
        break;
      case LayerKind::kInput:
        throw std::logic_error("input layers have no kernel");
    }
    if (y.box() != b) throw std::logic_error("kernel returned " + y.box().str() + " for tile " + b.str());
    copy_intersection(y, &r.output);
  }

  if (layer.kind == LayerKind::kBatchNorm) {
    for (int t = 0; t < count; ++t) {
      const Box& b = boxes[static_cast<size_t>(t)];
      const BatchNormGradStats g = kernels.batch_norm_backward_statistics(
          l, params_of(b), input_of(t, 0), crop(d.grad_output, b), stats.at(b.dim[1].lo));
      add_shard(batch_norm_weight_grads(g), &r.grad_params);  // the tile's own sums are its weight gradients
      auto [it, fresh] = grad_stats.emplace(b.dim[1].lo, g);
      if (!fresh) it->second.add(g);
    }
  }
  for (int t = 0; t < count; ++t) {
    const Box& b = boxes[static_cast<size_t>(t)];
    const Tensor dy = crop(d.grad_output, b);
    std::vector<Tensor> dx;
    switch (layer.kind) {
      case LayerKind::kConv2d: {
        WeightedGrads g = kernels.conv2d_backward(l, params_of(b), input_of(t, 0), dy);
        add_shard(g.params, &r.grad_params);
        dx.push_back(std::move(g.input));
        break;
      }
      case LayerKind::kFullyConnected: {
        WeightedGrads g = kernels.fully_connected_backward(l, params_of(b), input_of(t, 0), dy);
        add_shard(g.params, &r.grad_params);
        dx.push_back(std::move(g.input));
        break;
      }
      case LayerKind::kMaxPool:
        dx.push_back(kernels.max_pool_backward(l, input_of(t, 0), dy));
        break;
      case LayerKind::kAvgPool:
        dx.push_back(kernels.avg_pool_backward(l, dy));
        break;
      case LayerKind::kGlobalAvgPool:
        dx.push_back(kernels.global_avg_pool_backward(l, dy));
        break;
      case LayerKind::kRelu:
        dx.push_back(kernels.relu_backward(l, outputs[static_cast<size_t>(t)], dy));
        break;
      case LayerKind::kBatchNorm:
        dx.push_back(kernels.batch_norm_backward(l, params_of(b), input_of(t, 0), dy, stats.at(b.dim[1].lo),
                                                 grad_stats.at(b.dim[1].lo)));
        break;
      case LayerKind::kDropout:
        dx.push_back(kernels.dropout_backward(l, dy, d.seed));
        break;
      case LayerKind::kFlatten:
        dx.push_back(kernels.flatten_backward(l, dy));
        break;
      case LayerKind::kConcat:
        dx = kernels.concat_backward(l, dy);
        break;
      case LayerKind::kAdd:
        dx = kernels.add_backward(l, dy);
        break;
      case LayerKind::kSoftmaxCrossEntropy:
        dx.push_back(kernels.softmax_cross_entropy_backward(l, outputs[static_cast<size_t>(t)], labels_of(b)));
        break;
      case LayerKind::kActivation:
        dx.push_back(kernels.activation_backward(l, input_of(t, 0), dy));
        break;
      case LayerKind::kMul: {
        const Tensor x = input_of(t, 0), scale = input_of(t, 1);
        dx = kernels.mul_backward(l, {&x, &scale}, dy);
        break;
      }
      case LayerKind::kChannelShuffle:
        dx.push_back(kernels.channel_shuffle_backward(l, dy));
        break;
      case LayerKind::kChannelSlice:
        dx.push_back(kernels.channel_slice_backward(l, dy));
        break;
      case LayerKind::kInput:
        break;
    }
    for (size_t slot = 0; slot < dx.size(); ++slot) {
      const Box want = l.required_input(static_cast<int>(slot), b);
      if (dx[slot].box() != want) {
        throw std::logic_error("input gradient of " + dx[slot].box().str() + ", expected " + want.str());
      }
      add_intersection(dx[slot], &r.grad_inputs[slot]);
    }
  }
  return r;
}

}  // namespace layerplan::testing
