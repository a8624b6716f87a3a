#include "model/layer_math.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <stdexcept>

#include "common/index.h"
#include "common/limits.h"

namespace layerplan {

namespace {

// Input channels each output channel of a convolution reads: those of its group.
int64_t conv_group_inputs(const ModelGraph& graph, const Layer& layer) {
  return graph.input_shape(layer, 0).c() / std::max(layer.groups, 1);
}

// Parameters and multiply-adds of a conv2d or fully-connected layer, nullopt when one of
// them does not fit in 64 bits.
struct WeightedCounts {
  std::optional<int64_t> parameters, macs;
};

WeightedCounts weighted_counts(const ModelGraph& graph, const Layer& layer) {
  const Shape& in = graph.input_shape(layer, 0);
  const int64_t cout = layer.output.c();
  // Each output element of a convolution reads cin/groups x kh x kw inputs; a
  // fully-connected one reads the whole input sample.
  const std::optional<int64_t> fan_in =
      layer.kind == LayerKind::kConv2d
          ? checked_product(
                {conv_group_inputs(graph, layer), int64_t{layer.window.kernel_h}, int64_t{layer.window.kernel_w}})
          : checked_product({in.c(), in.h(), in.w()});
  if (!fan_in) return {};
  WeightedCounts counts;
  if (const auto weights = checked_mul(cout, *fan_in))
    counts.parameters = checked_add(*weights, layer.has_bias ? cout : 0);
  if (const auto elements = checked_product({layer.output[0], layer.output[1], layer.output[2], layer.output[3]})) {
    counts.macs = checked_mul(*elements, *fan_in);
  }
  return counts;
}

// "more elements than 2^40, the limit" (every limit is a power of two).
std::string above(const char* what, int64_t limit) {
  return std::string("more ") + what + " than 2^" + std::to_string(std::countr_zero(static_cast<uint64_t>(limit))) +
         ", the limit";
}

// Arithmetic per element of an activation (an exponential counts as two).
double activation_flops(ActivationKind activation) {
  switch (activation) {
    case ActivationKind::kClip:
      return 2.0;  // max, min
    case ActivationKind::kHardSigmoid:
      return 4.0;  // multiply-add, max, min
    case ActivationKind::kHardSwish:
      return 5.0;  // add, max, min, divide, multiply
    case ActivationKind::kSigmoid:
      return 4.0;  // exp, add, divide
    case ActivationKind::kSilu:
      return 5.0;  // sigmoid, multiply
    case ActivationKind::kGelu:
      return 7.0;  // erf or tanh (as an exponential, two), four multiply-adds, a multiply
  }
  return 1.0;
}

}  // namespace

std::string layer_size_problem(const ModelGraph& graph, const Layer& layer) {
  const Shape& s = layer.output;
  for (int d = 0; d < kNumDims; ++d) {
    if (s[d] < 1) return "output " + s.str() + " has an empty dimension";
  }
  if (!product_within({s[0], s[1], s[2], s[3]}, kMaxTensorElements)) {
    return "output " + s.str() + " has " + above("elements", kMaxTensorElements);
  }
  if (layer.kind != LayerKind::kConv2d && layer.kind != LayerKind::kFullyConnected) return "";
  const WeightedCounts counts = weighted_counts(graph, layer);
  if (!counts.parameters || *counts.parameters > kMaxLayerParameters) return above("parameters", kMaxLayerParameters);
  if (!counts.macs || *counts.macs > kMaxLayerMacs) return above("multiply-adds per step", kMaxLayerMacs);
  return "";
}

int64_t parameter_count(const ModelGraph& graph, const Layer& layer) {
  switch (layer.kind) {
    case LayerKind::kConv2d: {
      const int64_t cin = conv_group_inputs(graph, layer);
      const int64_t cout = layer.output.c();
      return cout * cin * layer.window.kernel_h * layer.window.kernel_w + (layer.has_bias ? cout : 0);
    }
    case LayerKind::kFullyConnected: {
      const Shape& in = graph.input_shape(layer, 0);
      const int64_t features = in.c() * in.h() * in.w();
      return layer.output.c() * features + (layer.has_bias ? layer.output.c() : 0);
    }
    case LayerKind::kBatchNorm:
      return 2 * layer.output.c();
    default:
      return 0;
  }
}

int64_t parameter_count(const ModelGraph& graph) {
  int64_t total = 0;
  for (const Layer& l : graph.layers()) total += parameter_count(graph, l);
  return total;
}

int64_t forward_macs(const ModelGraph& graph, const Layer& layer) {
  switch (layer.kind) {
    case LayerKind::kConv2d:
      return layer.output.elements() * conv_group_inputs(graph, layer) * layer.window.kernel_h * layer.window.kernel_w;
    case LayerKind::kFullyConnected: {
      const Shape& in = graph.input_shape(layer, 0);
      return layer.output.elements() * in.c() * in.h() * in.w();
    }
    default:
      return 0;
  }
}

int64_t forward_macs(const ModelGraph& graph) {
  int64_t total = 0;
  for (const Layer& l : graph.layers()) {
    const std::optional<int64_t> sum = checked_add(total, forward_macs(graph, l));
    if (!sum) throw std::overflow_error("model " + graph.name() + " has more than 2^63 multiply-adds per step");
    total = *sum;
  }
  return total;
}

double forward_flops(const ModelGraph& graph, const Layer& layer) {
  const auto out = static_cast<double>(layer.output.elements());
  switch (layer.kind) {
    case LayerKind::kConv2d:
    case LayerKind::kFullyConnected:
      return 2.0 * static_cast<double>(forward_macs(graph, layer)) + (layer.has_bias ? out : 0);
    case LayerKind::kMaxPool:
    case LayerKind::kAvgPool:
    case LayerKind::kGlobalAvgPool:
      return out * layer.window.kernel_h * layer.window.kernel_w;
    case LayerKind::kRelu:
      return out;
    case LayerKind::kDropout:
      return 2.0 * out;  // draw a mask, multiply
    case LayerKind::kBatchNorm:
      return 6.0 * out;  // mean, variance, normalize, scale and shift
    case LayerKind::kAdd:
      return out * static_cast<double>(layer.inputs.size() - 1);
    case LayerKind::kMul:
      return out;
    case LayerKind::kActivation:
      return out * activation_flops(layer.activation);
    case LayerKind::kSoftmaxCrossEntropy:
      return 5.0 * out;  // max, exp, sum, divide, log-likelihood
    case LayerKind::kInput:
    case LayerKind::kConcat:
    case LayerKind::kFlatten:
    case LayerKind::kChannelShuffle:  // copies: priced by the bytes they move
    case LayerKind::kChannelSlice:
      return 0.0;
  }
  return 0.0;
}

double backward_flops(const ModelGraph& graph, const Layer& layer) {
  switch (layer.kind) {
    case LayerKind::kConv2d:
    case LayerKind::kFullyConnected:
      return 2.0 * forward_flops(graph, layer);  // input gradient + weight gradient
    case LayerKind::kBatchNorm:
      return 1.5 * forward_flops(graph, layer);
    default:
      return forward_flops(graph, layer);
  }
}

bool channel_split_shards_weights(LayerKind kind) {
  return kind == LayerKind::kConv2d || kind == LayerKind::kFullyConnected || kind == LayerKind::kBatchNorm;
}

int64_t source_channel(const Layer& layer, int64_t c) {
  if (layer.kind == LayerKind::kChannelSlice) return layer.first_channel + c;
  const int64_t groups = layer.groups;
  return (c % groups) * (layer.output.c() / groups) + c / groups;
}

std::array<bool, kNumDims> splittable_dims(LayerKind kind) {
  switch (kind) {
    case LayerKind::kConv2d:
    case LayerKind::kMaxPool:
    case LayerKind::kAvgPool:
    case LayerKind::kRelu:
    case LayerKind::kBatchNorm:
    case LayerKind::kDropout:
    case LayerKind::kAdd:
    case LayerKind::kActivation:
    case LayerKind::kMul:
    case LayerKind::kChannelSlice:
      return {true, true, true, true};
    case LayerKind::kFullyConnected:
    case LayerKind::kGlobalAvgPool:
      return {true, true, false, false};
    case LayerKind::kInput:
    case LayerKind::kConcat:
    case LayerKind::kChannelShuffle:  // a channel range reads channels of every group (docs/planner.md)
      return {true, false, true, true};
    case LayerKind::kFlatten:
    case LayerKind::kSoftmaxCrossEntropy:
      return {true, false, false, false};
  }
  return {true, false, false, false};
}

}  // namespace layerplan
