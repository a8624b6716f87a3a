#pragma once
// One training step laid out in time (docs/cost-model.md, "The step as a timeline").
//
// Layers run one after another, every device at the pace of the slowest tile: the forward
// pass (each layer's transfers in, then its compute), then the backward pass in reverse
// order (each layer's compute, then its gradients' transfers back). Weight gradients are
// all-reduced in the runtime's buckets: a bucket is ready once the backward of the layer
// that fills it has ended (or at the end of the backward). Each device runs its
// all-reduces one at a time in the runtime's order, so buckets of disjoint devices run side
// by side. With overlap, the backward goes on while buckets reduce, slowed by the share of
// the GPU their kernels take, and the step ends when both have; without, the backward waits
// for the buckets filled at each layer.
#include <vector>

#include "model/geometry.h"
#include "planner/cost_model.h"

namespace layerplan {

// One layer's time on the step's critical path, transfers included.
struct LayerSpan {
  double forward_s = 0.0;   // transfers into the layer and its forward compute
  double backward_s = 0.0;  // its backward compute and its gradients' transfers to its producers
};

// One all-reduce of weight gradients.
struct SyncJob {
  std::vector<int> devices;  // ascending
  int after_layer = -1;      // ready when this layer's backward ends; -1: when the backward ends
  double bytes = 0.0;
  double time_s = 0.0;
  CollectiveEstimate how;         // the algorithm and protocol NCCL would run (all-reduce only)
  bool parameter_server = false;  // a layer's sync by parameter servers instead
  // The share of a GPU's compute the all-reduce's kernels take while it runs (NCCL's
  // channels occupy SMs): the backward runs at (1 - share) of its pace meanwhile.
  double compute_share = 0.0;
};

// When one all-reduce ran on the timeline, for reports.
struct SyncSpan {
  int after_layer = -1;
  double bytes = 0.0;
  int ranks = 0;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  CollectiveProtocol protocol = CollectiveProtocol::kSimple;
  double start_s = 0.0, end_s = 0.0;
  bool parameter_server = false;
  std::vector<int> devices;  // ascending
};

struct StepTimeline {
  double step_s = 0.0;
  bool overlap = true;          // the all-reduces overlapped the backward (lay_out_step's `overlap`)
  double forward_s = 0.0;       // Σ forward spans
  double backward_s = 0.0;      // Σ backward spans
  double sync_s = 0.0;          // Σ all-reduce times, as if back to back
  double exposed_sync_s = 0.0;  // what sync adds to the step: step - forward - backward
  int sync_jobs = 0;
  std::vector<SyncSpan> spans;  // every all-reduce, in the order the runtime issues them
  // Per layer id: when its backward span begins (the forward of layer l begins at the sum
  // of the forward spans before it).
  std::vector<double> backward_start_s;
};

// The step of `layers` (indexed by layer id, in topological order) with `jobs` (in the
// order each device runs them) over `device_count` devices.
StepTimeline lay_out_step(const std::vector<LayerSpan>& layers, const std::vector<SyncJob>& jobs, bool overlap,
                          int device_count);

// The all-reduces of a plan's weight gradients: the runtime's buckets priced as NCCL runs
// them, buckets filled at the same layer sharing the NICs; with parameter servers, one
// job per layer with replicas, on all its devices.
std::vector<SyncJob> sync_jobs(const CostModel& model, const std::vector<Configuration>& configs);

}  // namespace layerplan
