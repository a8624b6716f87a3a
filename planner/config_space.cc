#include "planner/config_space.h"

#include <algorithm>
#include <numeric>

#include "common/error.h"

namespace layerplan {

bool is_power_of_two(int64_t value) { return value > 0 && (value & (value - 1)) == 0; }

bool placeable_tile_count(int tiles, int device_count, int gpus_per_node) {
  if (tiles < 1 || gpus_per_node < 1 || device_count % gpus_per_node != 0) return false;
  return gpus_per_node % tiles == 0 || (tiles % gpus_per_node == 0 && device_count % tiles == 0);
}

bool allowed_degrees(const Degrees& degrees, int device_count, int gpus_per_node, const SpaceOptions& options) {
  const int tiles = degrees.product();
  if (!placeable_tile_count(tiles, device_count, gpus_per_node)) return false;
  const bool by_samples = options.node_runs == NodeRuns::kBySamples ||
                          (options.node_runs == NodeRuns::kAuto && device_count > kNodeRunsUpToDevices);
  if (!by_samples || tiles <= gpus_per_node || tiles == device_count) return true;
  return gpus_per_node % (tiles / degrees[0]) == 0;  // every sample block inside one node
}

std::vector<Degrees> candidate_degrees(const Layer& layer, int device_count, int gpus_per_node) {
  Deadline never;
  return candidate_degrees(layer, device_count, gpus_per_node, never);
}

std::vector<Degrees> candidate_degrees(const Layer& layer, int device_count, int gpus_per_node, Deadline& deadline) {
  const auto dims = splittable_dims(layer.kind);
  // Every placeable tile count divides the device count, so every degree and every
  // partial product does too: only divisors of the device count need trying.
  std::vector<int> divisors;
  for (int v = 1; v <= device_count; ++v) {
    if (device_count % v == 0) divisors.push_back(v);
  }
  deadline.charge(device_count);
  std::vector<Degrees> out;
  // Depth-first over dimensions, each degree a divisor of the extent (and of the device count).
  auto extend = [&](auto&& self, int dim, Degrees current) -> void {
    if (dim == kNumDims) {
      if (placeable_tile_count(current.product(), device_count, gpus_per_node)) out.push_back(current);
      return;
    }
    const int others = current.product();  // dimensions after `dim` are still 1
    for (int degree : divisors) {
      deadline.charge();
      if (device_count % (static_cast<int64_t>(others) * degree) != 0) continue;
      if (degree > 1 && (!dims[static_cast<size_t>(dim)] || layer.output[dim] % degree != 0)) continue;
      current.d[static_cast<size_t>(dim)] = degree;
      self(self, dim + 1, current);
    }
  };
  extend(extend, 0, Degrees{});
  std::stable_sort(out.begin(), out.end(),
                   [](const Degrees& a, const Degrees& b) { return a.product() < b.product(); });
  return out;
}

std::vector<Degrees> candidate_degrees(const Layer& layer, int device_count) {
  return candidate_degrees(layer, device_count, device_count);
}

void require_job_shape(int device_count, int gpus_per_node) {
  require(device_count >= 1, std::to_string(device_count) + " GPUs: expected 1 or more");
  require(gpus_per_node >= 1, std::to_string(gpus_per_node) + " GPUs per node: expected 1 or more");
  require(device_count % gpus_per_node == 0, std::to_string(device_count) +
                                                 " GPUs: expected a whole number of nodes, a multiple of the " +
                                                 std::to_string(gpus_per_node) + " GPUs per node");
}

std::vector<Configuration> enumerate_configurations(const Layer& layer, int device_count, int gpus_per_node,
                                                    const SpaceOptions& options) {
  Deadline never;
  return enumerate_configurations(layer, device_count, gpus_per_node, options, never);
}

std::vector<Configuration> enumerate_configurations(const Layer& layer, int device_count, int gpus_per_node,
                                                    const SpaceOptions& options, Deadline& deadline) {
  require_job_shape(device_count, gpus_per_node);
  std::vector<Configuration> out;
  for (const Degrees& degrees : candidate_degrees(layer, device_count, gpus_per_node, deadline)) {
    const int p = degrees.product();
    if (!allowed_degrees(degrees, device_count, gpus_per_node, options)) continue;
    const int blocks = options.placement == PlacementRule::kFirstBlock ? 1 : device_count / p;
    for (int block = 0; block < blocks; ++block) {
      deadline.charge(p);
      Configuration config{degrees, std::vector<int>(static_cast<size_t>(p))};
      std::iota(config.devices.begin(), config.devices.end(), block * p);
      out.push_back(std::move(config));
    }
  }
  return out;
}

}  // namespace layerplan
