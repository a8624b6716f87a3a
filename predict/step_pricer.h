#pragma once
// Prices the communication of one training step of a plan around its measured compute
// (docs/runtime.md, "Predicting a CPU run"): the ranks as devices of one node joined by
// the measured link, the bytes of box moves, gradient buckets, batch-norm statistics and
// the loss priced by the planner's cost model over the link's bandwidth, and every message
// the executor sends at the time the link benchmark measured for a message of its size and
// shape after as much compute as the executor does before it (predict/link_figures.h).
#include <vector>

#include "model/geometry.h"
#include "model/model_graph.h"
#include "planner/cost_model.h"
#include "predict/link_figures.h"
#include "predict/measurement.h"
#include "predict/move_shape.h"
#include "predict/step_prediction.h"
#include "runtime/executor/gradient_buckets.h"
#include "topology/device_graph.h"

namespace layerplan {

// A layer's input edges and batch-norm statistics, priced once for every step.
struct LayerTraffic {
  std::vector<TransferCost> edges;  // per input slot, both ways
  std::vector<MoveShape> forward_shapes, backward_shapes;
  double statistics_s = 0;  // its statistics' bytes, both ways; 0: none reduced
};

class StepPricer {
 public:
  // `graph` and `plan` must outlive the pricer. Throws UsageError when `devices` or the
  // link's bandwidth make no cluster. `overlap`: the executor's ExecutorOptions::overlap
  // (`train --overlap`): the buckets' rings run on each rank's communication thread while
  // the backward goes on, and only what is left of them after it adds to the step.
  StepPricer(const ModelGraph& graph, const std::vector<Configuration>& plan, int devices, const LinkFigures& link,
             bool overlap = false);
  StepPricer(const StepPricer&) = delete;  // cost_ refers to devices_
  StepPricer& operator=(const StepPricer&) = delete;

  // One step with the `measured` compute: the layers' compute and forward parts, the
  // executor's overhead and the data as measured, the communication priced. Throws
  // std::invalid_argument when `measured` is not of the graph's layers.
  StepPrediction price(const MeasuredSteps& measured) const;

  const std::vector<GradientBucket>& buckets() const { return buckets_; }

 private:
  class Walk;  // one step's messages in the executor's order (step_pricer.cc)

  const ModelGraph& graph_;
  const std::vector<Configuration>& plan_;
  int device_count_;
  LinkFigures link_;
  bool overlap_;
  DeviceGraph devices_;
  CostModel cost_;
  std::vector<LayerTraffic> traffic_;    // per layer
  std::vector<GradientBucket> buckets_;  // in the order the executor reduces them
  std::vector<int> used_;                // the devices the loss is reduced among
};

// The prediction of one step of `plan` on `devices` devices joined by `link`, with the
// `measured` compute: StepPricer(graph, plan, devices, link).price(measured).
StepPrediction predict_step(const ModelGraph& graph, const std::vector<Configuration>& plan, int devices,
                            const MeasuredSteps& measured, const LinkFigures& link, bool overlap = false);

}  // namespace layerplan
