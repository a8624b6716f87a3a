#pragma once
// Plans on part of the job, idle GPUs and the simplicity margin (docs/planner.md,
// "Sub-cluster candidates" and "The simplicity margin").
//
// A plan may leave GPUs idle: every layer on the first nodes can beat data parallelism on
// all of them when the network is slow. The planner therefore also rates data parallelism
// and the search on the first k nodes, for every power of two k below the node count, and
// prices them on the whole job (their devices 0 .. k*G-1 are the same GPUs there). When the
// chosen plan leaves GPUs idle, the reports say how many and what the same step costs on a
// job of only the nodes it uses. And data parallelism stays the choice unless another plan
// beats it by more than a margin: a plan within the cost model's error of it is not worth
// its complexity.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "model/model_graph.h"
#include "planner/cost_model.h"
#include "planner/planner.h"
#include "topology/device_graph.h"

namespace layerplan {

// The name of a searched plan that is data parallelism on every layer (never "layer-wise").
inline constexpr const char* kDataParallelEveryLayer = "data parallel on every layer";

// The first `nodes` nodes of `devices` (its devices 0 .. nodes*G-1), with the same GPUs and links.
DeviceGraph first_nodes(const DeviceGraph& devices, int nodes);

// The node counts k of the sub-cluster candidates: 1, 2, 4, ... below the job's N nodes,
// where k divides N (the first k*G devices are a block the job's space can place) and the
// global batch divides by k*G. Empty on one node.
std::vector<int> prefix_node_counts(int64_t batch, const DeviceGraph& devices);

// "1 node (8 GPUs)", "4 nodes (32 GPUs)".
std::string nodes_text(int nodes, int gpus_per_node);

// For every k of prefix_node_counts(): data parallelism on the first k nodes, and the plan
// make_plan() chooses on a job of those k nodes (options.node_prefixes off; a search that
// falls back gives its baseline), each priced on `full_model` (the whole job) and named
// "data parallel on 1 node (8 GPUs)", "layer-wise on 2 nodes (16 GPUs)". A sub-plan equal
// to data parallelism on its nodes is left out (already rated), and so is one that no
// plan on those nodes fits (make_plan() throws). Whether a candidate fits in memory is the
// chooser's to check. The search runs on prefixes of up to kMaxSearchedPrefixDevices GPUs
// only, without its local search and branch and bound (PlanOptions::refine_timeline);
// larger ones rate data parallelism alone (the CPU time of a plan at 1024 GPUs).
// Each sub-plan runs with options.time_budget_s as given: pass what is left of the budget.
// Data parallelism on k nodes is left out when its compute alone takes `beat_s` or more
// (the step of a plan already rated, which it then cannot beat).
std::vector<StrategyCost> node_prefix_candidates(const ModelGraph& graph, const DeviceGraph& devices,
                                                 const CostModel& full_model, const PlanOptions& options,
                                                 double beat_s = std::numeric_limits<double>::infinity());
inline constexpr int kMaxSearchedPrefixDevices = 16;

// What a strategy leaves idle on the job of `devices`.
struct IdleDevices {
  int job_devices = 0;
  int idle_devices = 0;  // devices with no tile of any layer
  int job_nodes = 0;
  int used_nodes = 0;  // nodes with a device the strategy uses
  // The same configurations priced on a job of only the used nodes (the used nodes
  // renumbered in order); `strategy`'s own step when nothing is idle.
  double used_nodes_step_s = 0.0;
};
IdleDevices idle_devices_of(const StrategyCost& strategy, const ModelGraph& graph, const DeviceGraph& devices,
                            const PlanOptions& options);

// Sets plan.job_devices, idle_devices, job_nodes, used_nodes and used_nodes_step_s from
// idle_devices_of(plan.chosen, ...).
void record_idle_devices(Plan& plan, const ModelGraph& graph, const DeviceGraph& devices, const PlanOptions& options);

// Whether every layer of `strategy` is split by samples only over devices 0 .. device_count-1
// in order: data parallelism on those devices, whatever its name.
bool equals_data_parallel(const StrategyCost& strategy, int device_count);

// Renames `strategy` when it is data parallelism on the first p devices of the job: on all
// of them kDataParallelEveryLayer (a baseline already called "data parallel" keeps its
// name), on fewer "data parallel on 1 node (8 GPUs)" (whole nodes) or "data parallel on
// 4 GPUs". Returns whether it is data parallelism.
bool label_data_parallel(StrategyCost& strategy, const DeviceGraph& devices);

// The choice under the simplicity margin, and the faster plan set aside for data parallelism.
struct MarginChoice {
  const StrategyCost* chosen = nullptr;  // nullptr when nothing fits
  std::string set_aside_name;            // empty: nothing was set aside
  double set_aside_step_s = 0.0;
};

// Among `candidates` that fit in `usable_memory_bytes` (data parallelism may be one of them
// or not), the fastest by the step timeline, unless data parallelism fits and that one is not
// faster than it by more than min_gain of its step: then data parallelism, with the faster
// one set aside. When data parallelism does not fit, the fastest that does.
MarginChoice choose_with_margin(const std::vector<const StrategyCost*>& candidates, const StrategyCost& data_parallel,
                                double min_gain, int64_t usable_memory_bytes);

}  // namespace layerplan
