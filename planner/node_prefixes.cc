#include "planner/node_prefixes.h"

#include <numeric>

#include "common/error.h"
#include "planner/memory_fit.h"

namespace layerplan {

namespace {

// `configs` with their devices moved to a job of only the nodes listed in `kept` (ascending),
// renumbered in that order.
std::vector<Configuration> on_kept_nodes(std::vector<Configuration> configs, const std::vector<int>& kept,
                                         int gpus_per_node) {
  std::vector<int> new_node(static_cast<size_t>(kept.back() + 1), -1);
  for (size_t i = 0; i < kept.size(); ++i) new_node[static_cast<size_t>(kept[i])] = static_cast<int>(i);
  for (Configuration& c : configs) {
    for (int& d : c.devices) d = new_node[static_cast<size_t>(d / gpus_per_node)] * gpus_per_node + d % gpus_per_node;
  }
  return configs;
}

bool same_configurations(const StrategyCost& a, const std::vector<Configuration>& b) {
  if (a.layers.size() != b.size()) return false;
  for (size_t l = 0; l < b.size(); ++l) {
    if (!(a.layers[l].config == b[l])) return false;
  }
  return true;
}

// The plan make_plan() chooses on the first `nodes` nodes, priced on the whole job; nothing
// when it is data parallelism there, a candidate already in `out` (a search on two nodes may
// use one), or no plan there fits.
void add_searched_prefix(std::vector<StrategyCost>& out, const ModelGraph& graph, const DeviceGraph& prefix,
                         const CostModel& full_model, PlanOptions options) {
  options.node_prefixes = false;
  options.refine_timeline = false;
  Plan plan;
  try {
    plan = make_plan(graph, prefix, options);
  } catch (const UsageError&) {
    return;  // nothing fits on these nodes
  }
  if (plan.chosen.layers.empty() || equals_data_parallel(plan.chosen, prefix.device_count())) return;
  std::vector<Configuration> configs = configurations_of(plan.chosen);
  for (const StrategyCost& c : out) {
    if (same_configurations(c, configs)) return;
  }
  out.push_back(price_strategy(full_model,
                               plan.chosen.name + " on " + nodes_text(prefix.nodes(), prefix.gpus_per_node()), configs,
                               options.memory));
}

}  // namespace

DeviceGraph first_nodes(const DeviceGraph& devices, int nodes) {
  const int g = devices.gpus_per_node();
  std::vector<Link> intra;
  intra.reserve(static_cast<size_t>(g) * static_cast<size_t>(g));
  for (int a = 0; a < g; ++a) {
    for (int b = 0; b < g; ++b) intra.push_back(devices.intra_link(a, b));
  }
  return DeviceGraph(nodes, g, devices.device(), std::move(intra), devices.network());
}

std::vector<int> prefix_node_counts(int64_t batch, const DeviceGraph& devices) {
  std::vector<int> out;
  for (int k = 1; k < devices.nodes(); k *= 2) {
    if (devices.nodes() % k == 0 && batch % (int64_t{k} * devices.gpus_per_node()) == 0) out.push_back(k);
  }
  return out;
}

std::string nodes_text(int nodes, int gpus_per_node) {
  const int gpus = nodes * gpus_per_node;
  return std::to_string(nodes) + (nodes == 1 ? " node (" : " nodes (") + std::to_string(gpus) +
         (gpus == 1 ? " GPU)" : " GPUs)");
}

std::vector<StrategyCost> node_prefix_candidates(const ModelGraph& graph, const DeviceGraph& devices,
                                                 const CostModel& full_model, const PlanOptions& options,
                                                 double beat_s) {
  std::vector<StrategyCost> out;
  if (graph.size() == 0) return out;
  for (int k : prefix_node_counts(graph.layer(0).output.n(), devices)) {
    const DeviceGraph prefix = first_nodes(devices, k);
    const std::vector<Configuration> data = data_parallel(graph, prefix.device_count());
    // Its compute alone is a lower bound on its step: past `beat_s`, pricing its moves and
    // all-reduces (the costly part on large jobs) cannot make it a choice.
    double compute_s = 0;
    for (const Layer& l : graph.layers()) compute_s += full_model.compute_time(l, data[static_cast<size_t>(l.id)]);
    if (compute_s < beat_s) {
      out.push_back(price_strategy(full_model, "data parallel on " + nodes_text(k, devices.gpus_per_node()), data,
                                   options.memory));
    }
    if (prefix.device_count() <= kMaxSearchedPrefixDevices) {
      add_searched_prefix(out, graph, prefix, full_model, options);
    }
  }
  return out;
}

IdleDevices idle_devices_of(const StrategyCost& strategy, const ModelGraph& graph, const DeviceGraph& devices,
                            const PlanOptions& options) {
  IdleDevices out;
  out.job_devices = devices.device_count();
  out.job_nodes = devices.nodes();
  out.used_nodes = out.job_nodes;
  out.used_nodes_step_s = strategy.step_s();
  const std::vector<Configuration> configs = configurations_of(strategy);
  const std::vector<int> used = devices_used(configs);
  if (used.empty()) return out;
  out.idle_devices = out.job_devices - static_cast<int>(used.size());
  std::vector<int> nodes;
  for (int d : used) {
    if (nodes.empty() || nodes.back() != devices.node_of(d)) nodes.push_back(devices.node_of(d));
  }
  out.used_nodes = static_cast<int>(nodes.size());
  if (out.used_nodes == out.job_nodes) return out;
  const DeviceGraph kept = first_nodes(devices, out.used_nodes);
  const CostModel model(graph, kept, options.sync_options(), options.profile);
  out.used_nodes_step_s =
      price_strategy(model, strategy.name, on_kept_nodes(configs, nodes, devices.gpus_per_node()), options.memory)
          .step_s();
  return out;
}

void record_idle_devices(Plan& plan, const ModelGraph& graph, const DeviceGraph& devices, const PlanOptions& options) {
  const IdleDevices idle = idle_devices_of(plan.chosen, graph, devices, options);
  plan.job_devices = idle.job_devices;
  plan.idle_devices = idle.idle_devices;
  plan.job_nodes = idle.job_nodes;
  plan.used_nodes = idle.used_nodes;
  plan.used_nodes_step_s = idle.used_nodes_step_s;
}

bool equals_data_parallel(const StrategyCost& strategy, int device_count) {
  if (strategy.layers.empty()) return false;
  Configuration dp;
  dp.degrees.d[0] = device_count;
  dp.devices.resize(static_cast<size_t>(device_count));
  std::iota(dp.devices.begin(), dp.devices.end(), 0);
  for (const LayerCost& row : strategy.layers) {
    if (!(row.config == dp)) return false;
  }
  return true;
}

bool label_data_parallel(StrategyCost& strategy, const DeviceGraph& devices) {
  const int used = static_cast<int>(devices_used(configurations_of(strategy)).size());
  if (used == 0 || !equals_data_parallel(strategy, used)) return false;
  const int g = devices.gpus_per_node();
  if (used == devices.device_count()) {
    if (strategy.name != "data parallel") strategy.name = kDataParallelEveryLayer;
  } else if (used % g == 0) {
    strategy.name = "data parallel on " + nodes_text(used / g, g);
  } else {
    strategy.name = "data parallel on " + std::to_string(used) + (used == 1 ? " GPU" : " GPUs");
  }
  return true;
}

MarginChoice choose_with_margin(const std::vector<const StrategyCost*>& candidates, const StrategyCost& data_parallel,
                                double min_gain, int64_t usable_memory_bytes) {
  MarginChoice out;
  for (const StrategyCost* c : candidates) {
    if (fits_memory(*c, usable_memory_bytes) && (out.chosen == nullptr || c->step_s() < out.chosen->step_s())) {
      out.chosen = c;
    }
  }
  if (!fits_memory(data_parallel, usable_memory_bytes)) return out;
  const StrategyCost* fastest = out.chosen;
  if (fastest != nullptr && fastest->step_s() < (1.0 - min_gain) * data_parallel.step_s()) return out;
  out.chosen = &data_parallel;
  // Faster, though not by the margin.
  if (fastest != nullptr && fastest->step_s() < data_parallel.step_s()) {
    out.set_aside_name = fastest->name;
    out.set_aside_step_s = fastest->step_s();
  }
  return out;
}

}  // namespace layerplan
