#include "planner/plan_notes.h"

#include <cstdio>

namespace layerplan {

namespace {

// A percentage with one decimal, "2.5%".
std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", fraction * 100);
  return text;
}

std::string milliseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f ms", seconds * 1e3);
  return text;
}

const StrategyCost* data_parallel_of(const Plan& plan) {
  for (const StrategyCost& b : plan.baselines) {
    if (b.name == "data parallel") return &b;
  }
  return nullptr;
}

}  // namespace

std::string idle_devices_text(const Plan& plan) {
  if (plan.idle_devices <= 0) return "";
  return std::to_string(plan.idle_devices) + " of " + std::to_string(plan.job_devices) + " GPUs idle: the plan uses " +
         std::to_string(plan.used_nodes) + " of " + std::to_string(plan.job_nodes) +
         " nodes, where the same step takes " + milliseconds(plan.used_nodes_step_s);
}

std::string idle_devices_short_text(const Plan& plan) {
  if (plan.idle_devices <= 0) return "";
  return "the plan uses " + std::to_string(plan.job_devices - plan.idle_devices) + " of " +
         std::to_string(plan.job_devices) + " GPUs";
}

std::string set_aside_text(const Plan& plan) {
  const StrategyCost* data = data_parallel_of(plan);
  if (plan.set_aside_name.empty() || data == nullptr || data->step_s() <= 0) return "";
  return plan.set_aside_name + " (" + milliseconds(plan.set_aside_step_s) +
         ") was set aside: " + percent(1 - plan.set_aside_step_s / data->step_s()) + " faster than data parallel (" +
         milliseconds(data->step_s()) + "), within the " + percent(plan.min_gain) + " simplicity margin (--min-gain)";
}

std::string lower_bound_text(const Plan& plan) {
  if (plan.lower_bound_s <= 0 || plan.chosen.step_s() <= 0) return "";
  std::string text = "lower bound " + milliseconds(plan.lower_bound_s) + ": ";
  if (plan.proven_optimal) return text + "the plan is the optimum of the search space, proven";
  return text + "the plan is at most " + percent(plan.chosen.step_s() / plan.lower_bound_s - 1) +
         " above the optimum of the search space";
}

}  // namespace layerplan
