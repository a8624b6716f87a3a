#pragma once
// The search of the step timeline (docs/planner.md, "Searching the timeline"). The timeline
// of a plan is at least the sum of its layers' compute and transfer (sync can only add to
// the step), and that sum is additive, so the exact elimination search (search.h) finds its
// minimum over any subspace. The timeline search:
//  1. rates the seeds (the additive optimum, the baselines, mixes, plans on fewer nodes)
//     and the exact optima of the additive objective with the sync share weighted by 1/4
//     and by 0 (a parametric search over how much of the sync the timeline will hide);
//  2. improves the best by local search on the timeline: one unit's configuration at a
//     time, among those the rated plans use;
//  3. closes the gap by branch and bound: the plans are enumerated in increasing order of
//     the sync-free sum (Lawler's partition of the space, each part's minimum by the exact
//     search), the timeline of each rated, until the next sum is no less than the best
//     timeline found. That proves the best optimal; when the work budget ends first, the
//     smallest sum left is a lower bound on every plan of the space.
#include <cstdint>
#include <vector>

#include "planner/cost_tables.h"
#include "planner/search.h"
#include "planner/timeline_objective.h"

namespace layerplan {

struct TimelineSearchLimits {
  // The sync weights of step 1, the last of them 0 (its optimum is the root of step 3).
  std::vector<double> sync_weights = {0.25, 0.0};
  // The branch and bound stops once its exact searches have visited this many table entries
  // in all (each search visits every entry of the cost graph about once): thousands of
  // searches on small graphs, one to three on the zoo's at 64 GPUs and more, where each
  // takes a tenth of a second or more.
  int64_t work_entries = int64_t{4} << 20;
  int local_passes = 4;  // over all units
  // The local search stops once the plans it rated hold this many (layer, device) pairs in
  // all: a timeline costs about one step per layer and device (its buckets), so this bounds
  // its time: thousands of plans at 64 GPUs, hundreds at 1024.
  int64_t local_work = int64_t{1} << 27;
};

struct TimelineSearchResult {
  std::vector<int> choice;  // configuration index per unit; empty when the search timed out
  double step_s = 0.0;      // its timeline
  double lower_bound_s = 0.0;
  bool proven_optimal = false;
  bool timed_out = false;
  int solves = 0;     // exact searches run
  int64_t rated = 0;  // plans whose timeline was computed
};

// `costs`: the cost graph (compute + sync share per node, over-memory configurations
// penalised; its node costs are changed during the search and restored); `parts.node_sync`:
// the sync share of each node entry; `seeds`: unit choices to rate first. `search` carries
// the deadline and tied groups of the exact searches. `plan_size`: the (layer, device) pairs
// of one plan, for TimelineSearchLimits::local_work.
TimelineSearchResult search_timeline(CostGraph& costs, const CostGraphParts& parts, TimelineObjective& objective,
                                     const std::vector<std::vector<int>>& seeds, const SearchOptions& search,
                                     const TimelineSearchLimits& limits = {}, int64_t plan_size = 1);

}  // namespace layerplan
