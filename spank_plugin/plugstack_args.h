#pragma once
// The arguments after the plugin's path in plugstack.conf:
//   optional spank_layerplan.so config=/etc/slurm/layerplan.toml default_mode=auto
// `config=` names the admin TOML; `planning_memory_mb=` the address space the planning
// process may map beyond slurmstepd's and `planning_margin_s=` how long past time_budget_s
// it may run (planning_process.h); `plan_once=auto|off` whether the nodes of a step that
// share the plan folder plan once (plan_once.h; auto, the default) or each plans; every
// other `key=value` overrides that key of its [slurm] table. Unknown keys and malformed values are errors,
// as in the TOML itself.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "topology/admin_config.h"

namespace layerplan::spank {

struct PlugstackArgs {
  std::string config_path;            // empty: the built-in defaults
  size_t planning_memory_mb = 16384;  // RLIMIT_AS of the planning process, over slurmstepd's
  double planning_margin_s = 30.0;    // the planning process is killed at time_budget_s plus this
  bool plan_once = true;              // plan_once=auto (the default) or off
  std::vector<std::pair<std::string, std::string>> overrides;  // [slurm] key, value; in order
};

// Parses `argv[0..argc)`. Throws UsageError "plugstack.conf argument 'ARG': …" for an
// argument without '=', an unknown key or a malformed value.
PlugstackArgs parse_plugstack_args(int argc, const char* const* argv);

// The admin config the arguments describe: the file (or the defaults), then the
// overrides, validated together. Throws UsageError naming the file or the argument.
AdminConfig load_plugin_config(const PlugstackArgs& args);

}  // namespace layerplan::spank
