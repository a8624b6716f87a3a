#pragma once
// The step timeline (step_timeline.h) of a unit assignment, priced from the search's own
// tables: each layer's compute from the cost model (cached per configuration), each edge's
// transfer from its cost table, and the buckets' all-reduces as price_strategy() prices
// them. The same number as price_strategy(...).step_s(), at a fraction of its cost, so
// that the timeline search (timeline_search.h) can rate thousands of plans.
#include <cstdint>
#include <vector>

#include "model/geometry.h"
#include "planner/cost_model.h"
#include "planner/cost_tables.h"
#include "planner/search.h"
#include "planner/step_timeline.h"

namespace layerplan {

// A layer's span on the critical path: half of its edges' transfer time is the forward
// move, half the gradients' move back.
inline LayerSpan layer_span(const PassTimes& passes, double transfer_s) {
  return {transfer_s / 2 + passes.forward_s, passes.backward_s + transfer_s / 2};
}

class TimelineObjective {
 public:
  // `costs` and `parts` as build_cost_graph() made them for `units`; all must outlive this.
  TimelineObjective(const CostModel& model, const SearchUnits& units, const CostGraph& costs,
                    const CostGraphParts& parts);

  // The step of one configuration index per unit; a unit configuration the search
  // penalised as over memory adds that penalty (memory_fit.h).
  double step_s(const std::vector<int>& choice);
  // The per-layer configurations of `choice`.
  std::vector<Configuration> configurations(const std::vector<int>& choice) const;
  // One index per unit for per-layer `configs`, or empty when they are not in the units'
  // spaces (a fused member configured unlike its unit's head, or a configuration the space
  // leaves out).
  std::vector<int> choice_of(const std::vector<Configuration>& configs) const;

  int64_t evaluations() const { return evaluations_; }

 private:
  const PassTimes& passes(int layer, int config);

  const CostModel& model_;
  const SearchUnits& units_;
  const CostGraph& costs_;
  const CostGraphParts& parts_;
  std::vector<std::vector<PassTimes>> passes_;  // per layer and unit configuration
  std::vector<std::vector<char>> priced_;       // whether passes_ holds the entry yet
  int64_t evaluations_ = 0;
};

}  // namespace layerplan
