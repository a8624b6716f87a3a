#include "runtime/executor/initial_params.h"

#include <cmath>
#include <random>

namespace layerplan {

LayerParams initial_params(const ModelGraph& graph, const Layer& layer, uint64_t seed) {
  LayerParams p = zero_params(graph, layer);
  if (layer.kind == LayerKind::kBatchNorm) return p;
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(layer.id));
  const double bound = 1.0 / std::sqrt(static_cast<double>(p.row));  // row = fan_in
  // Scaled 53-bit draws rather than std::uniform_real_distribution, whose output is not
  // specified across standard libraries.
  auto draw = [&] { return static_cast<float>((static_cast<double>(rng() >> 11) * 0x1.0p-53 * 2.0 - 1.0) * bound); };
  for (float& w : p.weight) w = draw();
  for (float& b : p.bias) b = draw();
  return p;
}

}  // namespace layerplan
