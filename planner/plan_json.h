#pragma once
// Writing the plan file: what `layerplan plan --json FILE` writes and the runtime executes.
// Versioned; docs/plan-format.md is its specification, model/plan_file.h its reader.
#include <string>

#include "model/plan_file.h"
#include "planner/planner.h"

namespace layerplan {

// The plan as a JSON document (pretty-printed, ending in a newline).
std::string plan_to_json(const Plan& plan, const ModelGraph& graph, const DeviceGraph& devices);

}  // namespace layerplan
