#pragma once
// Planning a job step once for all of its nodes where they share the plan folder
// (docs/slurm-plugin.md, "Plan once per step"). In the plan folder, the first node to
// create the lock file `.layerplan-JOB.STEP.KEY.lock` (O_CREAT|O_EXCL) plans and publishes
// the plan, then writes its report to the marker `.layerplan-JOB.STEP.KEY.done`
// (atomically: a temporary file renamed onto it). The other nodes find the lock taken and
// poll for the marker, within a bound, and take the plan from it (the plan file by its name
// in their own folder, which may be mounted elsewhere on the winner). KEY hashes what the plan
// depends on, so nodes that would plan differently never share a plan (they plan
// themselves and the plan file's comparison catches the difference).
//
// Every node plans itself, as without this, where the folder is not shared (node-local:
// each node creates its own lock), where others may write to it (they could forge a lock
// or a marker), where the winner failed or stopped, or when its marker does not come
// within the bound. A lock or marker written more than 60 s before the step started
// belongs to an earlier job with the same id and is removed. Runs in the planning
// process (as the job's user); no Slurm calls, no threads.
#include <ctime>
#include <functional>
#include <string>

#include "spank_plugin/child_report.h"
#include "spank_plugin/step_request.h"
#include "topology/node_topology.h"

namespace layerplan::spank {

// 16 hex digits (FNV-1a, 64 bits) of what a step's plan depends on: the request (mode,
// model, batch, explain), the node count, the node as discovered (GPUs, links, NICs,
// switches; not where it was read from) and `config_text` (the admin config's text and
// the plugstack overrides). Nodes that would plan the same get the same key.
std::string plan_inputs_key(const StepRequest& request, const NodeTopology& node, int nodes,
                            const std::string& config_text);

struct PlanOnceSetup {
  std::string folder;      // the plan folder
  std::string stem;        // "layerplan-12.0.KEY": the lock is .STEM.lock, the marker .STEM.done
  std::string node_label;  // who we are, e.g. "node 0 (host1)": the waiters' output names it
  std::time_t step_start = 0;
  double wait_s = 10.0;  // how long a node waits for another node's plan
  double poll_s = 0.05;  // how often it looks
};

// What each node's output says: "planned here", "plan from node 0 (host1)",
// "planned here: shared plan not ready after 25 s", or another "planned here: WHY".
// plan_here() plans and publishes on this node; it may throw (the winner then writes a
// marker saying so, so that the waiters plan themselves at once, and rethrows). Returns
// plan_here()'s report or the winner's, with `origin` set. Errors of the lock and marker
// files never fail the step: that node plans itself.
ChildReport plan_once(const PlanOnceSetup& setup, const std::function<ChildReport()>& plan_here);

}  // namespace layerplan::spank
