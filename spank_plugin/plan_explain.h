#pragma once
// The table --layerplan-explain prints into the job's output: the summary, then one row
// per layer with its split and its predicted share of the step.
#include <string>
#include <vector>

#include "job/job_plan.h"

namespace layerplan::spank {

std::vector<std::string> explain_lines(const JobPlan& job);

}  // namespace layerplan::spank
