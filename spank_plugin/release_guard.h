#pragma once
// The plugin's check, at load, of the Slurm release that loaded it (slurm_release.h).
#include "spank_plugin/spank_api.h"

namespace layerplan::spank {

// True when the running Slurm's major.minor is not the one <slurm/slurm_version.h> gave at
// build time; then it has logged the one error that says so.
bool wrong_slurm_release(spank_t sp);

}  // namespace layerplan::spank
