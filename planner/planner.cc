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
#include "planner/concat_ties.h"
#include "planner/cost_tables.h"
#include "planner/deadline.h"
#include "planner/memory_fit.h"
#include "planner/mixed_candidates.h"
#include "planner/node_prefixes.h"
#include "planner/timeline_objective.h"
#include "planner/timeline_search.h"

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

// The best baseline that fits in memory in place of the layer-wise plan, and why. Throws
// UsageError when no baseline fits.
void fall_back_to_baseline(Plan& plan, const DeviceGraph& devices, const std::string& reason) {
  const StrategyCost* best = fastest_fitting(plan.baselines, plan.usable_memory_bytes);
  require(best != nullptr, no_plan_fits_message(plan, devices));
  plan.chosen = *best;
  plan.warning = reason + "; using the best baseline (" + plan.chosen.name + ")";
}

constexpr int kMemoryWeightSteps = 8;

// Why the fastest layer-wise plan is not the plan: it needs more than the usable memory, or
// the search found nothing that keeps every layer within it.
std::string over_memory_reason(const Plan& plan, bool search_fits) {
  if (!search_fits) return "no layer-wise plan keeps every layer within GPU memory";
  return "the fastest layer-wise plan needs " + gib_text(static_cast<double>(plan.layer_wise.memory.peak())) +
         " on GPU " + std::to_string(plan.layer_wise.memory.peak_device()) + ", more than the " +
         gib_text(static_cast<double>(plan.usable_memory_bytes)) + " usable";
}

// The fastest candidate that fits, by the timeline; data parallelism when nothing beats it by
// more than the simplicity margin (docs/planner.md, "The simplicity margin"). `memory_reason`
// is non-empty when the fastest layer-wise plan did not fit (search_within_memory() may have
// found a slower one that does). Throws UsageError when nothing fits.
void choose_by_timeline(Plan& plan, const DeviceGraph& devices, const std::string& memory_reason) {
  if (!fits_memory(plan.layer_wise, plan.usable_memory_bytes) || (!memory_reason.empty() && !plan.memory_weighted)) {
    fall_back_to_baseline(plan, devices, memory_reason);
    return;
  }
  if (!memory_reason.empty()) plan.warning = memory_reason + "; using a slower layer-wise plan that fits";
  std::vector<const StrategyCost*> candidates{&plan.layer_wise};
  for (const auto* group : {&plan.baselines, &plan.mixed, &plan.node_prefixes}) {
    for (const StrategyCost& s : *group) candidates.push_back(&s);
  }
  const MarginChoice choice =
      choose_with_margin(candidates, plan.baselines.front(), plan.min_gain, plan.usable_memory_bytes);
  plan.chosen = *choice.chosen;  // the searched plan fits, so something does
  plan.set_aside_name = choice.set_aside_name;
  plan.set_aside_step_s = choice.set_aside_step_s;
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

std::vector<Configuration> configurations_of(const SearchUnits& units, const std::vector<int>& choice) {
  std::vector<Configuration> out;
  out.reserve(units.unit_of_layer.size());
  for (int u : units.unit_of_layer) {
    out.push_back(units.space[static_cast<size_t>(u)][static_cast<size_t>(choice[static_cast<size_t>(u)])]);
  }
  return out;
}

// What the layer-wise search produced: one configuration index per unit, or why it has none.
struct SearchOutcome {
  SearchUnits units;
  CostGraph costs;       // with the configurations that cannot fit penalized
  CostGraphParts parts;  // what the timeline needs besides the summed tables
  SearchOptions search;  // what the search ran with
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
    plan.search_memory.estimated = out.estimated_bytes;
    if (out.estimated_bytes > options.memory_limit_bytes) {
      out.too_large = true;
      return out;
    }
    out.units = make_search_units(graph, model.devices(), options.space, options.fuse_elementwise, deadline);
    plan.search_memory.configurations = configuration_bytes(out.units);
    out.costs = build_cost_graph(model, out.units, options.share_tables, deadline, &plan.search_memory.shared_tables,
                                 &out.parts);
    plan.search_memory.cost_tables = cost_graph_bytes(out.costs);
    // The memo and the tables' temporary copies are freed now; hand their pages back before
    // the elimination allocates, or they stay resident beside its tables.
    malloc_trim(0);
    plan.search_memory.edge_pricing = model.pricing_bytes_peak();
    plan.excluded_configurations =
        exclude_over_memory(out.costs, out.units, graph, model.devices().device(), options.memory, deadline);
    plan.tables_s = std::chrono::duration<double>(Clock::now() - start).count();
    out.search = SearchOptions{deadline.at(), options.naive_search, options.clock, std::nullopt,
                               concat_tie_groups(graph, out.units)};  // dense blocks (docs/planner.md §7)
    // The search's working copy was counted in the estimate; its tables may grow into what is left.
    out.search.max_table_bytes =
        options.memory_limit_bytes - size.bytes() + size.working_entries * static_cast<int64_t>(sizeof(double));
    out.result = solve(out.costs, out.search);
    // The working copy's node costs besides its counted tables and logs.
    int64_t node_bytes = 0;
    for (const std::vector<double>& n : out.costs.node_cost) {
      node_bytes += static_cast<int64_t>(n.size() * sizeof(double));
    }
    plan.search_memory.elimination = out.result.stats.table_bytes_peak + node_bytes;
    out.timed_out = out.result.timed_out;
    out.too_large = out.result.too_large;
  } catch (const DeadlinePassed&) {
    out.timed_out = true;
  }
  return out;
}

