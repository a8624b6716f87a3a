#include "planner/planner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "common/error.h"

namespace layerplan {

namespace {

using Clock = std::chrono::steady_clock;

Configuration on_all_devices(Degrees degrees) {
  Configuration c{degrees, std::vector<int>(static_cast<size_t>(degrees.product()))};
  std::iota(c.devices.begin(), c.devices.end(), 0);
  return c;
}

Configuration sample_split(int device_count) {
  Degrees d;
  d.d[0] = device_count;
  return on_all_devices(d);
}

// Channel split on all devices: the largest channel degree that divides both the channels
// and the device count, i.e. gcd(channels, devices), samples for the rest; samples only
// where the kind cannot split channels. On 12 GPUs a 1000-class layer is c4 n3 and a
// 64-channel conv c4 n3; a layer with 7 channels is n12. For powers of two this is the
// largest power of two <= the device count that divides the channels.
Configuration channel_split(const Layer& layer, int device_count) {
  Degrees d;
  if (splittable_dims(layer.kind)[1]) {
    d.d[1] = static_cast<int>(std::gcd(layer.output.c(), static_cast<int64_t>(device_count)));
  }
  d.d[0] = device_count / d.d[1];
  return on_all_devices(d);
}

// Element-wise layers that take their producer's configuration: a ReLU, batch-norm or
// dropout whose producer feeds nothing else, when the producer's search node (`head`, the
// first layer of its chain) can split every dimension the element-wise layer could. This
// is a restriction of the space (docs/planner.md): it removes re-partitioning between a
// layer and its activation, which no plan of the zoo models gains from at 4-16 GPUs. Every
// baseline satisfies it, so the layer-wise optimum is never worse than a baseline.
bool joins_producer(const ModelGraph& graph, const Layer& layer, const Layer& head) {
  const bool elementwise = layer.kind == LayerKind::kRelu || layer.kind == LayerKind::kBatchNorm ||
                           layer.kind == LayerKind::kDropout;
  if (!elementwise || layer.inputs.size() != 1) return false;
  const Layer& producer = graph.layer(layer.inputs[0]);
  if (producer.kind == LayerKind::kInput || graph.consumers(producer.id).size() != 1) return false;
  const auto head_dims = splittable_dims(head.kind);
  for (int d = 0; d < kNumDims; ++d) {
    if (layer.output[d] > 1 && !head_dims[static_cast<size_t>(d)]) return false;
  }
  return true;
}

// What a layer's costs depend on besides its configuration: kind, window, bias, and
// the shapes it reads and writes. Layers with equal signatures have equal cost tables.
std::string layer_signature(const ModelGraph& graph, const Layer& l) {
  std::string key(kind_name(l.kind));
  const Window& w = l.window;
  for (int v : {w.kernel_h, w.kernel_w, w.stride_h, w.stride_w, w.pad_h, w.pad_w, int{l.has_bias}}) {
    key += "," + std::to_string(v);
  }
  key += ">" + l.output.str();
  for (int in : l.inputs) key += "<" + graph.layer(in).output.str();
  return key;
}

// What a unit's configuration list depends on: its first layer's splittable dimensions and shape.
std::string space_signature(const Layer& head) {
  std::string key = head.output.str() + ":";
  for (bool split : splittable_dims(head.kind)) key += split ? '1' : '0';
  return key;
}

}  // namespace

const StrategyCost& Plan::best_baseline() const {
  return *std::min_element(baselines.begin(), baselines.end(),
                           [](const StrategyCost& a, const StrategyCost& b) { return a.step_s() < b.step_s(); });
}

std::vector<Configuration> data_parallel(const ModelGraph& graph, int device_count) {
  return std::vector<Configuration>(static_cast<size_t>(graph.size()), sample_split(device_count));
}

std::vector<Configuration> model_parallel(const ModelGraph& graph, int device_count) {
  std::vector<Configuration> out;
  for (const Layer& l : graph.layers()) out.push_back(channel_split(l, device_count));
  return out;
}

std::vector<Configuration> one_weird_trick(const ModelGraph& graph, int device_count) {
  std::vector<Configuration> out;
  bool classifier = false;
  for (const Layer& l : graph.layers()) {
    classifier |= l.kind == LayerKind::kFullyConnected;
    out.push_back(classifier ? channel_split(l, device_count) : sample_split(device_count));
  }
  return out;
}

StrategyCost price_strategy(const CostModel& model, std::string name,
                            const std::vector<Configuration>& configs) {
  const ModelGraph& graph = model.graph();
  StrategyCost s;
  s.name = std::move(name);
  s.layers.resize(static_cast<size_t>(graph.size()));
  for (const Layer& l : graph.layers()) {
    LayerCost& row = s.layers[static_cast<size_t>(l.id)];
    row.config = configs.at(static_cast<size_t>(l.id));
    row.compute_s = model.compute_time(l, row.config);
    const SyncCost sync = model.sync(l, row.config);
    row.sync_s = sync.time_s;
    row.sync_bytes = sync.bytes;
    for (int slot = 0; slot < static_cast<int>(l.inputs.size()); ++slot) {
      const TransferCost t =
          model.transfer(l, slot, configs.at(static_cast<size_t>(l.inputs[static_cast<size_t>(slot)])), row.config);
      row.transfer_s += t.time_s;
      row.transfer_bytes += t.bytes;
    }
    s.compute_s += row.compute_s;
    s.transfer_s += row.transfer_s;
    s.sync_s += row.sync_s;
    s.transfer_bytes += row.transfer_bytes;
    s.sync_bytes += row.sync_bytes;
  }
  return s;
}

Plan make_plan(const ModelGraph& graph, const DeviceGraph& devices, const PlanOptions& options) {
  const auto start = Clock::now();
  std::optional<Clock::time_point> deadline;
  if (options.time_budget_s) {
    // Budgets beyond a year mean "no limit"; converting them to clock ticks would overflow.
    constexpr double kYear = 365.0 * 24 * 3600;
    if (*options.time_budget_s < kYear) {
      deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*options.time_budget_s));
    }
  }
  const int n_devices = devices.device_count();
  Plan plan;
  plan.model = graph.name();
  require(graph.size() > 0, "model " + graph.name() + " has no layers");
  plan.batch = graph.layer(0).output.n();
  require_job_shape(n_devices, devices.gpus_per_node());
  require(plan.batch % n_devices == 0,
          "batch " + std::to_string(plan.batch) + " cannot be split over " + std::to_string(n_devices) +
              " GPUs: expected a multiple of " + std::to_string(n_devices));

  // Search nodes ("units"): one per layer, except element-wise layers that join their producer.
  plan.unit_of_layer.assign(static_cast<size_t>(graph.size()), -1);
  std::vector<int> head;  // unit -> its first layer
  for (const Layer& l : graph.layers()) {
    const auto producer_unit = l.inputs.empty() ? -1 : plan.unit_of_layer[static_cast<size_t>(l.inputs[0])];
    if (options.fuse_elementwise && producer_unit >= 0 &&
        joins_producer(graph, l, graph.layer(head[static_cast<size_t>(producer_unit)]))) {
      plan.unit_of_layer[static_cast<size_t>(l.id)] = producer_unit;
    } else {
      plan.unit_of_layer[static_cast<size_t>(l.id)] = static_cast<int>(head.size());
      head.push_back(l.id);
    }
  }
  std::vector<std::vector<Configuration>> space;
  for (int h : head) {
    space.push_back(enumerate_configurations(graph.layer(h), n_devices, devices.gpus_per_node(), options.space));
  }
  for (const Layer& l : graph.layers()) {
    plan.space_sizes.push_back(static_cast<int>(space[static_cast<size_t>(plan.unit_of_layer[static_cast<size_t>(l.id)])].size()));
  }

  const CostModel model(graph, devices, options.sync);
  CostGraph costs;
  for (const auto& configs : space) costs.add_node(std::vector<double>(configs.size(), 0.0));
  std::vector<std::string> unit_key;
  for (int h : head) unit_key.push_back(space_signature(graph.layer(h)));
  std::unordered_map<std::string, std::vector<double>> memo;
  // The table under `key`, computed by fill(table) unless an equal one was computed already.
  auto table_for = [&](std::string key, size_t size, auto&& fill) -> std::vector<double> {
    if (!options.share_tables) key.clear();
    if (!key.empty()) {
      if (auto it = memo.find(key); it != memo.end()) return it->second;
    }
    std::vector<double> table(size);
    fill(table);
    if (!key.empty()) memo.emplace(std::move(key), table);
    return table;
  };
  bool out_of_time = false;
  for (const Layer& l : graph.layers()) {
    const auto u = static_cast<size_t>(plan.unit_of_layer[static_cast<size_t>(l.id)]);
    const std::string signature = layer_signature(graph, l);
    const std::vector<double> node = table_for("node " + signature + " " + unit_key[u], space[u].size(),
                                               [&](std::vector<double>& t) {
      for (size_t a = 0; a < space[u].size(); ++a) {
        t[a] = model.compute_time(l, space[u][a]) + model.sync(l, space[u][a]).time_s;
      }
    });
    for (size_t a = 0; a < space[u].size(); ++a) costs.node_cost[u][a] += node[a];
    if (head[u] != l.id) continue;  // fused members read their own unit's output
    for (int slot = 0; slot < static_cast<int>(l.inputs.size()); ++slot) {
      const auto v = static_cast<size_t>(plan.unit_of_layer[static_cast<size_t>(l.inputs[static_cast<size_t>(slot)])]);
      const std::string key = "edge " + signature + " " + std::to_string(slot) + " " + unit_key[v] + " " + unit_key[u];
      costs.add_edge(static_cast<int>(v), static_cast<int>(u),
                     table_for(key, space[v].size() * space[u].size(), [&](std::vector<double>& t) {
        for (size_t a = 0; a < space[v].size(); ++a) {
          for (size_t b = 0; b < space[u].size(); ++b) {
            t[a * space[u].size() + b] = model.transfer(l, slot, space[v][a], space[u][b]).time_s;
          }
        }
      }));
      if (deadline && Clock::now() > *deadline) out_of_time = true;
    }
    if (out_of_time) break;
  }
  plan.tables_s = std::chrono::duration<double>(Clock::now() - start).count();

  SearchResult result;
  if (!out_of_time) result = solve(costs, SearchOptions{deadline, options.naive_search});
  plan.search_s = std::chrono::duration<double>(Clock::now() - start).count();
  plan.search_stats = result.stats;

  plan.baselines.push_back(price_strategy(model, "data parallel", data_parallel(graph, n_devices)));
  plan.baselines.push_back(price_strategy(model, "model parallel", model_parallel(graph, n_devices)));
  plan.baselines.push_back(price_strategy(model, "owt", one_weird_trick(graph, n_devices)));

  if (out_of_time || result.timed_out) {
    plan.timed_out = true;
    plan.chosen = plan.best_baseline();
    std::ostringstream budget;
    budget << *options.time_budget_s;
    plan.warning = "the search did not finish within the time budget of " + budget.str() +
                   " s; using the best baseline (" + plan.chosen.name + ")";
    return plan;
  }
  std::vector<Configuration> chosen;
  for (const Layer& l : graph.layers()) {
    const auto u = static_cast<size_t>(plan.unit_of_layer[static_cast<size_t>(l.id)]);
    chosen.push_back(space[u][static_cast<size_t>(result.choice[u])]);
  }
  plan.chosen = price_strategy(model, "layer-wise", chosen);
  // The search's objective and the per-layer pricing are the same sum in another order.
  if (std::abs(plan.chosen.step_s() - result.cost) > 1e-9 * std::max(1.0, result.cost)) {
    throw std::logic_error("search cost " + std::to_string(result.cost) + " differs from priced plan " +
                           std::to_string(plan.chosen.step_s()));
  }
  return plan;
}

}  // namespace layerplan
