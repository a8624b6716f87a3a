#include "spank_plugin/plan_explain.h"

#include <cstdio>

#include "common/safe_write.h"
#include "planner/plan_notes.h"
#include "planner/step_timeline.h"
#include "report/report_page.h"

namespace layerplan::spank {

std::vector<std::string> explain_lines(const JobPlan& job) {
  std::vector<std::string> lines;
  lines.push_back("layerplan: " + job.summary);
  // The GPUs left idle and the plan the simplicity margin set aside (planner/plan_notes.h).
  for (const std::string& note : {idle_devices_text(job.plan), set_aside_text(job.plan)}) {
    if (!note.empty()) lines.push_back("layerplan: " + note);
  }
  char row[320];
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
  // The total above is the search's additive objective; the plan is chosen, and the job
  // told (LAYERPLAN_STEP_MS), by the step as a timeline, as `layerplan plan` reports it.
  const StepTimeline& t = chosen.timeline;
  std::snprintf(row, sizeof row,
                "step %.3f ms by the timeline (forward %.3f + backward %.3f + exposed sync %.3f; %d all-reduces of "
                "%.3f ms %s the backward); additive %.3f ms",
                chosen.step_s() * 1e3, t.forward_s * 1e3, t.backward_s * 1e3, t.exposed_sync_s * 1e3, t.sync_jobs,
                t.sync_s * 1e3, job.plan.overlap ? "overlapping" : "after", chosen.additive_s() * 1e3);
  lines.emplace_back(row);
  return lines;
}

std::string explain_report_html(const JobPlan& job) {
  return report::report_html({job.plan, job.graph, job.devices, {}, {}, {}});
}

std::string publish_report(const std::string& plan_path, const std::string& html) {
  const std::string suffix = ".json";
  const bool json_name = plan_path.size() > suffix.size() &&
                         plan_path.compare(plan_path.size() - suffix.size(), suffix.size(), suffix) == 0;
  std::string path = (json_name ? plan_path.substr(0, plan_path.size() - suffix.size()) : plan_path) + ".html";
  write_file_safely(path, html, "report", 0600);
  return path;
}

}  // namespace layerplan::spank