// When the fastest layer-wise plan does not fit: the search again with memory priced into
// every unit configuration, at weights rising by 4x from (data-parallel step time) /
// (usable bytes), until a plan fits. Keeps the first that does in plan.layer_wise.
void search_within_memory(const CostModel& model, const SearchOutcome& search, const PlanOptions& options, Plan& plan) {
  if (plan.usable_memory_bytes == std::numeric_limits<int64_t>::max()) return;
  const auto resident = unit_resident_bytes(search.units, model.graph(), model.devices().device(), options.memory);
  const double base = plan.baselines.front().step_s() / static_cast<double>(plan.usable_memory_bytes);
  for (int k = 0; k < kMemoryWeightSteps; ++k) {
    const SearchResult r = solve(with_memory_weight(search.costs, resident, base * std::pow(4.0, k)), search.search);
    if (r.timed_out || r.too_large || r.choice.empty()) return;
    StrategyCost candidate =
        price_strategy(model, "layer-wise", configurations_of(search.units, r.choice), options.memory);
    if (!fits_memory(candidate, plan.usable_memory_bytes)) continue;
    plan.layer_wise = std::move(candidate);
    plan.memory_weighted = true;
    return;
  }
}

// The search of the step timeline (timeline_search.h), seeded with the additive optimum, the
// strategies already rated and the additive optimum mixed with data parallelism; then the
// found plan's own mixes. Sets plan.layer_wise to the fastest, which is then no slower by the
// timeline than any of them, and the lower bound. Returns false when the search ran out of
// time (plan.layer_wise is then the additive optimum).
bool search_on_timeline(const CostModel& model, SearchOutcome& search, const PlanOptions& options, Plan& plan,
                        const std::vector<const StrategyCost*>& rated) {
  const ModelGraph& graph = model.graph();
  TimelineObjective objective(model, search.units, search.costs, search.parts);
  std::vector<std::vector<int>> seeds{search.result.choice};
  const std::vector<Configuration> data = data_parallel(graph, model.devices().device_count());
  for (MixedCandidate& c : mixed_candidates(graph, objective.configurations(search.result.choice), data)) {
    seeds.push_back(objective.choice_of(c.configs));
  }
  for (const StrategyCost* s : rated) seeds.push_back(objective.choice_of(configurations_of(*s)));
  TimelineSearchLimits limits;
  if (!options.refine_timeline) limits = {{}, 0, 0, 0};
  const TimelineSearchResult found = search_timeline(search.costs, search.parts, objective, seeds, search.search,
                                                     limits, int64_t{graph.size()} * model.devices().device_count());
  plan.timeline_search = {found.solves, found.rated};
  if (found.timed_out) return false;
  StrategyCost best = price_strategy(model, "layer-wise", objective.configurations(found.choice), options.memory);
  if (found.step_s < kOverMemoryPenalty_s &&
      std::abs(best.step_s() - found.step_s) > 1e-9 * std::max(1e-3, found.step_s)) {
    throw std::logic_error("timeline search step " + std::to_string(found.step_s) + " s differs from priced plan " +
                           std::to_string(best.step_s()) + " s");
  }
  // Strategies outside the units' space (none of the baselines, on the zoo) are compared here.
  for (const StrategyCost* s : rated) {
    if (s->step_s() < best.step_s()) best = price_strategy(model, "layer-wise", configurations_of(*s), options.memory);
  }
  plan.layer_wise = std::move(best);
  plan.lower_bound_s = std::min(found.lower_bound_s, plan.layer_wise.step_s());
  plan.proven_optimal = found.proven_optimal && plan.lower_bound_s >= found.step_s * (1 - 1e-12);
  return true;
}

