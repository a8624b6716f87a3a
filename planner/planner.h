#pragma once
// layerplan's planner: picks a configuration for every layer of a model on a device
// graph by the exact elimination search over the cost model, and prices the baselines
// (data, model and OWT parallelism) with the same model.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/geometry.h"
#include "model/model_graph.h"
#include "planner/config_space.h"
#include "planner/cost_model.h"
#include "planner/memory_model.h"
#include "planner/search.h"
#include "planner/step_timeline.h"
#include "topology/device_graph.h"

namespace layerplan {

// One layer's configuration and its share of the step time. The transfer term of an
// edge is charged to the consumer, so a layer's row holds the moves into it.
struct LayerCost {
  Configuration config;
  double compute_s = 0.0;          // forward and backward
  double forward_compute_s = 0.0;  // of compute_s: the forward pass
  double transfer_s = 0.0;
  double sync_s = 0.0;
  int64_t transfer_bytes = 0;
  int64_t sync_bytes = 0;
};

// A whole strategy (one configuration per layer) priced by the cost model, two ways: the
// search's additive objective (Σ compute + transfer + sync per layer, sync being each
// layer's share of its buckets) and the step as a timeline (step_timeline.h), which
// reduces the real buckets and overlaps them with the backward pass. The timeline is the
// step time; the additive sum is what the exact search can minimize.
struct StrategyCost {
  std::string name;               // "layer-wise", "data parallel", "model parallel", "owt"
  std::vector<LayerCost> layers;  // indexed by layer id
  double compute_s = 0.0, transfer_s = 0.0, sync_s = 0.0;
  int64_t transfer_bytes = 0, sync_bytes = 0;
  PlanMemory memory;  // predicted peak memory per device (planner/memory_model.h)
  StepTimeline timeline;

  double step_s() const { return timeline.step_s; }
  double additive_s() const { return compute_s + transfer_s + sync_s; }
  int64_t communication_bytes() const { return transfer_bytes + sync_bytes; }
};

inline constexpr int64_t kPlannerMemoryLimitBytes = int64_t{1} << 30;  // docs/limits.md
inline constexpr double kDefaultMinGain = 0.03;                        // PlanOptions::min_gain

struct PlanOptions {
  SpaceOptions space;
  SyncScheme sync = SyncScheme::kRingAllReduce;
  // Gradient buckets' all-reduces overlap the backward pass (SyncOptions::overlap).
  bool overlap = true;
  int64_t bucket_bytes = kDefaultGradientBucketBytes;  // the runtime's gradient bucket size
  // The whole plan (configurations, cost tables, search) must finish within this many
  // seconds; past it, the best baseline is returned with a warning.
  std::optional<double> time_budget_s;
  // Element-wise layers (ReLU, batch-norm, dropout) take their producer's configuration
  // when it feeds nothing else; off, they are search nodes of their own.
  bool fuse_elementwise = true;
  bool naive_search = false;  // benchmarks: the straightforward min-plus products
  // Reuse the cost tables of layers and edges with identical geometry (ResNet and
  // Inception repeat blocks); off, every table is computed afresh.
  bool share_tables = true;
  // The bytes the search's configurations, cost tables and elimination may take. Their
  // size is estimated before anything is allocated, and the search's own tables are
  // counted as it goes; beyond this, the best baseline is returned with a warning.
  int64_t memory_limit_bytes = kPlannerMemoryLimitBytes;
  // What the memory model counts; plans whose peak exceeds a GPU's memory less its reserve
  // are never chosen (docs/cost-model.md, "Memory per device").
  MemoryModelOptions memory;
  // What reads the time for time_budget_s (default: steady_clock::now); tests inject their own.
  std::function<std::chrono::steady_clock::time_point()> clock;

  // Data parallelism stays the choice unless another plan's step is shorter by more than
  // this share of data parallelism's (docs/planner.md, "The simplicity margin"); 0 keeps
  // the fastest plan whatever the gain.
  double min_gain = kDefaultMinGain;
  // Also rate data parallelism and the search on every power-of-two prefix of the job's
  // nodes (docs/planner.md, "Sub-cluster candidates"); off inside those plans themselves.
  bool node_prefixes = true;
  // The timeline search's local search and branch and bound (timeline_search.h); off, only
  // its seeds and parametric searches are rated (the sub-cluster plans, to keep them cheap),
  // and the lower bound is the sync-free optimum.
  bool refine_timeline = true;

  // Measured kernel times of the plan's GPU model at its precision (model/profile_db.h,
  // docs/cost-model.md, "Measured profiles"); they replace the compute model where they
  // hold a layer's slowest tile.
  std::shared_ptr<const DeviceProfile> profile;

  SyncOptions sync_options() const { return {sync, overlap, bucket_bytes}; }
};

// What the search held, counted from the sizes of what it allocated (docs/planner.md §8).
struct PlannerMemory {
  int64_t estimated = 0;       // estimate_search_size(), before anything was allocated
  int64_t configurations = 0;  // the units' configuration lists and their device ids
  int64_t cost_tables = 0;     // the cost graph's tables
  int64_t shared_tables = 0;   // the memo of shared tables, while the cost graph is built
  int64_t edge_pricing = 0;    // the per-edge overlap tables and node boxes, the most at once
  int64_t elimination = 0;     // the search's working tables, node costs and argmin logs, at their peak

