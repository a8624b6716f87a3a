#include "cli/plan_file.h"

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/error.h"
#include "job/job_plan.h"
#include "planner/plan_json.h"

namespace layerplan {

PlanFile read_plan_file(const std::optional<std::string>& path) {
  const char* env_plan = std::getenv("LAYERPLAN_PLAN");
  PlanFile file;
  file.path = path.value_or(env_plan ? env_plan : "");
  require(!file.path.empty(), "no plan: give --plan FILE or set LAYERPLAN_PLAN");
  std::ifstream in(file.path, std::ios::binary);
  require(in.is_open(), "plan file '" + file.path + "' cannot be read");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  file.text = buffer.str();
  const nlohmann::json doc = nlohmann::json::parse(file.text, nullptr, false);
  require(doc.is_object() && doc.value("format", "") == "layerplan-plan",
          "plan file '" + file.path + "' is not a layerplan plan file (docs/plan-format.md)");
  file.batch = doc.value("batch", int64_t{0});
  file.devices = doc.value("cluster", nlohmann::json::object()).value("devices", 0);
  require(file.batch >= 1 && file.devices >= 1, "plan file '" + file.path + "' names no batch or device count");
  file.model = doc.value("model", std::string());
  file.strategy = doc.value("strategy", std::string("?"));
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
