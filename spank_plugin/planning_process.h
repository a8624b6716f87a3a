#pragma once
// user_init's work on user input (the model or plan file the job names, the search, the
// plan file) as an isolated child (isolated_child.h): what the child does, the limits it
// runs under, and how the parent checks what came back before any of it reaches Slurm.
// No Slurm calls: step_side.cc logs and exports the checked report.
#include <cstdint>
#include <ctime>
#include <string>

#include "spank_plugin/child_report.h"
#include "spank_plugin/isolated_child.h"
#include "spank_plugin/step_request.h"
#include "topology/admin_config.h"
#include "topology/node_topology.h"

namespace layerplan::spank {

struct PlanningInput {
  StepRequest request;
  NodeTopology node;
  int nodes = 0;
  AdminConfig config;
  uint32_t job_id = 0, step_id = 0;
  std::time_t step_start = 0;
  std::string folder;        // where the plan file goes (the per-user plan folder or the working directory)
  size_t memory_mb = 16384;  // the planning process's address space beyond slurmstepd's
  double margin_s = 30.0;    // and how long it may run past the time budget
  // Plan once for the step's nodes that share the folder (plan_once.h): plan_inputs_key()
  // of the step, and this node as the others' output names it ("node 0 (host1)"). An
  // empty key: this node plans itself.
  std::string plan_key;
  std::string node_label;
};

// How long a node waits for another node's plan: the time budget and half the margin
// (the planner overshoots its budget by the time its tables take to build). A waiter
// that gives up plans itself, so the planning process's wall-clock limit grows by this.
double plan_wait_s(double time_budget_s, double margin_s);

// Past the admin's time_budget_s the search stops by itself and the plan falls back to
// data parallelism; the margin (plugstack argument planning_margin_s, 30 s by default)
// covers reading the model, the cost tables' overshoot, pricing the baselines and writing
// the file. Wall clock: budget + margin (budgets over a day count as a day); CPU time:
// budget + 3/4 of the margin (a child that spins is told so rather than merely timed
// out); address space: `memory_mb` beyond slurmstepd's (plugstack argument
// planning_memory_mb, 16 GiB by default: ResNet-50 on 128 x 8 GPUs takes 6.2 GB even as
// data parallelism, for the planner's edge tables).
ChildLimits planning_limits(double time_budget_s, double margin_s, size_t memory_mb);

// The child's work: plans the step (or takes another node's plan, plan_once.h), publishes
// the plan file in input.folder and returns the encoded ChildReport; every error becomes
// the report's error line. Never throws.
std::string plan_step_report(const PlanningInput& input);

// Runs plan_step_report() in a child that becomes `user`, and returns its report checked
// and made printable (printable()): a path in input.folder without control characters,
// only the LAYERPLAN_* variables with LAYERPLAN_PLAN naming that path. A crash, timeout,
// malformed report or anything else from the child is the report's error: "the planning
// process crashed (signal 11, Segmentation fault)". Never throws.
ChildReport plan_in_child(const PlanningInput& input, const ChildIdentity& user);

}  // namespace layerplan::spank
