#pragma once
// The scaling curve of the report: predicted images/s against the GPU count for the chosen
// plan, the layer-wise search's plan and each baseline, each count planned afresh by the
// planner on the same kind of cluster with the same images per GPU.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/model_graph.h"
#include "planner/planner.h"
#include "topology/device_graph.h"

namespace layerplan::report {

// The series of a curve, in order: the plan the planner chose at each count (whatever it
// was), the layer-wise search's plan, then the baselines by name.
inline constexpr size_t kChosenSeries = 0;
inline constexpr size_t kSearchSeries = 1;
std::vector<std::string> scaling_series_names();  // "chosen plan", "layer-wise search", "data parallel", ...

struct ScalingPoint {
  int gpus = 0;
  // Images/s per series, in the order of scaling_series_names().
  std::vector<double> images_per_s;
  // No searched plan at this count: the search ran out of its time budget or memory (the
  // best baseline was chosen), or the job's plan came from a plan file (`layerplan report`).
  // The chosen plan's figure stands in, and the chart draws it hollow.
  bool layerwise_fell_back = false;
  std::string chosen;  // the name of the chosen strategy at this count
};

struct ScalingCurve {
  std::vector<std::string> strategies;  // the series' names: scaling_series_names()
  std::vector<ScalingPoint> points;     // ascending GPU count
  int job_gpus = 0;                     // the plan's own count, marked on the chart
  std::string note;                     // e.g. which counts could not be planned
};

// What the planner needs at one GPU count: the model at that count's batch and the
// devices. Returns nullopt when the count cannot be planned (e.g. the batch does not split).
struct ScalingCase {
  ModelGraph graph;
  DeviceGraph devices;
};
using ScalingCaseMaker = std::function<std::optional<ScalingCase>(int gpus)>;

// One node, then powers of two times it up to twice the job's count (and at least to 8
// nodes): G, 2G, 4G, ...; the job's own count among them.
std::vector<int> scaling_gpu_counts(int gpus_per_node, int job_gpus);

// Plans every count with `options` (its time budget is per point: keep it small); at
// `job_gpus`, `job_plan` stands for the count when given (the report's own plan).
ScalingCurve scaling_curve(const ScalingCaseMaker& make_case, const std::vector<int>& gpu_counts, int job_gpus,
                           const PlanOptions& options, const Plan* job_plan = nullptr);

}  // namespace layerplan::report
