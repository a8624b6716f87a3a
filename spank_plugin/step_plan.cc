#include "spank_plugin/step_plan.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/error.h"
#include "job/job_plan.h"
#include "planner/plan_json.h"
#include "spank_plugin/plan_explain.h"

namespace layerplan::spank {

namespace {

constexpr std::streamsize kMaxPlanFileBytes = 64 << 20;

std::string read_plan_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  require(in.is_open(), "--layerplan plan file '" + path + "' cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  require(text.tellp() <= kMaxPlanFileBytes, "--layerplan plan file '" + path + "' is larger than 64 MiB");
  return text.str();
}

StepPlan check_plan_file(const StepRequest& request, const NodeTopology& node, int nodes,
                         const AdminConfig& config) {
  const std::string& path = *request.plan_file;
  StepPlan step;
  step.json = read_plan_file(path);
  const nlohmann::json doc = nlohmann::json::parse(step.json, nullptr, false);
  require(doc.is_object() && doc.value("format", "") == "layerplan-plan",
          "--layerplan plan file '" + path + "' is not a layerplan plan file (docs/plan-format.md)");
  JobRequest job;
  job.model = request.model_given ? request.model : doc.value("model", std::string());
  job.model_path = config.slurm.model_path;
  const int64_t batch = request.batch_given ? *request.batch : doc.value("batch", int64_t{0});
  require(batch >= 1, "--layerplan plan file '" + path + "' has no batch: give --layerplan-batch");
  const ModelGraph graph = resolve_model(job, batch);
  const int devices = nodes * node.gpu_count();
  try {
    configurations_from_json(step.json, graph, devices);
  } catch (const UsageError& e) {
    throw UsageError("--layerplan plan file '" + path + "' does not fit this job (" + graph.name() + ", batch " +
                     std::to_string(batch) + ", " + std::to_string(nodes) + " x " +
                     std::to_string(node.gpu_count()) + " GPUs): " + e.what());
  }
  step.mode = "file";
  double step_s = 0.0;
  if (doc.contains("predicted") && doc["predicted"].is_object()) step_s = doc["predicted"].value("step_s", 0.0);
  step.step_ms = step_s * 1e3;
  char line[512];
  std::snprintf(line, sizeof line, "%s %s from plan file %s, batch %lld on %d x %d GPUs: %.1f ms/step predicted",
                graph.name().c_str(), doc.value("strategy", std::string("plan")).c_str(), path.c_str(),
                static_cast<long long>(batch), nodes, node.gpu_count(), step.step_ms);
  step.summary = line;
  return step;
}

}  // namespace

NodeTopology discover_step_node(const AdminConfig& config, const GpuEnvironment& env) {
  require(!env.slurm_step_gpus.empty() || !env.slurm_job_gpus.empty() || !env.cuda_visible_devices.empty(),
          "the job has no GPUs on this node (SLURM_STEP_GPUS, SLURM_JOB_GPUS and CUDA_VISIBLE_DEVICES are unset): "
          "ask for them with --gpus-per-node=N");
  DiscoveryOptions options;
  options.topology_xml = config.slurm.topology_xml;
  options.env = env;
  return discover_node(options);
}

StepPlan plan_step(const StepRequest& request, const NodeTopology& node, int nodes, const AdminConfig& config) {
  require(!request.off, "plan_step called for a job with layerplan off");
  require(nodes >= 1, "node count " + std::to_string(nodes) + ": expected 1 or more");
  if (request.plan_file) return check_plan_file(request, node, nodes, config);
  JobRequest job;
  job.mode = parse_plan_mode(request.mode);
  job.model = request.model;
  job.model_path = config.slurm.model_path;
  job.batch = request.batch;
  job.nodes = nodes;
  job.time_budget_s = config.slurm.time_budget_s;
  const JobPlan planned = plan_job(job, node, config);
  StepPlan step;
  step.json = planned.json;
  step.mode = request.mode;
  step.step_ms = planned.plan.chosen.step_s() * 1e3;
  step.summary = planned.summary;
  step.warning = planned.warning;
  if (request.explain) step.explain = explain_lines(planned);
  return step;
}

}  // namespace layerplan::spank
