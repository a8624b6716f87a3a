#pragma once
// The plan of one job step on one node: discover the node as the job sees it, then plan
// the job with the shared glue (job/job_plan.h) or check a plan file the user gave.
// No Slurm calls: the remote side hands in the step's environment and geometry.
#include <string>
#include <vector>

#include "spank_plugin/step_request.h"
#include "topology/admin_config.h"
#include "topology/discovery.h"
#include "topology/node_topology.h"

namespace layerplan::spank {

struct StepPlan {
  std::string json;                  // the plan file's text
  std::string mode;                  // LAYERPLAN_MODE: the mode, or "file" for a plan file given as is
  double step_ms = 0.0;              // predicted time of one training step
  std::string summary;               // one line for LAYERPLAN_SUMMARY and the job's output
  std::string warning;               // non-empty when the search fell back to data parallelism
  std::vector<std::string> explain;  // the plan table, when --layerplan-explain asked for it
  std::string report_html;           // the HTML report, when --layerplan-explain asked for it
};

// The node's topology restricted to the step's GPUs: the admin's topology_xml, else the
// daemon's $LAYERPLAN_TOPOLOGY_XML, else the live machine. Throws UsageError when the
// step has no GPUs (none of the three variables is set) or discovery fails.
NodeTopology discover_step_node(const AdminConfig& config, const GpuEnvironment& env);

// Plans the step on `nodes` copies of `node`, within config.slurm.time_budget_s. For a
// plan file: reads it (the caller runs as the job's user), takes its model and batch
// unless the job named them, and checks it against that model and the step's device
// count. Throws UsageError for an unknown or unreadable model, a batch that does not
// split, or a plan file that does not fit.
StepPlan plan_step(const StepRequest& request, const NodeTopology& node, int nodes, const AdminConfig& config);

}  // namespace layerplan::spank
