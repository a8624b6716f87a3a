#pragma once
// The variables every task of a planned step gets. With layerplan off, none is set.
#include <string>
#include <utility>
#include <vector>

#include "spank_plugin/step_plan.h"

namespace layerplan::spank {

// LAYERPLAN_PLAN (the plan file), LAYERPLAN_MODE, LAYERPLAN_STEP_MS (predicted, 3
// decimals) and LAYERPLAN_SUMMARY (one line), in that order.
std::vector<std::pair<std::string, std::string>> plan_environment(const std::string& plan_path, const StepPlan& plan);

}  // namespace layerplan::spank