  // All of it at the busiest moment: the memo is gone before the elimination starts.
  int64_t peak() const { return configurations + cost_tables + edge_pricing + std::max(shared_tables, elimination); }
};

struct Plan {
  std::string model;
  int64_t batch = 0;
  // The fastest candidate by the timeline: the search's plan or a baseline (the best
  // baseline after a timeout).
  StrategyCost chosen;
  StrategyCost layer_wise;              // the search's plan (no layers when the search fell back)
  std::vector<StrategyCost> baselines;  // data parallel, model parallel, owt
  // The search's plan mixed with data parallelism (mixed_candidates.h), rated beside it.
  std::vector<StrategyCost> mixed;
  // Data parallelism and the search's plan on the first nodes of the job, priced on all of
  // it (node_prefixes.h), rated beside the others.
  std::vector<StrategyCost> node_prefixes;
  std::vector<int> space_sizes;    // configurations considered per layer
  std::vector<int> unit_of_layer;  // search node of each layer (fused element-wise layers share one)
  SearchStats search_stats;
  // The timeline search (timeline_search.h): exact searches run and plans rated.
  struct TimelineSearchStats {
    int solves = 0;
    int64_t rated = 0;
  } timeline_search;
  PlannerMemory search_memory;  // what planning itself allocates (GPU memory: StrategyCost::memory)
  double search_s = 0.0;        // building cost tables + elimination search
  double tables_s = 0.0;        // of which: building cost tables
  bool timed_out = false;       // the time budget ran out before the search finished
  bool too_large = false;       // the search would have taken more than memory_limit_bytes
  // Per GPU: its memory less the reserve (INT64_MAX: the memory is unknown, nothing is checked).
  int64_t usable_memory_bytes = std::numeric_limits<int64_t>::max();
  int excluded_configurations = 0;  // unit configurations whose own tile cannot fit
  // The fastest layer-wise plan did not fit; `chosen` is the search's plan with memory
  // priced in (planner.cc: search_within_memory), slower but within memory.
  bool memory_weighted = false;
  bool overlap = true;  // the timeline overlapped bucket all-reduces with the backward (PlanOptions::overlap)
  // A lower bound on the step of every plan in the search space, by the timeline
  // (docs/planner.md, "Searching the timeline"): the chosen plan is at most
  // chosen.step_s() - lower_bound_s from the optimum. 0 when the search fell back.
  double lower_bound_s = 0.0;
  // The search proved its plan the timeline optimum of the space (the gap is closed).
  bool proven_optimal = false;
  // The GPUs of the job, and those the chosen plan leaves idle (no layer has a tile there).
  int job_devices = 0;
  int idle_devices = 0;
  // When GPUs are idle: the whole nodes the chosen plan uses, and its step priced on a job
  // of only those nodes (what the same step costs without the idle ones).
  int used_nodes = 0;
  int job_nodes = 0;
  double used_nodes_step_s = 0.0;
  // The simplicity margin (PlanOptions::min_gain) it was chosen with, and the faster plan
  // it set aside for data parallelism, if any (empty name: none was set aside).
  double min_gain = kDefaultMinGain;
  std::string set_aside_name;
  double set_aside_step_s = 0.0;
  std::string warning;  // non-empty when the plan is not the layer-wise optimum
  // Non-empty when a baseline is faster by the timeline than the search's plan, which is
  // optimal for the additive objective only.
  std::string note;

  bool fell_back() const { return timed_out || too_large; }

  const StrategyCost& best_baseline() const;
};

// Plans `graph` (built for its global batch) on `devices`: any N nodes x G GPUs. Throws
// UsageError when the batch is not a multiple of the device count (so that data
// parallelism is a member of the space), and when neither the layer-wise plan nor any
// baseline fits in the GPUs' memory (no_plan_fits_message()).
Plan make_plan(const ModelGraph& graph, const DeviceGraph& devices, const PlanOptions& options = {});

// Throws UsageError unless `graph` can be planned on `devices`: a model with layers, a job
// shape of whole nodes, a batch that splits over every device, and at most
// kMaxPlanDeviceIds layers x devices (a plan lists every layer's devices).
void require_plannable(const ModelGraph& graph, const DeviceGraph& devices);

// Prices any strategy, additively and by the timeline, its memory per device included;
// `configs` holds one configuration per layer.
StrategyCost price_strategy(const CostModel& model, std::string name, const std::vector<Configuration>& configs,
                            const MemoryModelOptions& memory = {});

// A strategy's per-layer configurations.
std::vector<Configuration> configurations_of(const StrategyCost& strategy);

// The baselines, each on all devices: data parallelism (every layer split by samples),
// model parallelism (every layer split by channels where its kind allows, by
// gcd(channels, devices), and by samples over the rest of the devices) and OWT
// (data-parallel up to the first fully-connected layer, channel-split from there on).
std::vector<Configuration> data_parallel(const ModelGraph& graph, int device_count);
std::vector<Configuration> model_parallel(const ModelGraph& graph, int device_count);
std::vector<Configuration> one_weird_trick(const ModelGraph& graph, int device_count);

}  // namespace layerplan
