#pragma once
// The report's tables: the numbers `layerplan plan` prints (strategies, layers), the
// scaling points, and measured profiles next to the prediction, so nothing is only in a
// picture.
#include <vector>

#include "model/model_graph.h"
#include "planner/planner.h"
#include "report/measured_profile.h"
#include "report/scaling.h"
#include "report/xml_writer.h"

namespace layerplan::report {

void write_strategy_table(XmlWriter& xml, const Plan& plan);
void write_layer_table(XmlWriter& xml, const Plan& plan, const ModelGraph& graph);
void write_scaling_table(XmlWriter& xml, const ScalingCurve& curve);
// Per layer: the prediction, and the slowest rank's measured compute and moves per step.
void write_measured_table(XmlWriter& xml, const Plan& plan, const ModelGraph& graph,
                          const std::vector<MeasuredProfile>& measured);

}  // namespace layerplan::report
