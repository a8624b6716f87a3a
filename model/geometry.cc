#include "model/geometry.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

namespace layerplan {

int64_t Box::volume() const {
  int64_t v = 1;
  for (const Interval& i : dim) v *= i.size();
  return v;
}

Box Box::whole(const Shape& shape) {
  Box b;
  for (int d = 0; d < kNumDims; ++d) b.dim[static_cast<size_t>(d)] = {0, shape[d]};
  return b;
}

std::string Box::str() const {
  std::string out;
  for (const Interval& i : dim) {
    out.append(out.empty() ? "[" : "x[").append(std::to_string(i.lo)).append(",");
    out.append(std::to_string(i.hi)).append(")");
  }
  return out;
}

Box intersect(const Box& a, const Box& b) {
  Box r;
  for (size_t d = 0; d < kNumDims; ++d) {
    r.dim[d] = {std::max(a.dim[d].lo, b.dim[d].lo), std::min(a.dim[d].hi, b.dim[d].hi)};
    if (r.dim[d].hi < r.dim[d].lo) r.dim[d].hi = r.dim[d].lo;
  }
  return r;
}

void Degrees::throw_too_many_tiles() const {
  throw std::overflow_error("degrees " + str() + " make more tiles than an int counts");
}

std::string Degrees::str() const {
  std::string out;
  for (int dim = 0; dim < kNumDims; ++dim) {
    if ((*this)[dim] == 1) continue;
    if (!out.empty()) out.push_back(' ');
    out.push_back(kDimLetters[static_cast<size_t>(dim)]);
    out.append(std::to_string((*this)[dim]));
  }
  return out.empty() ? "n1" : out;
}

// Tile numbering order, outermost first: n, h, w, c.
static constexpr std::array<int, kNumDims> kTileOrder = {0, 2, 3, 1};

std::array<int, kNumDims> tile_coords(const Degrees& degrees, int tile) {
  std::array<int, kNumDims> coords{};
  for (int k = kNumDims - 1; k >= 0; --k) {
    const int dim = kTileOrder[static_cast<size_t>(k)];
    coords[static_cast<size_t>(dim)] = tile % degrees[dim];
    tile /= degrees[dim];
  }
  return coords;
}

int tile_index(const Degrees& degrees, const std::array<int, kNumDims>& coords) {
  int t = 0;
  for (int dim : kTileOrder) t = t * degrees[dim] + coords[static_cast<size_t>(dim)];
  return t;
}

Box tile_box(const Shape& shape, const Degrees& degrees, int tile) {
  const auto coords = tile_coords(degrees, tile);
  Box b;
  for (int d = 0; d < kNumDims; ++d) {
    const int64_t size = shape[d] / degrees[d];
    const auto i = static_cast<size_t>(d);
    b.dim[i] = {coords[i] * size, (coords[i] + 1) * size};
  }
  return b;
}

std::string Configuration::str() const {
  std::string where;
  const bool contiguous = !devices.empty() && std::adjacent_find(devices.begin(), devices.end(), [](int a, int b) {
                                                return b != a + 1;
                                              }) == devices.end();
  if (devices.size() == 1) {
    where = "gpu " + std::to_string(devices[0]);
  } else if (contiguous) {
    where = "gpus " + std::to_string(devices.front()) + "-" + std::to_string(devices.back());
  } else {
    for (int d : devices) where.append(where.empty() ? "gpus " : ",").append(std::to_string(d));
  }
  return degrees.str() + " on " + where;
}

std::vector<Box> tiles(const Shape& shape, const Configuration& config) {
  std::vector<Box> out;
  out.reserve(static_cast<size_t>(config.tiles()));
  for (int t = 0; t < config.tiles(); ++t) out.push_back(tile_box(shape, config.degrees, t));
  return out;
}

namespace {

// Input rows [lo*s - p, (hi-1)*s - p + k) of output rows [lo, hi), clipped to the input.
Interval window_rows(const Interval& out, int kernel, int stride, int pad, int64_t extent) {
  if (out.size() == 0) return {0, 0};
  const int64_t lo = out.lo * stride - pad;
  const int64_t hi = (out.hi - 1) * stride - pad + kernel;
  return {std::clamp<int64_t>(lo, 0, extent), std::clamp<int64_t>(hi, 0, extent)};
}

// Input channels of the groups that a convolution's output channels `out` belong to:
// all of them when groups == 1, exactly `out` for a depthwise convolution.
Interval group_input_channels(const Interval& out, int groups, int64_t out_channels, int64_t in_channels) {
  if (groups <= 1) return {0, in_channels};
  if (out.size() == 0) return {0, 0};
  const int64_t out_per_group = out_channels / groups, in_per_group = in_channels / groups;
  return {out.lo / out_per_group * in_per_group, ((out.hi - 1) / out_per_group + 1) * in_per_group};
}

}  // namespace

Box required_input_box(const ModelGraph& graph, const Layer& consumer, int slot, const Box& out_box) {
  const Shape& in = graph.input_shape(consumer, slot);
  Box need = Box::whole(in);
  need.dim[0] = out_box.dim[0];  // every kind keeps samples apart
  switch (consumer.kind) {
    case LayerKind::kConv2d:
    case LayerKind::kMaxPool:
    case LayerKind::kAvgPool: {
      const Window& w = consumer.window;
      need.dim[1] = consumer.kind == LayerKind::kConv2d
                        ? group_input_channels(out_box.dim[1], consumer.groups, consumer.output.c(), in.c())
                        : out_box.dim[1];
      need.dim[2] = window_rows(out_box.dim[2], w.kernel_h, w.stride_h, w.pad_h, in.h());
      need.dim[3] = window_rows(out_box.dim[3], w.kernel_w, w.stride_w, w.pad_w, in.w());
      return need;
    }
    case LayerKind::kGlobalAvgPool:
      need.dim[1] = out_box.dim[1];
      return need;
    case LayerKind::kFullyConnected:
    case LayerKind::kSoftmaxCrossEntropy:
      return need;
    case LayerKind::kFlatten:
      if (out_box.dim[1] != Interval{0, consumer.output.c()}) {
        throw std::logic_error("flatten " + consumer.name + " can only be split by samples");
      }
      return need;
    case LayerKind::kConcat: {
      const int64_t offset = graph.channel_offset(consumer, slot);
      need = out_box;
      need.dim[1] = {std::max<int64_t>(out_box.dim[1].lo - offset, 0),
                     std::min<int64_t>(out_box.dim[1].hi - offset, in.c())};
      if (need.dim[1].hi < need.dim[1].lo) need.dim[1].hi = need.dim[1].lo;
      return need;
    }
    case LayerKind::kRelu:
    case LayerKind::kBatchNorm:
    case LayerKind::kDropout:
    case LayerKind::kAdd:
    case LayerKind::kActivation:
      return out_box;
    case LayerKind::kMul:
      // A (n, c, 1, 1) scale broadcast over height and width: the tile's samples and
      // channels of it, whatever part of h and w the tile covers.
      if (in == consumer.output) return out_box;
      need.dim[1] = out_box.dim[1];
      return need;
    case LayerKind::kChannelShuffle:
      // Output channels [a, b) read channels of every group: a strided set, not an
      // interval, so the layer is never split along channels and reads them all.
      if (out_box.dim[1] != Interval{0, consumer.output.c()}) {
        throw std::logic_error("channel_shuffle " + consumer.name + " cannot be split along channels");
      }
      return out_box;
    case LayerKind::kChannelSlice:
      need = out_box;
      need.dim[1] = {out_box.dim[1].lo + consumer.first_channel, out_box.dim[1].hi + consumer.first_channel};
      return need;
    case LayerKind::kInput:
      break;
  }
  throw std::logic_error("layer " + consumer.name + " of kind " + std::string(kind_name(consumer.kind)) +
                         " reads no input");
}

std::vector<PairVolume> transfer_volumes(const ModelGraph& graph, const Layer& consumer, int slot,
                                         const Configuration& producer, const Configuration& consumer_config) {
  std::map<std::pair<int, int>, int64_t> sums;
  for_each_transfer(graph, consumer, slot, producer, consumer_config, [&](int src, int dst, int64_t elements) {
    sums[{src, dst}] += elements;
  });
  std::vector<PairVolume> out;
  out.reserve(sums.size());
  for (const auto& [pair, elements] : sums) out.push_back({pair.first, pair.second, elements});
  return out;
}

std::vector<int> devices_used(const std::vector<Configuration>& plan) {
  std::set<int> devices;
  for (const Configuration& config : plan) devices.insert(config.devices.begin(), config.devices.end());
  return {devices.begin(), devices.end()};
}

}  // namespace layerplan
