#include "spank_plugin/srun_defaults.h"

#include <cstdlib>

namespace layerplan::spank {

void default_kill_on_bad_exit() {
  const char* plan = std::getenv("LAYERPLAN_PLAN");
  if (plan == nullptr || *plan == '\0') return;
  ::setenv("SLURM_KILL_BAD_EXIT", "1", /*overwrite=*/0);
}

}  // namespace layerplan::spank
