#pragma once
// One strategy's predicted step laid out in time, per device, as the planner's step
// timeline has it (planner/step_timeline.h, docs/cost-model.md): the forward pass layer
// after layer (the moves into a layer, then its compute), the backward in reverse order
// (its compute, then its gradients' moves back), each backward span starting where the
// timeline starts it, and the buckets' all-reduces where the timeline ran them (beside the
// backward when they overlap it). A phase lasts what the model charges for it; a device's
// span covers a phase it takes part in (it holds a tile of the layer, sends or receives some
// of the moves, holds a replicated weight shard). The model prices the phase by its slowest
// device, so a span is the phase, not the device's own share of it.
#include <cstdint>
#include <string>
#include <vector>

#include "model/model_graph.h"
#include "planner/planner.h"

namespace layerplan::report {

enum class StepPhase { kTransfer, kCompute, kSync };
const char* step_phase_name(StepPhase phase);  // "transfer", "compute", "sync"

struct TimelinePhase {
  int layer = 0;
  StepPhase kind = StepPhase::kCompute;
  double start_s = 0;
  double duration_s = 0;
  int64_t bytes = 0;                  // transfer and sync: the layer's bytes over all devices
  std::vector<int> devices;           // ascending: the devices busy in this phase
  std::vector<int64_t> device_bytes;  // transfer: bytes each of `devices` sends and receives, both ways
};

struct StepTimeline {
  std::string strategy;
  double step_s = 0;  // the strategy's step by the timeline: where the last phase ends
  int device_count = 0;
  std::vector<TimelinePhase> phases;  // in time order; phases of zero duration left out
};

// Lays out `cost` (priced for `graph` on `device_count` devices).
StepTimeline step_timeline(const ModelGraph& graph, const StrategyCost& cost, int device_count);

}  // namespace layerplan::report
