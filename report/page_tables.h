#pragma once
// The report's tables: the numbers `layerplan plan` prints (strategies, layers), the
// scaling points, and measured profiles next to the prediction, so nothing is only in a
// picture.
#include <string>
#include <vector>

#include "model/model_graph.h"
#include "planner/planner.h"
#include "report/measured_profile.h"
#include "report/scaling.h"
#include "report/xml_writer.h"

namespace layerplan::report {

// The searched layer-wise plan when a baseline (or another candidate) was chosen over it;
// nullptr when it is the chosen plan or the search fell back.
const StrategyCost* searched_not_chosen(const Plan& plan);

// The rows of the strategy table, each strategy once: the chosen one, the searched plan when
// it was not chosen, then the baselines but the chosen one. `role`: "chosen" or "searched"
// when both are listed, else empty.
struct StrategyRow {
  const StrategyCost* strategy;
  std::string role;
};
std::vector<StrategyRow> strategy_rows(const Plan& plan);

// Per strategy (<tr data-strategy data-role>): step, additive, images/s, speedup over data
// parallelism, compute, transfer, sync, exposed sync, communication.
void write_strategy_table(XmlWriter& xml, const Plan& plan);
// Per layer of `strategy` (<table class=table_class data-strategy>, <tr data-layer>).
void write_layer_table(XmlWriter& xml, const Plan& plan, const StrategyCost& strategy, const ModelGraph& graph,
                       const std::string& table_class = "layers");
// Every layer configured alike in both (the search may find data parallelism itself).
bool split_alike(const StrategyCost& a, const StrategyCost& b);

// The layers `searched` splits otherwise than `chosen` (<table class="differences">, a
// <tr data-layer> each: the two configurations), after a line that counts them.
void write_difference_table(XmlWriter& xml, const ModelGraph& graph, const StrategyCost& chosen,
                            const StrategyCost& searched);
void write_scaling_table(XmlWriter& xml, const ScalingCurve& curve);
// Per layer: the prediction, and the slowest rank's measured compute and moves per step.
void write_measured_table(XmlWriter& xml, const Plan& plan, const ModelGraph& graph,
                          const std::vector<MeasuredProfile>& measured);

}  // namespace layerplan::report
