// The SPANK entry points: the only symbols the plugin exports. Each one dispatches on
// the Slurm context (as NVIDIA's pyxis does) and lets no exception reach Slurm.
#include <exception>

#include "spank_plugin/plugin_state.h"
#include "spank_plugin/release_guard.h"
#include "spank_plugin/spank_api.h"
#include "spank_plugin/spank_options.h"
#include "spank_plugin/srun_defaults.h"
#include "spank_plugin/step_side.h"
#include "spank_plugin/submit_side.h"

// C++ would give these const objects internal linkage; Slurm looks them up by name.
#pragma GCC visibility push(default)
extern "C" {
extern const char plugin_name[];
extern const char plugin_type[];
extern const unsigned int plugin_version;
extern const unsigned int spank_plugin_version;
SPANK_PLUGIN(layerplan, 1)
}
#pragma GCC visibility pop

namespace layerplan::spank {

PluginState& state() {
  static PluginState s;
  return s;
}

namespace {

bool submit_context() {
  const spank_context_t ctx = spank_context();
  return ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR;
}

}  // namespace

}  // namespace layerplan::spank

using namespace layerplan::spank;

#define LAYERPLAN_EXPORT extern "C" __attribute__((visibility("default")))

LAYERPLAN_EXPORT int slurm_spank_init(spank_t sp, int ac, char** av) {
  try {
    const spank_context_t ctx = spank_context();
    if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR && ctx != S_CTX_REMOTE) return 0;
    PluginState& s = state();
    if (wrong_slurm_release(sp)) {  // logged; off for the whole job, never failing it
      s.wrong_release = true;
      register_options(sp);  // so that command lines giving the options still parse
      return 0;
    }
    try {
      s.args = parse_plugstack_args(ac, av);
    } catch (const std::exception& e) {
      // Reported where it matters: at submission or job start of jobs that use layerplan.
      s.args_error = e.what();
    }
    if (ctx == S_CTX_LOCAL) default_kill_on_bad_exit();
    if (ctx != S_CTX_REMOTE) return register_options(sp);
    step_init(sp);
    // A failing remote init would drain the node: record it for task_init instead.
    if (register_options(sp) != 0 && s.error.empty()) s.error = "cannot register the layerplan options";
    return 0;
  } catch (...) {
    slurm_error("layerplan: internal error in init");
    return spank_context() == S_CTX_REMOTE ? 0 : -1;
  }
}

LAYERPLAN_EXPORT int slurm_spank_init_post_opt(spank_t sp, int, char**) {
  try {
    if (state().wrong_release) return 0;
    if (submit_context()) return submit_init_post_opt(sp);
    if (spank_context() == S_CTX_REMOTE) return step_init_post_opt(sp);
    return 0;
  } catch (...) {
    return submit_context() ? -1 : 0;
  }
}

LAYERPLAN_EXPORT int slurm_spank_user_init(spank_t sp, int, char**) {
  try {
    if (state().wrong_release) return 0;
    return step_user_init(sp);
  } catch (...) {
    return 0;
  }
}

LAYERPLAN_EXPORT int slurm_spank_task_init(spank_t sp, int, char**) {
  try {
    if (state().wrong_release) return 0;
    return step_task_init(sp);
  } catch (...) {
    return -1;
  }
}
