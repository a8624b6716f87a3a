#include "planner/timeline_objective.h"

#include <algorithm>

#include "planner/memory_fit.h"

namespace layerplan {

TimelineObjective::TimelineObjective(const CostModel& model, const SearchUnits& units, const CostGraph& costs,
                                     const CostGraphParts& parts)
    : model_(model), units_(units), costs_(costs), parts_(parts) {
  const auto layers = static_cast<size_t>(model.graph().size());
  passes_.resize(layers);
  priced_.resize(layers);
  for (size_t l = 0; l < layers; ++l) {
    const auto configs = units.space[static_cast<size_t>(units.unit_of_layer[l])].size();
    passes_[l].resize(configs);
    priced_[l].assign(configs, 0);
  }
}

const PassTimes& TimelineObjective::passes(int layer, int config) {
  const auto l = static_cast<size_t>(layer);
  const auto c = static_cast<size_t>(config);
  if (!priced_[l][c]) {
    const auto u = static_cast<size_t>(units_.unit_of_layer[l]);
    passes_[l][c] = model_.pass_times(model_.graph().layer(layer), units_.space[u][c]);
    priced_[l][c] = 1;
  }
  return passes_[l][c];
}

std::vector<Configuration> TimelineObjective::configurations(const std::vector<int>& choice) const {
  std::vector<Configuration> out;
  out.reserve(units_.unit_of_layer.size());
  for (const int u : units_.unit_of_layer) {
    out.push_back(units_.space[static_cast<size_t>(u)][static_cast<size_t>(choice[static_cast<size_t>(u)])]);
  }
  return out;
}

std::vector<int> TimelineObjective::choice_of(const std::vector<Configuration>& configs) const {
  std::vector<int> choice(units_.head.size(), -1);
  for (size_t l = 0; l < units_.unit_of_layer.size(); ++l) {
    const auto u = static_cast<size_t>(units_.unit_of_layer[l]);
    const std::vector<Configuration>& space = units_.space[u];
    const auto at = std::find(space.begin(), space.end(), configs.at(l));
    if (at == space.end()) return {};
    const int index = static_cast<int>(at - space.begin());
    if (choice[u] >= 0 && choice[u] != index) return {};
    choice[u] = index;
  }
  return choice;
}

double TimelineObjective::step_s(const std::vector<int>& choice) {
  ++evaluations_;
  const ModelGraph& graph = model_.graph();
  double penalty = 0.0;
  for (size_t u = 0; u < choice.size(); ++u) {
    if (costs_.node_cost[u][static_cast<size_t>(choice[u])] >= kOverMemoryPenalty_s) penalty += kOverMemoryPenalty_s;
  }
  std::vector<LayerSpan> spans(static_cast<size_t>(graph.size()));
  for (const Layer& l : graph.layers()) {
    const auto u = static_cast<size_t>(units_.unit_of_layer[static_cast<size_t>(l.id)]);
    const int config = choice[u];
    double transfer = 0.0;
    const std::vector<int>& edges = parts_.edge_of_input[static_cast<size_t>(l.id)];
    for (size_t slot = 0; slot < edges.size(); ++slot) {
      if (edges[slot] < 0) continue;
      const CostEdge& e = costs_.edges[static_cast<size_t>(edges[slot])];
      const auto a = static_cast<size_t>(choice[static_cast<size_t>(e.src)]);
      transfer += e.cost[a * static_cast<size_t>(costs_.configs(e.dst)) + static_cast<size_t>(config)];
    }
    spans[static_cast<size_t>(l.id)] = layer_span(passes(l.id, config), transfer);
  }
  const std::vector<SyncJob> jobs = sync_jobs(model_, configurations(choice));
  return penalty + lay_out_step(spans, jobs, model_.sync_options().overlap, model_.devices().device_count()).step_s;
}

}  // namespace layerplan
