#pragma once
// What `layerplan predict` measures of a plan on this machine: every layer's compute (its
// tiles' kernels and SGD updates, and the forward part of it) on the slowest device, the
// executor's own work besides, and making the batch. Two ways (MeasureMode):
//   - in one process: every device's tiles, one after another, with the threads a rank
//     would get; `core_share` (below 1 when ranks would outnumber the cores) scales them;
//   - as the ranks of `layerplan launch`: each rank times its own device's tiles while the
//     others time theirs, so the kernels share the machine's cores, caches and memory as
//     in training; nothing travels between the ranks until the timings are gathered
//     (runtime/executor/stand_in_transport.h).
#include <vector>

#include "model/geometry.h"
#include "model/model_graph.h"
#include "runtime/kernels/kernels.h"

namespace layerplan {

enum class MeasureMode {
  kOneProcess,  // every device's tiles in this process
  kAsRanks,     // under `layerplan launch --nproc devices`, one device per rank (a collective)
};

// How measure_compute times a plan's tiles.
struct MeasureOptions {
  // Steps run, 2 or more; the first warms up and is not counted. More steps give a steadier
  // median over the steps and take proportionally longer.
  int steps = 3;
  // kOneProcess only, in (0, 1]: the share of its cores a rank would get in training (cores
  // / ranks when the ranks outnumber the cores); the measured seconds are divided by it.
  // Under kAsRanks the ranks share the cores themselves, so it must stay 1.
  double core_share = 1.0;
  // The kernels that compute the tiles: those of the training run being predicted.
  KernelBackend kernels = KernelBackend::kOnednn;
  // Default: one process; kAsRanks times the kernels sharing the machine as in training.
  MeasureMode mode = MeasureMode::kOneProcess;
};

// Throws UsageError naming the option as `layerplan predict` spells it (--steps,
// --core-share) and what is expected.
void validate(const MeasureOptions& options);

struct MeasuredSteps {
  // Per layer, seconds per step on the slowest device (the median over the timed steps)
  // and the forward part of that device's time.
  std::vector<double> compute_s, forward_s;
  double overhead_s = 0;  // per step, outside the kernels: copying boxes, allocating, bookkeeping
  double data_s = 0;      // per step, making the busiest device's part of the batch
  bool reports = true;    // this process reports the prediction (the only process, or rank 0)
};

// Times `options.steps` steps of `plan` on `devices` devices. Under kAsRanks every rank
// calls it, and it throws UsageError when the launch's rank count is not `devices`.
MeasuredSteps measure_compute(const ModelGraph& graph, const std::vector<Configuration>& plan, int devices,
                              const MeasureOptions& options);

}  // namespace layerplan
