#pragma once
// The pictures `layerplan plan` can write besides its text and plan file: --report (one
// HTML page, report/report_page.h) and --trace (the predicted step in Chrome's trace event
// format, report/plan_trace.h).
#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "model/model_graph.h"
#include "planner/planner.h"
#include "report/scaling.h"
#include "topology/admin_config.h"
#include "topology/cluster_spec.h"
#include "topology/device_graph.h"
#include "topology/node_topology.h"

namespace layerplan {

struct PlanOutputArgs {
  std::optional<std::string> report;
  std::optional<std::string> trace;
  double scaling_budget_s = 1.0;  // the search's time budget at each point of the scaling chart
};

void add_plan_output_flags(CLI::App& cmd, PlanOutputArgs& args);

// Throws UsageError for a bad --report-budget.
void check_plan_output_args(const PlanOutputArgs& args);

// The options every point of the scaling chart is planned with: `base` with the report's budget.
PlanOptions scaling_options(const PlanOutputArgs& args, PlanOptions base);

// The scaling chart's clusters: `spec` with as many nodes as a count needs (a count below
// one node: part of one), or that many copies of a discovered `node`; the model at
// `images_per_gpu` times the count.
report::ScalingCaseMaker cluster_scaling_cases(const ClusterSpec& spec, const std::string& model,
                                               int64_t images_per_gpu);
report::ScalingCaseMaker node_scaling_cases(const NodeTopology& node, const AdminConfig& config,
                                            const std::string& model, int64_t images_per_gpu);

// Writes what the flags ask for (each file through a temporary and a rename) and says
// where on `out`. `make_case` plans the chart's other GPU counts.
void write_plan_outputs(std::ostream& out, const PlanOutputArgs& args, const Plan& plan, const ModelGraph& graph,
                        const DeviceGraph& devices, const std::string& text_report,
                        const report::ScalingCaseMaker& make_case, const PlanOptions& options);

}  // namespace layerplan
