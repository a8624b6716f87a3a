#include "spank_plugin/plan_explain.h"

#include <cstdio>

namespace layerplan::spank {

std::vector<std::string> explain_lines(const JobPlan& job) {
  std::vector<std::string> lines;
  lines.push_back("layerplan: " + job.summary);
  char row[256];
  std::snprintf(row, sizeof row, "%-28s %-22s %-14s %5s %11s %11s %11s", "layer", "kind", "split", "tiles",
                "compute ms", "transfer ms", "sync ms");
  lines.emplace_back(row);
  const StrategyCost& chosen = job.plan.chosen;
  for (const Layer& layer : job.graph.layers()) {
    const LayerCost& cost = chosen.layers.at(static_cast<size_t>(layer.id));
    std::snprintf(row, sizeof row, "%-28s %-22s %-14s %5d %11.3f %11.3f %11.3f", layer.name.c_str(),
                  std::string(kind_name(layer.kind)).c_str(), cost.config.degrees.str().c_str(), cost.config.tiles(),
                  cost.compute_s * 1e3, cost.transfer_s * 1e3, cost.sync_s * 1e3);
    lines.emplace_back(row);
  }
  std::snprintf(row, sizeof row, "%-28s %-22s %-14s %5s %11.3f %11.3f %11.3f", "total", chosen.name.c_str(), "", "",
                chosen.compute_s * 1e3, chosen.transfer_s * 1e3, chosen.sync_s * 1e3);
  lines.emplace_back(row);
  return lines;
}

}  // namespace layerplan::spank
