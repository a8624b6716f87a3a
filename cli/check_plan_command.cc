#include "cli/check_plan_command.h"

#include <cstdio>

#include "common/error.h"
#include "model/plan_file.h"
#include "model/plan_model.h"

namespace layerplan {

void add_check_plan_command(CLI::App& cmd, CheckPlanArgs& args) {
  cmd.add_option("file", args.file, "The plan file (docs/plan-format.md)")->required();
  cmd.add_option("--model", args.model, "Zoo model or model file the plan must be for (default: the file's)");
  cmd.add_option("--batch", args.batch, "Global batch the plan must be for (default: the file's)");
  cmd.add_option("--gpus", args.gpus, "Total GPUs the plan must be for (default: the file's)");
  cmd.add_option("--model-path", args.model_path, "Folders searched for model files");
}

int run_check_plan_command(const CheckPlanArgs& args) {
  const std::string label = "plan file '" + args.file + "'";
  const std::string text = read_plan_text(args.file, label);
  const PlanHeader header = read_plan_header(text, label);
  const int64_t batch = args.batch.value_or(header.batch);
  require(batch >= 1, label + " names no batch: give --batch");
  const int gpus = args.gpus.value_or(header.devices);
  require(gpus >= 1, "--gpus " + std::to_string(gpus) + ": expected 1 or more");
  const ModelGraph graph = plan_model(args.file, header, args.model, args.model_path, batch);
  const std::vector<Configuration> configs = configurations_from_json(text, graph, gpus);
  std::printf("%s: a valid plan: %s, batch %lld, %s on %d GPUs (%d x %d %s), %zu layers\n", args.file.c_str(),
              graph.name().c_str(), static_cast<long long>(batch),
              header.strategy.empty() ? "?" : header.strategy.c_str(), gpus, header.nodes, header.gpus_per_node,
              header.gpu.empty() ? "?" : header.gpu.c_str(), configs.size());
  return 0;
}

}  // namespace layerplan
