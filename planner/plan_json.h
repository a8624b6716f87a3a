#pragma once
// The plan file: what `layerplan plan --json FILE` writes and the runtime executes.
// Versioned; docs/plan-format.md is its specification.
#include <string>
#include <vector>

#include "planner/planner.h"

namespace layerplan {

inline constexpr int kPlanFormatVersion = 1;

// The plan as a JSON document (pretty-printed, ending in a newline).
std::string plan_to_json(const Plan& plan, const ModelGraph& graph, const DeviceGraph& devices);

// Reads the per-layer configurations of a plan file written for `graph` on `device_count`
// devices. Throws UsageError when the text is not a layerplan plan of a known version,
// was made for another model, batch or device count, or holds a configuration that is
// not valid for its layer.
std::vector<Configuration> configurations_from_json(const std::string& text, const ModelGraph& graph,
                                                    int device_count);

}  // namespace layerplan
