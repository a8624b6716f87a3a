#include "runtime/kernels/params.h"

#include <stdexcept>
#include <string>

namespace layerplan {

bool has_params(LayerKind kind) {
  return kind == LayerKind::kConv2d || kind == LayerKind::kFullyConnected || kind == LayerKind::kBatchNorm;
}

ParamLayout param_layout(const ModelGraph& graph, const Layer& layer) {
  if (!has_params(layer.kind)) {
    throw std::invalid_argument("layer " + layer.name + " (" + std::string(kind_name(layer.kind)) +
                                ") has no parameters");
  }
  const Shape& in = graph.input_shape(layer, 0);
  switch (layer.kind) {
    case LayerKind::kConv2d:
      return {in.c() / layer.groups * layer.window.kernel_h * layer.window.kernel_w, layer.has_bias};
    case LayerKind::kFullyConnected:
      return {in.c() * in.h() * in.w(), layer.has_bias};
    default:
      return {1, true};  // batch norm: weight and bias per channel
  }
}

LayerParams zero_params(const ModelGraph& graph, const Layer& layer, Interval channels) {
  const ParamLayout layout = param_layout(graph, layer);
  if (channels.lo < 0 || channels.hi > layer.output.c() || channels.hi < channels.lo) {
    throw std::invalid_argument("layer " + layer.name + ": channel range [" + std::to_string(channels.lo) + "," +
                                std::to_string(channels.hi) + ") is outside [0," + std::to_string(layer.output.c()) +
                                ")");
  }
  LayerParams p;
  p.channels = channels;
  p.row = layout.row;
  const auto rows = static_cast<size_t>(channels.size());
  if (layer.kind == LayerKind::kBatchNorm) {
    p.eps = layer.epsilon;
    p.running_mean.assign(rows, 0.0f);
    p.running_var.assign(rows, 1.0f);
  }
  p.weight.assign(rows * static_cast<size_t>(p.row), layer.kind == LayerKind::kBatchNorm ? 1.0f : 0.0f);
  if (layout.has_bias) p.bias.assign(rows, 0.0f);
  return p;
}

LayerParams gradient_like(const LayerParams& params) {
  LayerParams g;
  g.channels = params.channels;
  g.row = params.row;
  g.eps = params.eps;
  g.weight.reserve(params.weight.size() + params.bias.size());  // room to append the bias (executor)
  g.weight.assign(params.weight.size(), 0.0f);
  g.bias.assign(params.bias.size(), 0.0f);
  return g;
}

LayerParams zero_params(const ModelGraph& graph, const Layer& layer) {
  return zero_params(graph, layer, {0, layer.output.c()});
}

namespace {

std::vector<float> rows_of(const std::vector<float>& v, int64_t first, int64_t count, int64_t row) {
  if (v.empty()) return {};
  return {v.begin() + first * row, v.begin() + (first + count) * row};
}

void check_inside(const LayerParams& full, Interval channels, const char* what) {
  if (channels.lo < full.channels.lo || channels.hi > full.channels.hi || channels.hi < channels.lo) {
    throw std::invalid_argument(std::string(what) + ": channels [" + std::to_string(channels.lo) + "," +
                                std::to_string(channels.hi) + ") are not inside the parameters' [" +
                                std::to_string(full.channels.lo) + "," + std::to_string(full.channels.hi) + ")");
  }
}

}  // namespace

LayerParams shard(const LayerParams& full, Interval channels) {
  check_inside(full, channels, "shard");
  const int64_t first = channels.lo - full.channels.lo;
  LayerParams p;
  p.channels = channels;
  p.row = full.row;
  p.eps = full.eps;
  p.weight = rows_of(full.weight, first, channels.size(), full.row);
  p.bias = rows_of(full.bias, first, channels.size(), 1);
  p.running_mean = rows_of(full.running_mean, first, channels.size(), 1);
  p.running_var = rows_of(full.running_var, first, channels.size(), 1);
  return p;
}

void add_shard(const LayerParams& part, LayerParams* full) {
  check_inside(*full, part.channels, "add_shard");
  if (part.row != full->row || part.bias.empty() != full->bias.empty() ||
      part.weight.size() != static_cast<size_t>(part.channels.size() * part.row)) {
    throw std::invalid_argument("add_shard: shard of " + std::to_string(part.row) +
                                " weights per channel does not match parameters of " + std::to_string(full->row));
  }
  const int64_t first = full->channels.lo;
  for (int64_t c = part.channels.lo; c < part.channels.hi; ++c) {
    for (int64_t i = 0; i < part.row; ++i) {
      full->weight[static_cast<size_t>((c - first) * part.row + i)] +=
          part.weight[static_cast<size_t>((c - part.channels.lo) * part.row + i)];
    }
    if (!part.bias.empty()) {
      full->bias[static_cast<size_t>(c - first)] += part.bias[static_cast<size_t>(c - part.channels.lo)];
    }
  }
}

}  // namespace layerplan
