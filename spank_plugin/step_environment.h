#pragma once
// The variables every task of a planned step gets. With layerplan off, none is set.
#include <string>
#include <utility>
#include <vector>

#include "spank_plugin/step_plan.h"

namespace layerplan::spank {

// LAYERPLAN_PLAN (the plan file), LAYERPLAN_PLAN_SHA256 (`plan_sha256`, the SHA-256 of
// its bytes, which `layerplan train` checks), LAYERPLAN_MODE, LAYERPLAN_STEP_MS
// (predicted, 3 decimals) and LAYERPLAN_SUMMARY (one line), in that order.
std::vector<std::pair<std::string, std::string>> plan_environment(const std::string& plan_path,
                                                                  const std::string& plan_sha256, const StepPlan& plan);

}  // namespace layerplan::spank
