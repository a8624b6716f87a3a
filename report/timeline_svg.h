#pragma once
// The predicted step of each strategy as a per-device timeline (report/step_timeline.h),
// each to its own time scale (its step spans the axis; <g class="axis"> under its rows gives
// its milliseconds and its length), so that a strategy 40 times slower than another leaves
// neither a sliver: for each strategy a strip of its phases (compute, transfer, sync;
// each a <rect class="phase"> whose data-s is its seconds, so the strip sums to the step),
// then a row per group of devices that take part in the same phases (<g class="devices">
// with data-devices, placed by its transform), their spans merged where one phase follows
// another of the same kind. Consecutive spans narrower than 2 px are drawn as one
// rectangle of at most 2 px (class "merged", the colour of the kind that fills most of it,
// a title giving its first and last layer and how many layers and phases it covers); a
// wider span keeps its own rectangle and per-layer title. Rectangles take their height
// from the page's style sheet.
#include <vector>

#include "model/model_graph.h"
#include "report/step_timeline.h"
#include "report/xml_writer.h"

namespace layerplan::report {

// Swatches of the three kinds of span.
void write_timeline_legend(XmlWriter& xml);

// Each strategy's title gives its step against the first one's.
void write_timelines(XmlWriter& xml, const ModelGraph& graph, const std::vector<StepTimeline>& timelines);

}  // namespace layerplan::report
