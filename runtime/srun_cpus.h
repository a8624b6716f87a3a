#pragma once
// The CPUs of one srun task, so that the tasks of a node do not oversubscribe its cores
// (docs/runtime.md, "CPUs of the ranks"): under `srun`, when Slurm did not bind the task
// itself (TaskPlugin=task/none, or --cpu-bind=none), each task takes its share of the CPUs
// it may use by its local rank, as `layerplan launch` does for its ranks.
#include <optional>
#include <string>
#include <vector>

#include "common/cpu_shares.h"

namespace layerplan {

// Slurm's SLURM_STEP_TASKS_PER_NODE ("2(x3),1": 2 tasks on each of 3 nodes, then 1) as one
// count per node of the step. Throws UsageError naming the text when it is malformed.
std::vector<int> parse_tasks_per_node(const std::string& text);

// What the environment of an srun task says about its CPUs.
struct SrunTask {
  int local_rank = 0;          // SLURM_LOCALID
  int node_index = 0;          // SLURM_NODEID: the node's index in the step
  std::string tasks_per_node;  // SLURM_STEP_TASKS_PER_NODE
  std::string cpu_bind_type;   // SLURM_CPU_BIND_TYPE: set when Slurm bound the task
};
SrunTask srun_task_from_env();

// This task's share of `allowed` (the CPUs it may use now): all of `allowed` when Slurm bound
// the task already (a bind type other than "none"), else the local_rank-th of an even split
// among the node's tasks. nullopt when the environment gives no task layout.
std::optional<CpuShare> srun_cpu_share(const SrunTask& task, const std::vector<int>& allowed);

// Pins the calling process to `share.cpus` (sched_setaffinity); throws UsageError when the
// kernel refuses.
void pin_to(const CpuShare& share);

}  // namespace layerplan
