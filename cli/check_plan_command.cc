#include "cli/check_plan_command.h"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/error.h"
#include "job/job_plan.h"
#include "planner/plan_json.h"

namespace layerplan {

CLI::App* add_check_plan_command(CLI::App& app, CheckPlanArgs& args) {
  CLI::App* sub = app.add_subcommand("check-plan", "Read a plan file back and check it against a model and GPU count");
  sub->add_option("file", args.file, "The plan file (docs/plan-format.md)")->required();
  sub->add_option("--model", args.model, "Zoo model or model file the plan must be for (default: the file's)");
  sub->add_option("--batch", args.batch, "Global batch the plan must be for (default: the file's)");
  sub->add_option("--gpus", args.gpus, "Total GPUs the plan must be for (default: the file's)");
  sub->add_option("--model-path", args.model_path, "Folders searched for model files");
  return sub;
}

int run_check_plan_command(const CheckPlanArgs& args) {
  std::ifstream in(args.file, std::ios::binary);
  require(in.is_open(), "plan file '" + args.file + "' cannot be read");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  require(doc.is_object() && doc.value("format", "") == "layerplan-plan",
          "plan file '" + args.file + "' is not a layerplan plan file (docs/plan-format.md)");
  const nlohmann::json cluster = doc.value("cluster", nlohmann::json::object());
  JobRequest request;
  request.model = args.model.value_or(doc.value("model", std::string()));
  request.model_path = args.model_path;
  const int64_t batch = args.batch.value_or(doc.value("batch", int64_t{0}));
  require(batch >= 1, "plan file '" + args.file + "' names no batch: give --batch");
  const int gpus = args.gpus.value_or(cluster.value("devices", 0));
  require(gpus >= 1, "--gpus " + std::to_string(gpus) + ": expected 1 or more");
  const ModelGraph graph = resolve_model(request, batch);
  const std::vector<Configuration> configs = configurations_from_json(text, graph, gpus);
  std::printf("%s: a valid plan: %s, batch %lld, %s on %d GPUs (%d x %d %s), %zu layers\n", args.file.c_str(),
              graph.name().c_str(), static_cast<long long>(batch), doc.value("strategy", std::string("?")).c_str(),
              gpus, cluster.value("nodes", 0), cluster.value("gpus_per_node", 0),
              cluster.value("gpu", std::string("?")).c_str(), configs.size());
  return 0;
}

}  // namespace layerplan
