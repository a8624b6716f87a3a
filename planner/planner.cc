#include "planner/planner.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "common/error.h"
#include "common/limits.h"
#include "planner/cost_tables.h"
#include "planner/deadline.h"

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

// The best baseline in place of the layer-wise plan, and why.
void fall_back_to_baseline(Plan& plan, const std::string& reason) {
  plan.chosen = plan.best_baseline();
  plan.warning = reason + "; using the best baseline (" + plan.chosen.name + ")";
}

std::string budget_reason(double budget_s) {
  std::ostringstream budget;
  budget << budget_s;
  return "the search did not finish within the time budget of " + budget.str() + " s";
}

// `estimated`: the estimate made before the search, above the limit; or below it when the
// search's own tables grew past it.
std::string memory_reason(int64_t estimated, int64_t limit) {
  std::ostringstream text;
  if (estimated > limit) {
    text << "the search's configurations and cost tables would take about " << (estimated >> 20)
         << " MiB, more than the planner's limit of " << (limit >> 20) << " MiB";
  } else {
    text << "the search's tables grew past the planner's limit of " << (limit >> 20) << " MiB";
  }
  return text.str();
}

// What the layer-wise search produced: one configuration index per unit, or why it has none.
struct SearchOutcome {
  SearchUnits units;
  SearchResult result;
  int64_t estimated_bytes = 0;
  bool timed_out = false, too_large = false;
};

// Units, their configurations, the cost tables and the search, within the deadline and
// the memory limit; the sizes are estimated before anything large is allocated.
SearchOutcome run_search(const CostModel& model, const PlanOptions& options, Deadline& deadline, Plan& plan) {
  const ModelGraph& graph = model.graph();
  SearchOutcome out;
  const auto start = Clock::now();
  try {
    out.units = group_units(graph, options.fuse_elementwise);
    const SearchSize size =
        estimate_search_size(graph, out.units, model.devices(), options.space, options.share_tables, deadline);
    out.estimated_bytes = size.bytes();
    plan.memory.estimated = out.estimated_bytes;
    if (out.estimated_bytes > options.memory_limit_bytes) {
      out.too_large = true;
      return out;
    }
    out.units = make_search_units(graph, model.devices(), options.space, options.fuse_elementwise, deadline);
    plan.memory.configurations = configuration_bytes(out.units);
    const CostGraph costs =
        build_cost_graph(model, out.units, options.share_tables, deadline, &plan.memory.shared_tables);
    plan.memory.cost_tables = cost_graph_bytes(costs);
    // The memo and the tables' temporary copies are freed now; hand their pages back before
    // the elimination allocates, or they stay resident beside its tables.
    malloc_trim(0);
    plan.memory.edge_pricing = model.pricing_bytes_peak();
    plan.tables_s = std::chrono::duration<double>(Clock::now() - start).count();
    SearchOptions search{deadline.at(), options.naive_search, options.clock, std::nullopt};
    // The search's working copy was counted in the estimate; its tables may grow into what is left.
    search.max_table_bytes =
        options.memory_limit_bytes - size.bytes() + size.working_entries * static_cast<int64_t>(sizeof(double));
    out.result = solve(costs, search);
    // The working copy's node costs besides its counted tables and logs.
    int64_t node_bytes = 0;
    for (const std::vector<double>& n : costs.node_cost) node_bytes += static_cast<int64_t>(n.size() * sizeof(double));
    plan.memory.elimination = out.result.stats.table_bytes_peak + node_bytes;
    out.timed_out = out.result.timed_out;
    out.too_large = out.result.too_large;
  } catch (const DeadlinePassed&) {
    out.timed_out = true;
  }
  return out;
}

}  // namespace

void require_plannable(const ModelGraph& graph, const DeviceGraph& devices) {
  const int n_devices = devices.device_count();
  require(graph.size() > 0, "model " + graph.name() + " has no layers");
  const int64_t batch = graph.layer(0).output.n();
  require_job_shape(n_devices, devices.gpus_per_node());
  require(batch % n_devices == 0, "batch " + std::to_string(batch) + " cannot be split over " +
                                      std::to_string(n_devices) + " GPUs: expected a multiple of " +
                                      std::to_string(n_devices));
  const int64_t ids = static_cast<int64_t>(graph.size()) * n_devices;
  require(ids <= kMaxPlanDeviceIds,
          "model " + graph.name() + " on " + std::to_string(n_devices) + " GPUs: " + std::to_string(graph.size()) +
              " layers x " + std::to_string(n_devices) + " devices = " + std::to_string(ids) +
              " device ids in a plan, more than " + std::to_string(kMaxPlanDeviceIds) + ", the limit");
}

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
  Deadline deadline(deadline_of(options.clock ? options.clock() : start, options.time_budget_s), options.clock);
  require_plannable(graph, devices);
  const int n_devices = devices.device_count();
  Plan plan;
  plan.model = graph.name();
  plan.batch = graph.layer(0).output.n();

  const CostModel model(graph, devices, options.sync);
  const SearchOutcome search = run_search(model, options, deadline, plan);
  const SearchUnits& units = search.units;
  const SearchResult& result = search.result;
  plan.unit_of_layer = units.unit_of_layer;
  plan.space_sizes.reserve(static_cast<size_t>(graph.size()));
  for (int u : units.unit_of_layer) {
    const auto at = static_cast<size_t>(u);
    plan.space_sizes.push_back(at < units.space.size() ? static_cast<int>(units.space[at].size()) : 0);
  }
  plan.search_s = std::chrono::duration<double>(Clock::now() - start).count();
  plan.search_stats = result.stats;

  plan.baselines.push_back(price_strategy(model, "data parallel", data_parallel(graph, n_devices)));
  plan.baselines.push_back(price_strategy(model, "model parallel", model_parallel(graph, n_devices)));
  plan.baselines.push_back(price_strategy(model, "owt", one_weird_trick(graph, n_devices)));
  if (search.timed_out || search.too_large) {
    plan.timed_out = search.timed_out;
    plan.too_large = search.too_large;
    fall_back_to_baseline(plan, search.timed_out ? budget_reason(*options.time_budget_s)
                                                 : memory_reason(search.estimated_bytes, options.memory_limit_bytes));
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
