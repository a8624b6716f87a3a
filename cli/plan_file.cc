#include "cli/plan_file.h"

#include <cstdlib>

#include "common/error.h"
#include "job/job_plan.h"
#include "model/plan_file.h"

namespace layerplan {

PlanFile read_plan_file(const std::optional<std::string>& path) {
  const char* env_plan = std::getenv("LAYERPLAN_PLAN");
  PlanFile file;
  file.path = path.value_or(env_plan ? env_plan : "");
  require(!file.path.empty(), "no plan: give --plan FILE or set LAYERPLAN_PLAN");
  const std::string label = "plan file '" + file.path + "'";
  file.text = read_plan_text(file.path, label);
  const PlanHeader header = read_plan_header(file.text, label);
  require(header.batch >= 1 && header.devices >= 1, label + " names no batch or device count");
  file.batch = header.batch;
  file.devices = header.devices;
  file.model = header.model;
  file.strategy = header.strategy.empty() ? "?" : header.strategy;
  return file;
}

ModelAndPlan model_and_plan(const PlanFile& file, const std::optional<std::string>& model,
                            const std::vector<std::string>& model_path) {
  JobRequest request;
  request.model = model.value_or(file.model);
  request.model_path = model_path;
  ModelGraph graph = resolve_model(request, file.batch);
  require(graph.name() == file.model,
          "plan file '" + file.path + "' is for model '" + file.model + "', not '" + graph.name() + "'");
  std::vector<Configuration> plan = configurations_from_json(file.text, graph, file.devices);
  return {std::move(graph), std::move(plan)};
}

}  // namespace layerplan
