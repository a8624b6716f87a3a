#include "planner/plan_json.h"

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/version.h"
#include "model/graph_hash.h"
#include "planner/plan_notes.h"

namespace layerplan {

using nlohmann::json;

namespace {

json degrees_json(const Degrees& d) {
  json out = json::object();
  for (int dim = 0; dim < kNumDims; ++dim) out[std::string(1, kDimLetters[static_cast<size_t>(dim)])] = d[dim];
  return out;
}

// step_s is the step by the timeline; additive_step_s the search's objective, whose sync_s
// sums each layer's share of its buckets; bucket_sync_s sums the buckets' all-reduces and
// exposed_sync_s is what of them the backward pass does not hide.
json totals_json(const StrategyCost& s, int64_t batch) {
  json totals = {{"step_s", s.step_s()},
                 {"images_per_s", s.step_s() > 0 ? static_cast<double>(batch) / s.step_s() : 0.0},
                 {"additive_step_s", s.additive_s()},
                 {"compute_s", s.compute_s},
                 {"transfer_s", s.transfer_s},
                 {"sync_s", s.sync_s},
                 {"bucket_sync_s", s.timeline.sync_s},
                 {"exposed_sync_s", s.timeline.exposed_sync_s},
                 {"sync_all_reduces", s.timeline.sync_jobs},
                 {"transfer_bytes", s.transfer_bytes},
                 {"sync_bytes", s.sync_bytes}};
  json per_device = json::array();
  for (const DeviceMemory& d : s.memory.devices) per_device.push_back(d.peak);
  totals["peak_memory_bytes"] = s.memory.peak();
  totals["device_peak_memory_bytes"] = per_device;
  return totals;
}

// The model file the graph was read from; null for a built-in model.
json model_file_json(const ModelGraph& graph) {
  if (!graph.file()) return nullptr;
  const ModelFileOrigin& f = *graph.file();
  return {{"path", f.path}, {"size_bytes", f.size}, {"sha256", f.sha256}};
}

// The GPUs of the job the chosen strategy leaves idle (Plan::idle_devices), with the step on
// the nodes it uses; a plan whose fields were not filled counts the job's GPUs, none idle.
json devices_used_json(const Plan& plan, const DeviceGraph& devices) {
  const bool filled = plan.job_devices > 0;
  return {{"job_devices", filled ? plan.job_devices : devices.device_count()},
          {"idle_devices", filled ? plan.idle_devices : 0},
          {"job_nodes", filled ? plan.job_nodes : devices.nodes()},
          {"used_nodes", filled ? plan.used_nodes : devices.nodes()},
          {"used_nodes_step_s", filled ? plan.used_nodes_step_s : plan.chosen.step_s()},
          {"note", idle_devices_text(plan)}};
}

// The simplicity margin and the faster plan it set aside for data parallelism, if any.
json margin_json(const Plan& plan) {
  json set_aside = nullptr;
  if (!plan.set_aside_name.empty()) set_aside = {{"name", plan.set_aside_name}, {"step_s", plan.set_aside_step_s}};
  return {{"min_gain", plan.min_gain}, {"set_aside", set_aside}, {"note", set_aside_text(plan)}};
}

}  // namespace

std::string plan_to_json(const Plan& plan, const ModelGraph& graph, const DeviceGraph& devices,
                         const std::optional<RecordedInput>& admin_config) {
  json layers = json::array();
  for (const Layer& l : graph.layers()) {
    const LayerCost& row = plan.chosen.layers[static_cast<size_t>(l.id)];
    json inputs = json::array();
    for (int in : l.inputs) inputs.push_back(graph.layer(in).name);
    layers.push_back({{"id", l.id},
                      {"name", l.name},
                      {"kind", kind_name(l.kind)},
                      {"inputs", inputs},
                      {"output_shape", l.output.extent},
                      {"degrees", degrees_json(row.config.degrees)},
                      {"devices", row.config.devices},
                      {"predicted",
                       {{"compute_s", row.compute_s},
                        {"transfer_s", row.transfer_s},
                        {"sync_s", row.sync_s},
                        {"transfer_bytes", row.transfer_bytes},
                        {"sync_bytes", row.sync_bytes}}}});
  }
  json baselines = json::array();
  for (const StrategyCost& b : plan.baselines) {
    json entry = totals_json(b, plan.batch);
    entry["name"] = b.name;
    baselines.push_back(entry);
  }
  const Device& d = devices.device();
  json doc = {{"format", kPlanFormatName},
              {"version", kPlanFormatVersion},
              {"written_by", version_line()},
              {"model", plan.model},
              {"model_file", model_file_json(graph)},
              {"model_graph_sha256", graph_sha256(graph)},
              {"admin_config", admin_config ? json{{"path", admin_config->path},
                                                   {"size_bytes", admin_config->size},
                                                   {"sha256", admin_config->sha256}}
                                            : json(nullptr)},
              {"batch", plan.batch},
              {"cluster",
               {{"nodes", devices.nodes()},
                {"gpus_per_node", devices.gpus_per_node()},
                {"devices", devices.device_count()},
                {"gpu", d.model},
                {"memory_bytes", d.memory_bytes},
                {"memory_reserve_bytes", d.memory_reserve_bytes},
                {"description", devices.describe()}}},
              {"strategy", plan.chosen.name},
              {"devices_used", devices_used_json(plan, devices)},
              {"margin", margin_json(plan)},
              {"predicted", totals_json(plan.chosen, plan.batch)},
              {"layers", layers},
              {"baselines", baselines},
              // The search's plan, rated by the timeline like every candidate (null when the search fell back).
              {"layer_wise", plan.layer_wise.layers.empty() ? json(nullptr) : totals_json(plan.layer_wise, plan.batch)},
              {"search",
               {{"seconds", plan.search_s},
                {"timed_out", plan.timed_out},
                {"warning", plan.warning},
                {"note", plan.note},
                {"lower_bound_s", plan.lower_bound_s},
                {"proven_optimal", plan.proven_optimal},
                {"bound_note", lower_bound_text(plan)},
                {"node_eliminations", plan.search_stats.node_eliminations},
                {"edge_eliminations", plan.search_stats.edge_eliminations}}}};
  return doc.dump(2) + "\n";
}

}  // namespace layerplan
