#include "spank_plugin/step_plan.h"

#include <cstdio>
#include <optional>

#include "common/error.h"
#include "job/job_plan.h"
#include "model/plan_file.h"
#include "model/plan_model.h"
#include "spank_plugin/plan_explain.h"

namespace layerplan::spank {

namespace {

StepPlan check_plan_file(const StepRequest& request, const NodeTopology& node, int nodes, const AdminConfig& config) {
  const std::string& path = *request.plan_file;
  StepPlan step;
  const std::string label = "--layerplan plan file '" + path + "'";
  step.json = read_plan_text(path, label);
  const PlanHeader header = read_plan_header(step.json, label);
  const int devices = nodes * node.gpu_count();
  const int64_t batch = request.batch_given ? *step_batch(request, devices) : header.batch;
  require(batch >= 1, "--layerplan plan file '" + path + "' has no batch: give --layerplan-batch");
  // The plan's model file, by its recorded path or beside the plan, and checked against it.
  const ModelGraph graph = plan_model(path, header, request.model_given ? std::optional(request.model) : std::nullopt,
                                      config.slurm.model_path, batch);
  try {
    configurations_from_json(step.json, graph, devices);
  } catch (const UsageError& e) {
    throw UsageError("--layerplan plan file '" + path + "' does not fit this job (" + graph.name() + ", batch " +
                     std::to_string(batch) + ", " + std::to_string(nodes) + " x " + std::to_string(node.gpu_count()) +
                     " GPUs): " + e.what());
  }
  step.mode = "file";
  step.step_ms = header.predicted_step_s * 1e3;
  char line[512];
  std::snprintf(line, sizeof line, "%s %s from plan file %s, batch %lld on %d x %d GPUs: %.1f ms/step predicted",
                graph.name().c_str(), header.strategy.empty() ? "plan" : header.strategy.c_str(), path.c_str(),
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
  job.batch = step_batch(request, nodes * node.gpu_count());
  job.nodes = nodes;
  job.time_budget_s = config.slurm.time_budget_s;
  job.min_gain = config.slurm.min_gain;
  const JobPlan planned = plan_job(job, node, config);
  StepPlan step;
  step.json = planned.json;
  step.mode = request.mode;
  step.step_ms = planned.plan.chosen.step_s() * 1e3;
  step.summary = planned.summary;
  step.warning = planned.warning;
  if (request.explain) {
    step.explain = explain_lines(planned);
    step.report_html = explain_report_html(planned);
  }
  return step;
}

}  // namespace layerplan::spank
