#include "planner/timeline_search.h"

#include <algorithm>
#include <queue>
#include <set>
#include <utility>

#include "planner/memory_fit.h"

namespace layerplan {

namespace {

// A configuration a part of the space leaves out: far above any plan, penalised ones
// included (memory_fit.h), so that an exact search chooses it only where nothing else is left.
constexpr double kExcluded = 1e16;
constexpr double kInfeasible = 1e15;
// Timelines and sums are the same seconds added in another order: differences below this
// share are rounding.
constexpr double kRounding = 1e-12;

// A part of the space in Lawler's partition: some units fixed, some configurations excluded.
struct Part {
  std::vector<int> fixed;                     // per unit: its configuration, or -1
  std::vector<std::pair<int, int>> excluded;  // (unit, configuration)
  double bound = 0.0;                         // no plan of the part has a smaller sum
  std::vector<int> solution;                  // the part's minimum sum, once searched
  int64_t order = 0;                          // ties go to the part made first
};

struct LaterPart {
  bool operator()(const Part& a, const Part& b) const {
    return a.bound != b.bound ? a.bound > b.bound : a.order > b.order;
  }
};

class TimelineSearch {
 public:
  TimelineSearch(CostGraph& costs, const CostGraphParts& parts, TimelineObjective& objective,
                 const SearchOptions& search, const TimelineSearchLimits& limits, int64_t plan_size)
      : plan_size_(std::max<int64_t>(1, plan_size)),
        costs_(costs),
        nodes_(costs.node_cost),
        parts_(parts),
        objective_(objective),
        search_(search),
        limits_(limits) {
    candidates_.resize(costs.node_cost.size());
    for (const std::vector<double>& n : costs.node_cost) entries_ += static_cast<int64_t>(n.size());
    for (const CostEdge& e : costs.edges) entries_ += static_cast<int64_t>(e.cost.size());
  }

  TimelineSearchResult run(const std::vector<std::vector<int>>& seeds) {
    for (const std::vector<int>& seed : seeds) {
      if (!seed.empty()) rate(seed);
    }
    Part root;
    root.fixed.assign(costs_.node_cost.size(), -1);
    for (const double weight : limits_.sync_weights) {
      const SearchResult r = solve_weighted(weight, root);
      if (r.timed_out || r.too_large || r.choice.empty()) return finish(false);
      rate(r.choice);
      if (weight == limits_.sync_weights.back()) {
        root.bound = r.cost;
        root.solution = r.choice;
      }
    }
    improve_locally();
    return branch_and_bound(std::move(root));
  }

 private:
  void rate(const std::vector<int>& choice) {
    const double step = objective_.step_s(choice);
    ++out_.rated;
    for (size_t u = 0; u < choice.size(); ++u) candidates_[u].insert(choice[u]);
    if (out_.choice.empty() || step < out_.step_s) {
      out_.choice = choice;
      out_.step_s = step;
    }
  }

  // One unit's configuration at a time, among those of the plans rated so far.
  void improve_locally() {
    const int64_t most = limits_.local_work / plan_size_;
    int64_t rated = 0;
    for (int pass = 0; pass < limits_.local_passes; ++pass) {
      bool improved = false;
      for (size_t u = 0; u < candidates_.size(); ++u) {
        const std::set<int> options = candidates_[u];  // rate() may add to it
        for (const int c : options) {
          if (c == out_.choice[u]) continue;
          if (++rated > most) return;
          std::vector<int> trial = out_.choice;
          trial[u] = c;
          const double before = out_.step_s;
          rate(trial);
          improved |= out_.step_s < before;
        }
      }
      if (!improved) return;
    }
  }

  // The exact minimum over `part` of Σ compute + transfer + weight · sync.
  SearchResult solve_weighted(double weight, const Part& part) {
    std::vector<std::vector<double>> nodes = nodes_;
    for (size_t u = 0; u < nodes.size(); ++u) {
      for (size_t c = 0; c < nodes[u].size(); ++c) {
        nodes[u][c] -= (1.0 - weight) * parts_.node_sync[u][c];
        if (part.fixed[u] >= 0 && static_cast<int>(c) != part.fixed[u]) nodes[u][c] = kExcluded;
      }
    }
    for (const auto& [u, c] : part.excluded) nodes[static_cast<size_t>(u)][static_cast<size_t>(c)] = kExcluded;
    // The cost graph's own tables, with these node costs for the time of the search.
    std::swap(costs_.node_cost, nodes);
    SearchResult r = solve(costs_, search_);
    std::swap(costs_.node_cost, nodes);
    ++out_.solves;
    work_done_ += entries_;
    return r;
  }

  // Lawler's partition, searched best-first by the sync-free sum; a part's children get
  // their own minimum only when they come first in the queue.
  TimelineSearchResult branch_and_bound(Part root) {
    std::priority_queue<Part, std::vector<Part>, LaterPart> queue;
    queue.push(std::move(root));
    int64_t made = 1;
    while (!queue.empty()) {
      if (queue.top().bound >= out_.step_s * (1.0 - kRounding)) return finish(true, out_.step_s);
      if (work_done_ >= limits_.work_entries) return finish(false, queue.top().bound);
      Part part = queue.top();
      queue.pop();
      if (part.solution.empty()) {
        const SearchResult r = solve_weighted(0.0, part);
        if (r.timed_out || r.too_large) return finish(false, std::min(part.bound, out_.step_s));
        if (r.choice.empty() || r.cost >= kInfeasible) continue;
        part.bound = std::max(part.bound, r.cost);
        part.solution = r.choice;
        queue.push(std::move(part));
        continue;
      }
      rate(part.solution);
      std::vector<int> fixed = part.fixed;
      for (size_t u = 0; u < fixed.size(); ++u) {
        if (part.fixed[u] >= 0) continue;
        Part child;
        child.fixed = fixed;
        child.excluded = part.excluded;
        child.excluded.emplace_back(static_cast<int>(u), part.solution[u]);
        child.bound = part.bound;
        child.order = made++;
        queue.push(std::move(child));
        fixed[u] = part.solution[u];
      }
    }
    return finish(true, out_.step_s);
  }

  TimelineSearchResult finish(bool proven, double bound = 0.0) {
    out_.proven_optimal = proven && !out_.choice.empty() && out_.step_s < kOverMemoryPenalty_s;
    out_.lower_bound_s = out_.step_s < kOverMemoryPenalty_s ? std::min(bound, out_.step_s) : 0.0;
    out_.timed_out = out_.choice.empty();
    return out_;
  }

  const int64_t plan_size_;  // (layer, device) pairs of one plan
  CostGraph& costs_;
  const std::vector<std::vector<double>> nodes_;  // the node costs as given
  const CostGraphParts& parts_;
  TimelineObjective& objective_;
  const SearchOptions& search_;
  const TimelineSearchLimits limits_;
  std::vector<std::set<int>> candidates_;  // per unit: the configurations rated plans use
  int64_t entries_ = 0;                    // of the cost graph's tables
  int64_t work_done_ = 0;
  TimelineSearchResult out_;
};

}  // namespace

TimelineSearchResult search_timeline(CostGraph& costs, const CostGraphParts& parts, TimelineObjective& objective,
                                     const std::vector<std::vector<int>>& seeds, const SearchOptions& search,
                                     const TimelineSearchLimits& limits, int64_t plan_size) {
  return TimelineSearch(costs, parts, objective, search, limits, plan_size).run(seeds);
}

}  // namespace layerplan
