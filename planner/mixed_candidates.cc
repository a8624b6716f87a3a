#include "planner/mixed_candidates.h"

#include <cstddef>

namespace layerplan {

std::vector<MixedCandidate> mixed_candidates(const ModelGraph& graph, const std::vector<Configuration>& searched,
                                             const std::vector<Configuration>& data_parallel) {
  int cut = 0;
  while (cut < graph.size() && graph.layer(cut).kind != LayerKind::kFullyConnected) ++cut;
  if (cut == 0 || cut == graph.size() || searched.size() != static_cast<size_t>(graph.size()) ||
      data_parallel.size() != searched.size()) {
    return {};
  }
  const auto at = static_cast<size_t>(cut);
  std::vector<MixedCandidate> out;
  auto add = [&](std::string name, bool features_data_parallel) {
    MixedCandidate c{std::move(name), searched};
    for (size_t i = features_data_parallel ? 0 : at; i < (features_data_parallel ? at : searched.size()); ++i) {
      c.configs[i] = data_parallel[i];
    }
    if (c.configs != searched && c.configs != data_parallel) out.push_back(std::move(c));
  };
  add("layer-wise, data-parallel features", true);
  add("layer-wise, data-parallel classifier", false);
  return out;
}

}  // namespace layerplan
