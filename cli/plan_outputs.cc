#include "cli/plan_outputs.h"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <utility>

#include "common/error.h"
#include "common/safe_write.h"
#include "model/model_file.h"
#include "report/plan_trace.h"
#include "report/report_page.h"
#include "topology/topology_device_graph.h"

namespace layerplan {

void add_plan_output_flags(CLI::App& cmd, PlanOutputArgs& args) {
  cmd.add_option("--report", args.report,
                 "Write the plan as one self-contained HTML page: layer graph, device grid, step timelines, "
                 "scaling chart (docs/report.md)");
  cmd.add_option("--report-budget", args.scaling_budget_s,
                 "Seconds the search may take at each GPU count of the report's scaling chart")
      ->capture_default_str();
  cmd.add_option("--trace", args.trace,
                 "Write the predicted step in Chrome's trace event format, for Perfetto (docs/report.md)");
}

void check_plan_output_args(const PlanOutputArgs& args) {
  require(args.scaling_budget_s > 0,
          "--report-budget " + std::to_string(args.scaling_budget_s) + ": expected a positive number of seconds");
  // Refused before planning, so that a bad path leaves no plan file written either.
  for (const auto& [flag, file] : {std::pair{"--report", args.report}, std::pair{"--trace", args.trace}}) {
    if (!file) continue;
    const std::filesystem::path dir = std::filesystem::absolute(*file).parent_path();
    require(std::filesystem::is_directory(dir), std::string(flag) + " '" + *file + "': no directory " + dir.string());
  }
}

PlanOptions scaling_options(const PlanOutputArgs& args, PlanOptions base) {
  base.time_budget_s = args.scaling_budget_s;
  base.clock = nullptr;
  return base;
}

report::ScalingCaseMaker cluster_scaling_cases(const ClusterSpec& spec, const std::string& model,
                                               int64_t images_per_gpu) {
  return [=](int gpus) -> std::optional<report::ScalingCase> {
    ClusterSpec s = spec;
    s.gpus_per_node = std::min(spec.gpus_per_node, gpus);
    if (gpus % s.gpus_per_node != 0) return std::nullopt;
    s.nodes = gpus / s.gpus_per_node;
    return report::ScalingCase{resolve_model(model, {}, images_per_gpu * gpus, ModelDigest::kSkip),
                               build_device_graph(s)};
  };
}

report::ScalingCaseMaker node_scaling_cases(const NodeTopology& node, const AdminConfig& config,
                                            const std::string& model, int64_t images_per_gpu) {
  const NodeTopology priced = price_links(node, config);
  const int per_node = node.gpu_count();
  return [=](int gpus) -> std::optional<report::ScalingCase> {
    if (per_node < 1 || gpus % per_node != 0) return std::nullopt;
    return report::ScalingCase{resolve_model(model, {}, images_per_gpu * gpus, ModelDigest::kSkip),
                               build_device_graph(priced, gpus / per_node, config)};
  };
}

void write_plan_outputs(std::ostream& out, const PlanOutputArgs& args, const Plan& plan, const ModelGraph& graph,
                        const DeviceGraph& devices, const std::string& text_report,
                        const report::ScalingCaseMaker& make_case, const PlanOptions& options) {
  if (args.trace) {
    std::ostringstream trace;
    report::write_plan_trace(trace, graph, plan.chosen, devices.device_count());
    write_file_safely(*args.trace, trace.str(), "--trace");
    out << "predicted step trace written to " << *args.trace << "\n";
  }
  if (args.report) {
    const std::vector<int> counts = report::scaling_gpu_counts(devices.gpus_per_node(), devices.device_count());
    report::ReportInput input{plan, graph, devices, {}, text_report, {}};
    input.scaling =
        report::scaling_curve(make_case, counts, devices.device_count(), scaling_options(args, options), &plan);
    write_file_safely(*args.report, report::report_html(input), "--report");
    out << "report written to " << *args.report << "\n";
  }
}

}  // namespace layerplan
