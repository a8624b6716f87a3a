#pragma once
// The predicted step of each strategy as a per-device timeline (report/step_timeline.h),
// all to one time scale: for each strategy a strip of its phases (compute, transfer, sync;
// each a <rect class="phase"> whose data-s is its seconds, so the strip sums to the step),
// then a row per group of devices that take part in the same phases (<g class="devices">
// with data-devices), their spans merged where one phase follows another of the same kind.
#include <vector>

#include "model/model_graph.h"
#include "report/step_timeline.h"
#include "report/xml_writer.h"

namespace layerplan::report {

// Swatches of the three kinds of span.
void write_timeline_legend(XmlWriter& xml);

// `zoomed`: a second view of one strategy (class "timelines zoomed").
void write_timelines(XmlWriter& xml, const ModelGraph& graph, const std::vector<StepTimeline>& timelines,
                     bool zoomed = false);

}  // namespace layerplan::report