// The sub-cluster candidates (node_prefixes.h), within what is left of the time budget.
void rate_node_prefixes(const CostModel& model, const PlanOptions& options, Clock::time_point start, Plan& plan) {
  PlanOptions within = options;
  if (options.time_budget_s) {
    within.time_budget_s =
        std::max(0.0, *options.time_budget_s - std::chrono::duration<double>(Clock::now() - start).count());
  }
  plan.node_prefixes =
      node_prefix_candidates(model.graph(), model.devices(), model, within, plan.baselines.front().step_s());
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

std::vector<Configuration> configurations_of(const StrategyCost& strategy) {
  std::vector<Configuration> out;
  out.reserve(strategy.layers.size());
  for (const LayerCost& row : strategy.layers) out.push_back(row.config);
  return out;
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

StrategyCost price_strategy(const CostModel& model, std::string name, const std::vector<Configuration>& configs,
                            const MemoryModelOptions& memory) {
  const ModelGraph& graph = model.graph();
  StrategyCost s;
  s.name = std::move(name);
  s.memory = predict_plan_memory(graph, configs, model.devices().device_count(),
                                 model.devices().device().bytes_per_element, memory);
  s.layers.resize(static_cast<size_t>(graph.size()));
  std::vector<LayerSpan> spans(static_cast<size_t>(graph.size()));
  for (const Layer& l : graph.layers()) {
    LayerCost& row = s.layers[static_cast<size_t>(l.id)];
    row.config = configs.at(static_cast<size_t>(l.id));
    const PassTimes passes = model.pass_times(l, row.config);
    row.compute_s = passes.forward_s + passes.backward_s;
    row.forward_compute_s = passes.forward_s;
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
    spans[static_cast<size_t>(l.id)] = layer_span(passes, row.transfer_s);
  }
  s.timeline =
      lay_out_step(spans, sync_jobs(model, configs), model.sync_options().overlap, model.devices().device_count());
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
  plan.usable_memory_bytes = usable_memory_bytes(devices.device());
  plan.overlap = options.overlap;
  plan.min_gain = options.min_gain;
  plan.job_devices = devices.device_count();
  plan.job_nodes = devices.nodes();

  const CostModel model(graph, devices, options.sync_options(), options.profile);
  SearchOutcome search = run_search(model, options, deadline, plan);
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

  plan.baselines.push_back(price_strategy(model, "data parallel", data_parallel(graph, n_devices), options.memory));
  plan.baselines.push_back(price_strategy(model, "model parallel", model_parallel(graph, n_devices), options.memory));
  plan.baselines.push_back(price_strategy(model, "owt", one_weird_trick(graph, n_devices), options.memory));
  if (search.timed_out || search.too_large) {
    plan.timed_out = search.timed_out;
    plan.too_large = search.too_large;
    fall_back_to_baseline(plan, devices,
                          search.timed_out ? budget_reason(*options.time_budget_s)
                                           : memory_reason(search.estimated_bytes, options.memory_limit_bytes));
    return plan;
  }
  plan.layer_wise = price_strategy(model, "layer-wise", configurations_of(units, result.choice), options.memory);
  const bool search_fits = result.cost < kOverMemoryPenalty_s;
  // The search's objective and the per-layer pricing are the same sum in another order.
  if (search_fits && std::abs(plan.layer_wise.additive_s() - result.cost) > 1e-9 * std::max(1.0, result.cost)) {
    throw std::logic_error("search cost " + std::to_string(result.cost) + " differs from priced plan " +
                           std::to_string(plan.layer_wise.additive_s()));
  }
  if (options.node_prefixes) rate_node_prefixes(model, options, start, plan);
  std::vector<const StrategyCost*> rated;
  for (const auto* group : {&plan.baselines, &plan.node_prefixes}) {
    for (const StrategyCost& s : *group) rated.push_back(&s);
  }
  if (!search_on_timeline(model, search, options, plan, rated)) {
    plan.timed_out = true;
    fall_back_to_baseline(plan, devices, budget_reason(options.time_budget_s.value_or(0)));
    return plan;
  }
  std::string reason;
  if (!fits_memory(plan.layer_wise, plan.usable_memory_bytes)) {
    reason = over_memory_reason(plan, search_fits);
    search_within_memory(model, search, options, plan);
  }
  if (reason.empty()) {
    for (MixedCandidate& c :
         mixed_candidates(graph, configurations_of(plan.layer_wise), data_parallel(graph, n_devices))) {
      plan.mixed.push_back(price_strategy(model, std::move(c.name), c.configs, options.memory));
      // The searched plan is never slower than its own mixes (rated after the search).
      if (plan.mixed.back().step_s() < plan.layer_wise.step_s()) {
        plan.layer_wise = price_strategy(model, "layer-wise", configurations_of(plan.mixed.back()), options.memory);
      }
    }
  }
  plan.search_s = std::chrono::duration<double>(Clock::now() - start).count();
  label_data_parallel(plan.layer_wise, devices);
  choose_by_timeline(plan, devices, reason);
  record_idle_devices(plan, graph, devices, options);
  return plan;
}

}  // namespace layerplan
