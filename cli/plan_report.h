#pragma once
// The human-readable report of `layerplan plan`: a row per layer, then the layer-wise
// plan against each baseline.
#include <ostream>

#include "planner/planner.h"

namespace layerplan {

void print_plan_report(std::ostream& out, const Plan& plan, const ModelGraph& graph, const DeviceGraph& devices,
                       bool verbose);

}  // namespace layerplan
