#pragma once
// What the plugin keeps between Slurm's callbacks. Each Slurm process (srun, sbatch,
// slurmstepd) loads the plugin afresh, so one global per process is enough.
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>

#include "spank_plugin/isolated_child.h"
#include "spank_plugin/job_options.h"
#include "spank_plugin/plugstack_args.h"
#include "spank_plugin/step_plan.h"
#include "spank_plugin/step_request.h"
#include "topology/admin_config.h"
#include "topology/node_topology.h"

namespace layerplan::spank {

struct PluginState {
  PlugstackArgs args;
  std::string args_error;  // plugstack.conf arguments that did not parse
  JobOptions options;
  bool any_option = false;     // the job gave at least one --layerplan* option
  bool wrong_release = false;  // loaded by another Slurm release: every callback does nothing

  // Remote (slurmstepd) side.
  std::time_t start = 0;
  std::string error;    // recorded by init_post_opt/user_init, raised by task_init
  std::string notice;   // a warning for the job's output, printed by user_init
  bool active = false;  // plan this step (layerplan not off, nothing failed so far)
  AdminConfig config;
  StepRequest request;
  NodeTopology node;
  int nodes = 0;
  uint32_t job_id = 0, step_id = 0, node_id = 0;
  ChildIdentity user;            // the job's user, whom the planning process becomes
  std::string user_plan_dir;     // PLAN_DIR/USER when the admin set plan_dir (made by root)
  std::string plan_inputs_text;  // the admin config's text and overrides, for plan_inputs_key()
  double discover_ms = 0.0;
};

PluginState& state();

}  // namespace layerplan::spank
