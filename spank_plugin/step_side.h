#pragma once
// Where a job step runs (slurmstepd, remote context), on every node of the step:
//   init_post_opt (root)  read the admin config and the node, as the job sees it
//   user_init (the user)  plan, write the plan file, export LAYERPLAN_* to the tasks
//   task_init             fail the task with the reason if anything above failed, or if
//                         the step runs `layerplan train` with a task count other than
//                         the plan's device count
// Slurm drains the node and calls the job a success when init_post_opt or user_init
// fails there, so both record their errors and return 0; task_init raises them.
#include "spank_plugin/spank_api.h"

namespace layerplan::spank {

int step_init(spank_t sp);
int step_init_post_opt(spank_t sp);
int step_user_init(spank_t sp);
int step_task_init(spank_t sp);

}  // namespace layerplan::spank
