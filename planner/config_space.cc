#include "planner/config_space.h"

#include <algorithm>
#include <numeric>

#include "common/error.h"

namespace layerplan {

bool is_power_of_two(int64_t value) { return value > 0 && (value & (value - 1)) == 0; }

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

std::vector<Degrees> candidate_degrees(const Layer& layer, int device_count) {
  const auto dims = splittable_dims(layer.kind);
  std::vector<Degrees> out;
  // Depth-first over dimensions, multiplying powers of two while they divide the extent.
  auto extend = [&](auto&& self, int dim, Degrees current) -> void {
    if (dim == kNumDims) {
      out.push_back(current);
      return;
    }
    const int others = current.product();  // dimensions after `dim` are still 1
    for (int degree = 1; others * degree <= device_count; degree *= 2) {
      if (degree > 1 && (!dims[static_cast<size_t>(dim)] || layer.output[dim] % degree != 0)) break;
      current.d[static_cast<size_t>(dim)] = degree;
      self(self, dim + 1, current);
    }
  };
  extend(extend, 0, Degrees{});
  std::stable_sort(out.begin(), out.end(),
                   [](const Degrees& a, const Degrees& b) { return a.product() < b.product(); });
  return out;
}

std::vector<Configuration> enumerate_configurations(const Layer& layer, int device_count,
                                                    int gpus_per_node, const SpaceOptions& options) {
  require(is_power_of_two(device_count),
          std::to_string(device_count) + " GPUs: expected a power of two (1, 2, 4, 8, ...)");
  require(is_power_of_two(gpus_per_node) && gpus_per_node <= device_count,
          std::to_string(gpus_per_node) + " GPUs per node: expected a power of two no larger than the " +
              std::to_string(device_count) + " GPUs");
  std::vector<Configuration> out;
  for (const Degrees& degrees : candidate_degrees(layer, device_count)) {
    const int p = degrees.product();
    const int blocks = options.placement == PlacementRule::kFirstBlock ? 1 : device_count / p;
    for (int block = 0; block < blocks; ++block) {
      Configuration config{degrees, std::vector<int>(static_cast<size_t>(p))};
      std::iota(config.devices.begin(), config.devices.end(), block * p);
      out.push_back(std::move(config));
    }
  }
  return out;
}

}  // namespace layerplan
