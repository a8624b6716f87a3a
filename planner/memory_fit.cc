#include "planner/memory_fit.h"

#include <algorithm>
#include <cstdio>

namespace layerplan {

int exclude_over_memory(CostGraph& costs, const SearchUnits& units, const ModelGraph& graph, const Device& device,
                        const MemoryModelOptions& options, Deadline& deadline) {
  const int64_t usable = usable_memory_bytes(device);
  std::vector<std::vector<int>> members(units.space.size());
  for (int id = 0; id < graph.size(); ++id)
    members[static_cast<size_t>(units.unit_of_layer[static_cast<size_t>(id)])].push_back(id);
  int excluded = 0;
  for (size_t u = 0; u < units.space.size(); ++u) {
    for (size_t a = 0; a < units.space[u].size(); ++a) {
      // The unit's layers share the configuration; each one's bound is a bound for the unit.
      int64_t need = 0;
      for (int id : members[u]) {
        deadline.charge();
        need = std::max(need, layer_memory_lower_bound(graph, graph.layer(id), units.space[u][a],
                                                       device.bytes_per_element, options));
      }
      if (need <= usable) continue;
      costs.node_cost[u][a] += kOverMemoryPenalty_s;
      ++excluded;
    }
  }
  return excluded;
}

std::vector<std::vector<double>> unit_resident_bytes(const SearchUnits& units, const ModelGraph& graph,
                                                     const Device& device, const MemoryModelOptions& options) {
  std::vector<std::vector<double>> out(units.space.size());
  for (size_t u = 0; u < units.space.size(); ++u) out[u].assign(units.space[u].size(), 0.0);
  for (int id = 0; id < graph.size(); ++id) {
    const auto u = static_cast<size_t>(units.unit_of_layer[static_cast<size_t>(id)]);
    for (size_t a = 0; a < units.space[u].size(); ++a) {
      out[u][a] += static_cast<double>(
          layer_resident_bytes(graph, graph.layer(id), units.space[u][a], device.bytes_per_element, options));
    }
  }
  return out;
}

CostGraph with_memory_weight(const CostGraph& costs, const std::vector<std::vector<double>>& resident_bytes,
                             double seconds_per_byte) {
  CostGraph out = costs;
  for (size_t u = 0; u < out.node_cost.size(); ++u) {
    for (size_t a = 0; a < out.node_cost[u].size(); ++a) out.node_cost[u][a] += seconds_per_byte * resident_bytes[u][a];
  }
  return out;
}

bool fits_memory(const StrategyCost& strategy, int64_t usable_bytes) { return strategy.memory.peak() <= usable_bytes; }

const StrategyCost* fastest_fitting(const std::vector<StrategyCost>& candidates, int64_t usable_bytes) {
  const StrategyCost* best = nullptr;
  for (const StrategyCost& s : candidates) {
    if (fits_memory(s, usable_bytes) && (!best || s.step_s() < best->step_s())) best = &s;
  }
  return best;
}

std::string gib_text(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", bytes / static_cast<double>(int64_t{1} << 30));
  return text;
}

std::string no_plan_fits_message(const Plan& plan, const DeviceGraph& devices) {
  int64_t smallest = plan.layer_wise.layers.empty() ? INT64_MAX : plan.layer_wise.memory.peak();
  for (const StrategyCost& b : plan.baselines) smallest = std::min(smallest, b.memory.peak());
  const Device& d = devices.device();
  return plan.model + " at batch " + std::to_string(plan.batch) + " fits no plan on " +
         std::to_string(devices.device_count()) + " " + d.model + " (" + gib_text(d.memory_bytes) + " per GPU, " +
         gib_text(d.memory_reserve_bytes) + " reserved): the smallest plan priced needs " +
         gib_text(static_cast<double>(smallest)) + " on its fullest GPU";
}

}  // namespace layerplan
