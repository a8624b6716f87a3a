#include "job/job_plan.h"

#include <cstdio>
#include <filesystem>
#include <optional>

#include "common/error.h"
#include "common/limits.h"
#include "job/device_profile.h"
#include "model/content_hash.h"
#include "model/model_file.h"
#include "model/zoo.h"
#include "planner/config_space.h"
#include "planner/cost_model.h"
#include "planner/node_prefixes.h"
#include "planner/plan_json.h"
#include "planner/plan_notes.h"
#include "topology/topology_device_graph.h"

namespace layerplan {

PlanMode parse_plan_mode(const std::string& text) {
  if (text == "auto") return PlanMode::kAuto;
  if (text == "layerwise") return PlanMode::kLayerwise;
  if (text == "data") return PlanMode::kData;
  if (text == "model") return PlanMode::kModel;
  if (text == "owt") return PlanMode::kOwt;
  throw UsageError("mode '" + text + "': expected auto, layerwise, data, model or owt");
}

const char* plan_mode_name(PlanMode mode) {
  switch (mode) {
    case PlanMode::kAuto:
      return "auto";
    case PlanMode::kLayerwise:
      return "layerwise";
    case PlanMode::kData:
      return "data";
    case PlanMode::kModel:
      return "model";
    case PlanMode::kOwt:
      return "owt";
  }
  return "auto";
}

namespace {

const StrategyCost& baseline_named(const Plan& plan, const std::string& name) {
  for (const StrategyCost& b : plan.baselines) {
    if (b.name == name) return b;
  }
  throw std::logic_error("the planner priced no '" + name + "' baseline");
}

}  // namespace

std::string searched_plan_note(const Plan& plan) {
  // The fastest other candidate: a baseline or a mix of the searched plan (planner.h).
  const StrategyCost* faster = &plan.best_baseline();
  for (const StrategyCost& m : plan.mixed) {
    if (m.step_s() < faster->step_s()) faster = &m;
  }
  const StrategyCost& best = *faster;
  char text[256];
  std::snprintf(text, sizeof text,
                "the searched layer-wise plan (%.4g ms by the timeline) is reported as asked; %s is faster by the "
                "timeline (%.4g ms)",
                plan.layer_wise.step_s() * 1e3, best.name.c_str(), best.step_s() * 1e3);
  return text;
}

// A search that ran out of time or memory falls back to data parallelism, the strategy every
// framework runs, rather than to a less familiar baseline.
StrategyCost strategy_for_mode(const Plan& plan, PlanMode mode, std::string& warning) {
  switch (mode) {
    case PlanMode::kData:
      return baseline_named(plan, "data parallel");
    case PlanMode::kModel:
      return baseline_named(plan, "model parallel");
    case PlanMode::kOwt:
      return baseline_named(plan, "owt");
    case PlanMode::kLayerwise:
    case PlanMode::kAuto:
      break;
  }
  if (plan.fell_back()) {
    const StrategyCost& data = baseline_named(plan, "data parallel");
    // make_plan() chose the fastest baseline that fits when data parallelism does not.
    if (data.memory.peak() > plan.usable_memory_bytes) {
      warning = plan.warning;
      return plan.chosen;
    }
    warning = plan.warning.substr(0, plan.warning.find(';')) + "; using data parallelism";
    return data;
  }
  warning = plan.warning;  // the layer-wise plan did not fit in GPU memory, or is empty
  // The searched plan as asked, even where the timeline rates a baseline faster (auto takes
  // that), unless it does not fit in GPU memory.
  if (mode == PlanMode::kLayerwise) {
    const bool fits = !plan.layer_wise.layers.empty() && plan.layer_wise.memory.peak() <= plan.usable_memory_bytes;
    return fits ? plan.layer_wise : plan.chosen;
  }
  // auto: what make_plan() chose, under the simplicity margin (a faster plan it set aside
  // for data parallelism stays aside).
  return plan.chosen;
}

void choose_for_mode(Plan& plan, PlanMode mode, const ModelGraph& graph, const DeviceGraph& devices,
                     const PlanOptions& options, std::string& warning) {
  plan.chosen = strategy_for_mode(plan, mode, warning);
  if (mode != PlanMode::kAuto && mode != PlanMode::kLayerwise) plan.note.clear();
  if (mode == PlanMode::kLayerwise && !plan.note.empty()) plan.note = searched_plan_note(plan);
  if (mode != PlanMode::kAuto) plan.set_aside_name.clear();  // the margin chose nothing
  plan.min_gain = options.min_gain;
  record_idle_devices(plan, graph, devices, options);
}

namespace {

bool is_baseline_mode(PlanMode mode) {
  return mode == PlanMode::kData || mode == PlanMode::kModel || mode == PlanMode::kOwt;
}

// The plan of a mode that names a baseline: the three baselines priced by the cost model,
// with no configuration space, cost tables or search (for ResNet-50 on 128 x 8 GPUs the
// search alone takes seconds; the baselines, milliseconds). Checks what make_plan() checks.
Plan baselines_only(const ModelGraph& graph, const DeviceGraph& devices, const PlanOptions& options) {
  require_plannable(graph, devices);
  const int n_devices = devices.device_count();
  const int64_t batch = graph.layer(0).output.n();
  const CostModel model(graph, devices, options.sync_options(), options.profile);
  Plan plan;
  plan.model = graph.name();
  plan.batch = batch;
  plan.usable_memory_bytes = usable_memory_bytes(devices.device());
  plan.overlap = options.overlap;
  plan.min_gain = options.min_gain;
  plan.space_sizes.assign(static_cast<size_t>(graph.size()), 0);  // nothing searched
  plan.baselines.push_back(price_strategy(model, "data parallel", data_parallel(graph, n_devices)));
  plan.baselines.push_back(price_strategy(model, "model parallel", model_parallel(graph, n_devices)));
  plan.baselines.push_back(price_strategy(model, "owt", one_weird_trick(graph, n_devices)));
  plan.chosen = plan.baselines.front();
  return plan;
}

}  // namespace

std::string summary_line(const JobPlan& job, int nodes) {
  const Plan& plan = job.plan;
  const StrategyCost& chosen = plan.chosen;
  const StrategyCost& data = baseline_named(plan, "data parallel");
  char line[768];
  const int n = std::snprintf(line, sizeof line,
                              "%s %s on %d node%s x %d %s, batch %lld: %.1f ms/step predicted (data parallel %.1f ms)",
                              job.graph.name().c_str(), chosen.name.c_str(), nodes, nodes == 1 ? "" : "s",
                              job.devices.gpus_per_node(), job.devices.device().model.c_str(),
                              static_cast<long long>(plan.batch), chosen.step_s() * 1e3, data.step_s() * 1e3);
  if (plan.idle_devices > 0 && n > 0 && static_cast<size_t>(n) < sizeof line) {
    std::snprintf(line + n, sizeof line - static_cast<size_t>(n), "; %s (%d of %d nodes: %.1f ms/step there)",
                  idle_devices_short_text(plan).c_str(), plan.used_nodes, plan.job_nodes, plan.used_nodes_step_s * 1e3);
  }
  return line;
}

namespace {

// What the plan file records of the admin config: its absolute path and the digest of the
// bytes that were read; none for the built-in defaults.
std::optional<RecordedInput> recorded_admin_config(const AdminConfig& config) {
  if (config.path.empty()) return std::nullopt;
  return RecordedInput{std::filesystem::absolute(config.path).lexically_normal().string(),
                       static_cast<int64_t>(config.text.size()), sha256_hex(config.text)};
}

}  // namespace

JobPlan plan_job(const JobRequest& request, const NodeTopology& node, const AdminConfig& config) {
  require(request.nodes >= 1 && request.nodes <= kMaxDevices,
          "nodes = " + std::to_string(request.nodes) + ": expected 1 to " + std::to_string(kMaxDevices));
  const NodeTopology priced = price_links(node, config);
  DeviceGraph devices = build_device_graph(priced, request.nodes, config);
  const int64_t batch = request.batch.value_or(int64_t{32} * devices.device_count());
  require(batch >= 1, "batch " + std::to_string(batch) + ": expected 1 or more");
  ModelGraph graph = resolve_model(request.model, request.model_path, batch);
  PlanOptions options;
  options.time_budget_s = request.time_budget_s;
  options.overlap = request.overlap;
  options.profile =
      load_device_profile(request.profile_db.value_or(config.node.profile_db), devices.device(), config.node.precision);
  options.min_gain = request.min_gain;
  Plan plan =
      is_baseline_mode(request.mode) ? baselines_only(graph, devices, options) : make_plan(graph, devices, options);
  JobPlan job{std::move(graph), std::move(devices), std::move(plan), "", "", "", nullptr, ""};
  choose_for_mode(job.plan, request.mode, job.graph, job.devices, options, job.warning);
  job.json = plan_to_json(job.plan, job.graph, job.devices, recorded_admin_config(config));
  job.summary = summary_line(job, request.nodes);
  job.profile = options.profile;
  if (job.profile) job.profile_note = profile_note(job.graph, job.plan.chosen, *job.profile);
  return job;
}

}  // namespace layerplan
