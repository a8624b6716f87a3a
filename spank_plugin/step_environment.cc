#include "spank_plugin/step_environment.h"

#include <cstdio>

#include "model/plan_file.h"

namespace layerplan::spank {

std::vector<std::pair<std::string, std::string>> plan_environment(const std::string& plan_path,
                                                                  const std::string& plan_sha256,
                                                                  const StepPlan& plan) {
  char ms[64];
  std::snprintf(ms, sizeof ms, "%.3f", plan.step_ms);
  std::string summary = plan.summary;
  for (char& c : summary) {
    if (c == '\n' || c == '\r') c = ' ';  // one line, whatever a file put there
  }
  return {{"LAYERPLAN_PLAN", plan_path},
          {kPlanSha256Variable, plan_sha256},
          {"LAYERPLAN_MODE", plan.mode},
          {"LAYERPLAN_STEP_MS", ms},
          {"LAYERPLAN_SUMMARY", summary}};
}

}  // namespace layerplan::spank
