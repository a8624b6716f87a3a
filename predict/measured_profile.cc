#include "predict/measured_profile.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <fstream>

namespace layerplan {

namespace {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    if (start != std::string::npos) return line.substr(start);
  }
  return "unknown";
}

std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string("unknown host");
}

std::string measured_on(const MeasureOptions& options) {
  std::string where =
      "layerplan predict on " + host_name() + ", " + kernel_backend_name(options.kernels) + " kernels, ";
  if (options.mode == MeasureMode::kAsRanks) return where + "one rank per device";
  return where + "one process, core share " + std::to_string(options.core_share);
}

std::array<int64_t, kNumDims> extents(const TileShapes& shapes, size_t at) {
  std::array<int64_t, kNumDims> e{};
  std::copy_n(shapes.begin() + static_cast<std::ptrdiff_t>(at), kNumDims, e.begin());
  return e;
}

}  // namespace

std::string cpu_profile_device(KernelBackend kernels) {
  return "cpu:" + cpu_model_name() + " (" + kernel_backend_name(kernels) + ")";
}

ProfileDb profile_of_steps(const ModelGraph& graph, const std::vector<Configuration>& plan,
                           const MeasuredSteps& measured, const ProfileOrigin& origin) {
  ProfileDb db;
  for (const Layer& layer : graph.layers()) {
    if (layer.kind == LayerKind::kInput || layer.kind == LayerKind::kFlatten) continue;
    const auto id = static_cast<size_t>(layer.id);
    const TileShapes shapes = slowest_tile_shapes(graph, layer, plan.at(id));
    ProfileEntry e;
    e.layer = layer;
    e.output = extents(shapes, 0);
    for (size_t at = kNumDims; at < shapes.size(); at += kNumDims) e.inputs.push_back(extents(shapes, at));
    e.precision = origin.precision;
    e.device = origin.device;
    e.forward_s = measured.forward_s.at(id);
    e.backward_s = std::max(0.0, measured.compute_s.at(id) - measured.forward_s.at(id));
    e.repeats = origin.repeats;
    e.measured_on = origin.measured_on;
    db.entries.push_back(std::move(e));
  }
  return db;
}

ProfileDb measured_profile(const ModelGraph& graph, const std::vector<Configuration>& plan,
                           const MeasuredSteps& measured, const MeasureOptions& options) {
  // The CPU runtime trains in fp32.
  return profile_of_steps(graph, plan, measured,
                          {cpu_profile_device(options.kernels), "fp32", options.steps - 1, measured_on(options)});
}

}  // namespace layerplan
