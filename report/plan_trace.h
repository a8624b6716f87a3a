#pragma once
// `layerplan plan --trace FILE`: the predicted step of the chosen strategy in Chrome's
// trace event format (common/trace_events.h), one process per device, each phase it takes
// part in (report/step_timeline.h) a span named after the layer, with its bytes.
#include <ostream>

#include "model/model_graph.h"
#include "planner/planner.h"

namespace layerplan::report {

void write_plan_trace(std::ostream& out, const ModelGraph& graph, const StrategyCost& strategy, int device_count);

}  // namespace layerplan::report
