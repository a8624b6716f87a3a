#include "cli/report_command.h"

#include <cmath>
#include <iostream>

#include "cli/plan_outputs.h"
#include "cli/word_option.h"
#include "common/error.h"
#include "common/safe_write.h"
#include "job/device_profile.h"
#include "model/plan_file.h"
#include "planner/node_prefixes.h"
#include "report/report_page.h"
#include "topology/cluster_spec.h"
#include "topology/gpu_catalog.h"

namespace layerplan {

namespace {

const OptionWords<SyncScheme> kSyncWords = {{"ring", SyncScheme::kRingAllReduce}, {"ps", SyncScheme::kParameterServer}};

// The cluster the plan names: its node shape and GPU, the rest from --cluster (the plan
// file does not hold bandwidths) or the paper cluster's defaults.
ClusterSpec cluster_of(const PlanHeader& header, const ReportCommandArgs& args) {
  ClusterSpec spec = args.cluster_file ? load_cluster_file(*args.cluster_file) : ClusterSpec::paper_cluster();
  require(header.nodes >= 1 && header.gpus_per_node >= 1,
          "plan file '" + args.plan + "': expected cluster.nodes and cluster.gpus_per_node");
  spec.nodes = header.nodes;
  spec.gpus_per_node = header.gpus_per_node;
  for (const GpuModel& gpu : gpu_catalog()) {
    if (gpu.full_name == header.gpu || gpu.name == header.gpu) spec.gpu = gpu.name;
  }
  validate(spec);
  return spec;
}

std::string default_output(const std::string& plan) {
  const std::string suffix = ".json";
  if (plan.size() > suffix.size() && plan.compare(plan.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return plan.substr(0, plan.size() - suffix.size()) + ".html";
  }
  return plan + ".html";
}

}  // namespace

void add_report_command(CLI::App& cmd, ReportCommandArgs& args) {
  cmd.add_option("plan", args.plan, "The plan file (docs/plan-format.md)")->required();
  cmd.add_option("-o,--output", args.output, "The HTML file to write (default: the plan's name with .html)");
  cmd.add_option("--measured", args.measured,
                 "Profiles written by `layerplan train --profile` (one per rank), shown next to the prediction");
  cmd.add_option("--cluster", args.cluster_file,
                 "TOML file with the [cluster] table the plan was made with (the plan file holds no bandwidths)");
  cmd.add_option("--model-path", args.model_path, "Folders searched for model files");
  add_word_option(&cmd, "--sync", args.sync, kSyncWords, "Weight synchronization the plan was priced with: ring or ps");
  cmd.add_option("--report-budget", args.scaling_budget_s,
                 "Seconds the search may take at each GPU count of the scaling chart")
      ->capture_default_str();
  cmd.add_option("--profile-db", args.profile_db,
                 "Measured per-layer kernel times the plan was made with (`layerplan plan --profile-db`)");
  cmd.add_flag("!--no-scaling", args.scaling, "Leave the scaling chart out (it plans the model at several GPU counts)");
}

int run_report_command(const ReportCommandArgs& args) {
  require(args.scaling_budget_s > 0,
          "--report-budget " + std::to_string(args.scaling_budget_s) + ": expected a positive number of seconds");
  const PlanFile file = read_plan_file(args.plan);
  const PlanHeader header = read_plan_header(file.text, "plan file '" + args.plan + "'");
  const ModelAndPlan loaded = model_and_plan(file, std::nullopt, args.model_path);
  std::vector<report::MeasuredProfile> measured;
  for (const std::string& path : args.measured) measured.push_back(report::read_measured_profile(path));
  const ClusterSpec spec = cluster_of(header, args);
  const DeviceGraph devices = build_device_graph(spec);
  const std::shared_ptr<const DeviceProfile> profile =
      load_device_profile(args.profile_db.value_or(""), devices.device(), spec.precision);
  const CostModel cost(loaded.graph, devices, SyncOptions{args.sync}, profile);
  Plan plan;
  plan.model = file.model;
  plan.batch = file.batch;
  plan.chosen = price_strategy(cost, file.strategy, loaded.plan);
  plan.baselines = {price_strategy(cost, "data parallel", data_parallel(loaded.graph, file.devices)),
                    price_strategy(cost, "model parallel", model_parallel(loaded.graph, file.devices)),
                    price_strategy(cost, "owt", one_weird_trick(loaded.graph, file.devices))};
  if (header.predicted_step_s > 0 && std::abs(plan.chosen.step_s() / header.predicted_step_s - 1) > 0.01) {
    std::cerr << "layerplan: warning: re-priced step " << plan.chosen.step_s() * 1e3 << " ms, the plan file says "
              << header.predicted_step_s * 1e3 << " ms: pass the --cluster file and --sync the plan was made with\n";
  }
  {
    PlanOptions priced_with;
    priced_with.sync = args.sync;
    record_idle_devices(plan, loaded.graph, devices, priced_with);
  }
  report::ReportInput input{plan, loaded.graph, devices, {}, {}, measured};
  if (args.scaling) {
    PlanOptions options;
    options.sync = args.sync;
    options.time_budget_s = args.scaling_budget_s;
    options.profile = profile;
    input.scaling = report::scaling_curve(cluster_scaling_cases(spec, file.model, file.batch / file.devices),
                                          report::scaling_gpu_counts(spec.gpus_per_node, file.devices), file.devices,
                                          options, &plan);
  }
  const std::string output = args.output.value_or(default_output(args.plan));
  write_file_safely(output, report::report_html(input), "--output");
  std::cout << "report written to " << output << "\n";
  return 0;
}

}  // namespace layerplan
