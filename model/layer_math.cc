#include "model/layer_math.h"

namespace layerplan {

int64_t parameter_count(const ModelGraph& graph, const Layer& layer) {
  switch (layer.kind) {
    case LayerKind::kConv2d: {
      const int64_t cin = graph.input_shape(layer, 0).c();
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
      return layer.output.elements() * graph.input_shape(layer, 0).c() * layer.window.kernel_h * layer.window.kernel_w;
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
  for (const Layer& l : graph.layers()) total += forward_macs(graph, l);
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
    case LayerKind::kSoftmaxCrossEntropy:
      return 5.0 * out;  // max, exp, sum, divide, log-likelihood
    case LayerKind::kInput:
    case LayerKind::kConcat:
    case LayerKind::kFlatten:
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

std::array<bool, kNumDims> splittable_dims(LayerKind kind) {
  switch (kind) {
    case LayerKind::kConv2d:
    case LayerKind::kMaxPool:
    case LayerKind::kAvgPool:
    case LayerKind::kRelu:
    case LayerKind::kBatchNorm:
    case LayerKind::kDropout:
    case LayerKind::kAdd:
      return {true, true, true, true};
    case LayerKind::kFullyConnected:
    case LayerKind::kGlobalAvgPool:
      return {true, true, false, false};
    case LayerKind::kInput:
    case LayerKind::kConcat:
      return {true, false, true, true};
    case LayerKind::kFlatten:
    case LayerKind::kSoftmaxCrossEntropy:
      return {true, false, false, false};
  }
  return {true, false, false, false};
}

}  // namespace layerplan
