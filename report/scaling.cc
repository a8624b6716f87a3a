#include "report/scaling.h"

#include <algorithm>

#include "common/error.h"

namespace layerplan::report {

std::vector<int> scaling_gpu_counts(int gpus_per_node, int job_gpus) {
  std::vector<int> counts;
  const int last = std::max(2 * job_gpus, 8 * gpus_per_node);
  for (int g = std::max(1, gpus_per_node); g <= last && counts.size() < 12; g *= 2) counts.push_back(g);
  if (std::find(counts.begin(), counts.end(), job_gpus) == counts.end() && job_gpus >= 1) {
    counts.insert(std::upper_bound(counts.begin(), counts.end(), job_gpus), job_gpus);
  }
  return counts;
}

std::vector<std::string> scaling_series_names() {
  return {"chosen plan", "layer-wise search", "data parallel", "model parallel", "owt"};
}

namespace {

ScalingPoint point_of(const Plan& plan, int gpus) {
  ScalingPoint point;
  point.gpus = gpus;
  point.layerwise_fell_back = plan.fell_back() || plan.layer_wise.layers.empty();
  const auto rate = [&](const StrategyCost& s) {
    return s.step_s() > 0 ? static_cast<double>(plan.batch) / s.step_s() : 0.0;
  };
  point.chosen = plan.chosen.name;
  point.images_per_s.push_back(rate(plan.chosen));
  // Without a searched plan (it fell back), the chosen baseline stands in.
  point.images_per_s.push_back(rate(plan.layer_wise.layers.empty() ? plan.chosen : plan.layer_wise));
  for (const StrategyCost& b : plan.baselines) point.images_per_s.push_back(rate(b));
  return point;
}

}  // namespace

ScalingCurve scaling_curve(const ScalingCaseMaker& make_case, const std::vector<int>& gpu_counts, int job_gpus,
                           const PlanOptions& options, const Plan* job_plan) {
  ScalingCurve curve;
  curve.strategies = scaling_series_names();
  curve.job_gpus = job_gpus;
  std::vector<int> skipped;
  for (const int gpus : gpu_counts) {
    if (job_plan != nullptr && gpus == job_gpus) {
      curve.points.push_back(point_of(*job_plan, gpus));
      continue;
    }
    std::optional<ScalingCase> c;
    try {
      c = make_case(gpus);
      if (c) require_plannable(c->graph, c->devices);
    } catch (const UsageError&) {
      c.reset();
    }
    if (!c) {
      skipped.push_back(gpus);
      continue;
    }
    curve.points.push_back(point_of(make_plan(c->graph, c->devices, options), gpus));
  }
  if (!skipped.empty()) {
    curve.note = "not planned (the batch or the cluster does not split):";
    for (const int g : skipped) curve.note += " " + std::to_string(g);
    curve.note += " GPUs";
  }
  return curve;
}

}  // namespace layerplan::report
