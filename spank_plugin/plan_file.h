#pragma once
// Publishing the plan file. Every node of a step plans on its own and writes the same
// name in the same folder (shared, when the job's working directory is); the first one
// in creates the file, the others check theirs is identical. Nothing is ever written
// through a symlink or over another user's file, and no reader sees half a file.
#include <cstdint>
#include <ctime>
#include <string>

namespace layerplan::spank {

// Slurm's step ids for the batch script, the external step and an interactive step.
inline constexpr uint32_t kBatchStepId = 0xfffffffbU;
inline constexpr uint32_t kExternStepId = 0xfffffffcU;
inline constexpr uint32_t kInteractiveStepId = 0xfffffffaU;

// The step as Slurm prints it: its number, or batch / extern / interactive.
std::string step_label(uint32_t step_id);
// "layerplan-JOB.STEP.json", STEP as step_label() gives it.
std::string plan_file_name(uint32_t job_id, uint32_t step_id);

// What differs between two plan files (cluster, model, batch or strategy), e.g.
// "GPU 'NVIDIA A100-SXM4-40GB' here, 'NVIDIA H100 80GB HBM3' in the file", or
// "the per-layer plans differ" when only those do. Empty when they hold the same plan
// (the search's wall-clock time, which differs from node to node, is not compared).
std::string plan_difference(const std::string& ours, const std::string& theirs);

// Writes `text` to DIR/NAME as the calling (effective) user and returns the path:
// a private temporary DIR/.NAME.NODE.PID.tmp (O_EXCL, O_NOFOLLOW), then link() to NAME,
// which never replaces a file. If NAME exists it must be a regular file of this user:
// the same plan (plan_difference() empty) is fine; different content written since `step_start` − 60 s is
// another node of this step that planned differently (UsageError naming the
// difference); older content is a stale file of an earlier job with the same id and is
// replaced by rename. Throws UsageError naming the path for every failure.
std::string publish_plan(const std::string& dir, const std::string& name, int node_id, const std::string& text,
                         std::time_t step_start);

}  // namespace layerplan::spank
