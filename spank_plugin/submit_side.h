#pragma once
// Where a job is submitted (srun: local context; sbatch/salloc: allocator context): check
// the options against the admin config so a mistake fails the command at once.
#include "spank_plugin/spank_api.h"

namespace layerplan::spank {

// init_post_opt there: 0, or -1 after printing why (srun/sbatch then exit non-zero).
int submit_init_post_opt(spank_t sp);

}  // namespace layerplan::spank
