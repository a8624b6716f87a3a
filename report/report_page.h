#pragma once
// The report of a plan as one self-contained XHTML page (inline SVG and CSS; no script,
// nothing fetched): the layer graph, the device x layer grid, the predicted step of every
// strategy as a per-device timeline, the scaling chart, and tables of the numbers
// `layerplan plan` prints (docs/report.md). Well-formed XML, so tests parse it as data.
#include <optional>
#include <string>
#include <vector>

#include "model/model_graph.h"
#include "planner/planner.h"
#include "report/measured_profile.h"
#include "report/scaling.h"
#include "topology/device_graph.h"

namespace layerplan::report {

struct ReportInput {
  const Plan& plan;
  const ModelGraph& graph;
  const DeviceGraph& devices;
  std::optional<ScalingCurve> scaling;    // left out: no chart
  std::string text_report;                // `layerplan plan`'s text, shown as is at the end
  std::vector<MeasuredProfile> measured;  // `layerplan train --profile` files, one per rank
};

std::string report_html(const ReportInput& input);

}  // namespace layerplan::report
