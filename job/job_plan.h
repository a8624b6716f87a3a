#pragma once
// One job's plan from what the job asked for and what it got: the glue between the
// topology and the planner that the `layerplan` command and the SPANK plugin share, so
// the plugin holds no planning logic.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/model_graph.h"
#include "planner/planner.h"
#include "topology/admin_config.h"
#include "topology/device_graph.h"
#include "topology/node_topology.h"

namespace layerplan {

// auto: make_plan()'s choice (the fastest candidate, data parallelism within the simplicity margin);
// layerwise: the layer-wise plan; data, model, owt: that baseline.
enum class PlanMode { kAuto, kLayerwise, kData, kModel, kOwt };
// Parses the names above; throws UsageError naming the value otherwise.
PlanMode parse_plan_mode(const std::string& text);
const char* plan_mode_name(PlanMode mode);

// The strategy a mode asks for from a made plan: auto make_plan()'s choice (plan.chosen), layerwise the searched plan,
// the others their baseline. A search that fell back gives data parallelism, with `warning` saying why.
StrategyCost strategy_for_mode(const Plan& plan, PlanMode mode, std::string& warning);

// Sets plan.chosen to strategy_for_mode() and what goes with it: the note, the faster plan
// the margin set aside (auto only), the margin (options.min_gain) and the GPUs the chosen
// strategy leaves idle (record_idle_devices(), priced with `options`).
void choose_for_mode(Plan& plan, PlanMode mode, const ModelGraph& graph, const DeviceGraph& devices,
                     const PlanOptions& options, std::string& warning);

// What a note says when the searched plan is reported though a baseline (or a mix of it
// with data parallelism, planner/mixed_candidates.h) is faster.
std::string searched_plan_note(const Plan& plan);

struct JobRequest {
  PlanMode mode = PlanMode::kAuto;
  std::string model = "resnet50";       // zoo name, or a model file (docs/model-format.md)
  std::vector<std::string> model_path;  // folders searched for NAME.json and NAME
  std::optional<int64_t> batch;         // global; unset = 32 images per GPU
  int nodes = 1;                        // every node is `node` (identical nodes)
  std::optional<double> time_budget_s;
  bool overlap = true;                // PlanOptions::overlap: bucket all-reduces overlap the backward pass
  double min_gain = kDefaultMinGain;  // PlanOptions::min_gain: the simplicity margin
  // A measured profile (job/device_profile.h); unset: the admin config's `[node] profile_db`.
  std::optional<std::string> profile_db;
};

struct JobPlan {
  ModelGraph graph;
  DeviceGraph devices;
  Plan plan;            // plan.chosen is the strategy the mode picked
  std::string warning;  // e.g. the search ran out of time and data parallelism was used
  std::string json;     // the plan file (docs/plan-format.md)
  std::string summary;  // one line: "resnet50 layer-wise on 3x4 H100: 123.4 ms/step, ..."
  // The measured profile the plan was priced with (nullptr: none), and how many layers it priced.
  std::shared_ptr<const DeviceProfile> profile;
  std::string profile_note;
};

// The plan in one line, as the Slurm plugin hands it to the job (LAYERPLAN_SUMMARY), e.g.
// "resnet50 layer-wise on 3 nodes x 4 H100, batch 384: 49.9 ms/step predicted (data parallel
// 52.0 ms)"; when the plan leaves GPUs idle it goes on "; the plan uses 8 of 64 GPUs (1 of 8
// nodes: 6.9 ms/step there)".
std::string summary_line(const JobPlan& job, int nodes);

// Plans `request` on `nodes` copies of `node` (already restricted to the job's GPUs),
// priced with `config`. The modes data, model and owt price the baselines only and run no
// search (their plan's search time is 0 and no configuration was considered). Throws UsageError for an unknown model or
// mode, a batch that does not split, or GPU counts the planner cannot use.
JobPlan plan_job(const JobRequest& request, const NodeTopology& node, const AdminConfig& config);

}  // namespace layerplan
