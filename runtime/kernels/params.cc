#include "runtime/kernels/params.h"

#include <stdexcept>
#include <string>

namespace layerplan {

bool has_params(LayerKind kind) {
  return kind == LayerKind::kConv2d || kind == LayerKind::kFullyConnected || kind == LayerKind::kBatchNorm;
}

LayerParams zero_params(const ModelGraph& graph, const Layer& layer, Interval channels) {
  if (!has_params(layer.kind)) {
    throw std::invalid_argument("layer " + layer.name + " (" + std::string(kind_name(layer.kind)) +
                                ") has no parameters");
  }
  if (channels.lo < 0 || channels.hi > layer.output.c() || channels.hi < channels.lo) {
    throw std::invalid_argument("layer " + layer.name + ": channel range [" + std::to_string(channels.lo) + "," +
                                std::to_string(channels.hi) + ") is outside [0," +
                                std::to_string(layer.output.c()) + ")");
  }
  const Shape& in = graph.input_shape(layer, 0);
  LayerParams p;
  p.channels = channels;
  const auto rows = static_cast<size_t>(channels.size());
  switch (layer.kind) {
    case LayerKind::kConv2d:
      p.row = in.c() * layer.window.kernel_h * layer.window.kernel_w;
      break;
    case LayerKind::kFullyConnected:
      p.row = in.c() * in.h() * in.w();
      break;
    default:  // batch norm
      p.row = 1;
      p.running_mean.assign(rows, 0.0f);
      p.running_var.assign(rows, 1.0f);
      break;
  }
  p.weight.assign(rows * static_cast<size_t>(p.row), layer.kind == LayerKind::kBatchNorm ? 1.0f : 0.0f);
  if (layer.has_bias || layer.kind == LayerKind::kBatchNorm) p.bias.assign(rows, 0.0f);
  return p;
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
