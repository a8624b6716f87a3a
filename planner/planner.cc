#include "planner/planner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "common/error.h"
#include "planner/cost_tables.h"

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

// The instant the budget runs out, if it is set and under a year (longer budgets mean
// "no limit"; converting them to clock ticks would overflow).
std::optional<Clock::time_point> deadline_of(Clock::time_point start, std::optional<double> budget_s) {
  constexpr double kYear = 365.0 * 24 * 3600;
  if (!budget_s || *budget_s >= kYear) return std::nullopt;
  return start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*budget_s));
}

void require_plannable(const ModelGraph& graph, const DeviceGraph& devices) {
  const int n_devices = devices.device_count();
  require(graph.size() > 0, "model " + graph.name() + " has no layers");
  const int64_t batch = graph.layer(0).output.n();
  require_job_shape(n_devices, devices.gpus_per_node());
  require(batch % n_devices == 0, "batch " + std::to_string(batch) + " cannot be split over " +
                                      std::to_string(n_devices) + " GPUs: expected a multiple of " +
                                      std::to_string(n_devices));
}

// The best baseline in place of the layer-wise plan, when the search ran out of time.
void fall_back_to_baseline(Plan& plan, double budget_s) {
  plan.timed_out = true;
  plan.chosen = plan.best_baseline();
  std::ostringstream budget;
  budget << budget_s;
  plan.warning = "the search did not finish within the time budget of " + budget.str() +
                 " s; using the best baseline (" + plan.chosen.name + ")";
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
  out.reserve(static_cast<size_t>(graph.size()));
  for (const Layer& l : graph.layers()) out.push_back(channel_split(l, device_count));
  return out;
}

std::vector<Configuration> one_weird_trick(const ModelGraph& graph, int device_count) {
  std::vector<Configuration> out;
  out.reserve(static_cast<size_t>(graph.size()));
  bool classifier = false;
  for (const Layer& l : graph.layers()) {
    classifier |= l.kind == LayerKind::kFullyConnected;
    out.push_back(classifier ? channel_split(l, device_count) : sample_split(device_count));
  }
  return out;
}

StrategyCost price_strategy(const CostModel& model, std::string name, const std::vector<Configuration>& configs) {
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
  const std::optional<Clock::time_point> deadline = deadline_of(start, options.time_budget_s);
  require_plannable(graph, devices);
  const int n_devices = devices.device_count();
  Plan plan;
  plan.model = graph.name();
  plan.batch = graph.layer(0).output.n();

  const SearchUnits units = make_search_units(graph, devices, options.space, options.fuse_elementwise);
  plan.unit_of_layer = units.unit_of_layer;
  plan.space_sizes.reserve(static_cast<size_t>(graph.size()));
  for (int u : units.unit_of_layer)
    plan.space_sizes.push_back(static_cast<int>(units.space[static_cast<size_t>(u)].size()));

  const CostModel model(graph, devices, options.sync);
  const std::optional<CostGraph> costs = build_cost_graph(model, units, options.share_tables, deadline);
  plan.tables_s = std::chrono::duration<double>(Clock::now() - start).count();
  SearchResult result;
  if (costs) result = solve(*costs, SearchOptions{deadline, options.naive_search});
  plan.search_s = std::chrono::duration<double>(Clock::now() - start).count();
  plan.search_stats = result.stats;

  plan.baselines.push_back(price_strategy(model, "data parallel", data_parallel(graph, n_devices)));
  plan.baselines.push_back(price_strategy(model, "model parallel", model_parallel(graph, n_devices)));
  plan.baselines.push_back(price_strategy(model, "owt", one_weird_trick(graph, n_devices)));
  if (!costs || result.timed_out) {
    fall_back_to_baseline(plan, *options.time_budget_s);
    return plan;
  }
  std::vector<Configuration> chosen;
  chosen.reserve(units.unit_of_layer.size());
  for (int u : units.unit_of_layer) {
    chosen.push_back(units.space[static_cast<size_t>(u)][static_cast<size_t>(result.choice[static_cast<size_t>(u)])]);
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
