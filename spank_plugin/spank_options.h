#pragma once
// The plugin's sbatch/srun options: one table, one callback, registered in every context
// that parses them (local, allocator, remote).
#include "spank_plugin/spank_api.h"

namespace layerplan::spank {

// Registers --layerplan, --layerplan-model, --layerplan-batch and --layerplan-explain.
int register_options(spank_t sp);

}  // namespace layerplan::spank
