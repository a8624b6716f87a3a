#pragma once
// What `layerplan predict` measures of a plan on this machine: every layer's compute (its
// tiles' kernels and SGD updates, and the forward part of it) on the slowest device, the
// executor's own work besides, and making the batch. Two ways:
//   - in one process: every device's tiles, one after another, with the threads a rank
//     would get; `core_share` (below 1 when ranks would outnumber the cores) scales them;
//   - as the ranks of `layerplan launch`: each rank times its own device's tiles while the
//     others time theirs, so the kernels share the machine's cores, caches and memory as
//     in training; nothing travels between the ranks until the timings are gathered
//     (runtime/executor/stand_in_transport.h).
#include <string>
#include <vector>

#include "model/geometry.h"
#include "model/model_graph.h"

namespace layerplan {

struct MeasuredSteps {
  // Per layer, seconds per step on the slowest device (the median over the timed steps)
  // and the forward part of that device's time.
  std::vector<double> compute_s, forward_s;
  double overhead_s = 0;  // per step, outside the kernels: copying boxes, allocating, bookkeeping
  double data_s = 0;      // per step, making the busiest device's part of the batch
  bool prints = true;     // this process reports the prediction (the only process, or rank 0)
};

// `steps` steps, the first a warm-up not counted.
MeasuredSteps measure_in_one_process(const ModelGraph& graph, const std::vector<Configuration>& plan, int devices,
                                     int steps, double core_share, const std::string& kernels);
// Under `layerplan launch --nproc devices` (a collective: every rank calls it).
MeasuredSteps measure_as_ranks(const ModelGraph& graph, const std::vector<Configuration>& plan, int devices,
                               int steps, const std::string& kernels);

}  // namespace layerplan
