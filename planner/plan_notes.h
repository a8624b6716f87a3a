#pragma once
// The sentences every report of a plan shares (the text and HTML reports, the plan file's
// notes, the SLURM plugin's summary and --layerplan-explain), so that they say the same:
// the GPUs the plan leaves idle, the faster plan the simplicity margin set aside, and how
// far the plan may be from the optimum (docs/planner.md).
#include <string>

#include "planner/planner.h"

namespace layerplan {

// "56 of 64 GPUs idle: the plan uses 1 of 8 nodes, where the same step takes 12.34 ms";
// empty when no GPU is idle.
std::string idle_devices_text(const Plan& plan);

// "the plan uses 8 of 64 GPUs"; empty when no GPU is idle (the summary line's short form).
std::string idle_devices_short_text(const Plan& plan);

// "layer-wise (11.90 ms) was set aside: 2.5% faster than data parallel (12.20 ms), within the
// 3% simplicity margin (--min-gain)"; empty when nothing was set aside.
std::string set_aside_text(const Plan& plan);

// "lower bound 10.10 ms: the plan is at most 17.3% above the optimum" or ", proven optimal";
// empty when the plan has no lower bound (the search fell back, or a baseline was asked for).
std::string lower_bound_text(const Plan& plan);

}  // namespace layerplan
