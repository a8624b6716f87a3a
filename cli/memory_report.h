#pragma once
// The memory block of `layerplan plan`'s report: each strategy's step time beside its
// predicted peak memory per GPU (planner/memory_model.h), against the usable memory.
#include <ostream>
#include <string>

#include "planner/planner.h"

namespace layerplan {

void print_memory_report(std::ostream& out, const Plan& plan, const DeviceGraph& devices);

// Devices with equal peaks (to 0.01 GiB) in runs of consecutive ids, at most `runs` of them:
// "0-3 5.21, 4-15 3.10".
std::string memory_runs_text(const PlanMemory& memory, int runs);

}  // namespace layerplan
