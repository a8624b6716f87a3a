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

// Writes `text` into the folder `dir` as the calling (effective) user, mode 0600, and
// returns the path. Refuses a folder everyone may write to without the sticky bit.
//  - A private folder (the user's own, writable by nobody else: the per-user folder under
//    plan_dir, or a working directory of one's own): the file is DIR/NAME, shared by the
//    step's nodes. If NAME exists it must be a regular file of this user: the same plan
//    (plan_difference() empty) is fine; different content written since `step_start` − 60 s
//    is another node of this step that planned differently (UsageError naming the
//    difference); older content is a stale file of an earlier job with the same id and is
//    replaced by rename.
//  - A folder others may write to (a sticky /tmp, a group's folder): another user could
//    create NAME first, so each node writes its own DIR/NAME-with-a-random-suffix
//    ("layerplan-12.0.3f9a0c1d2b4e5f60.json") and nodes are not compared.
// Either way the text goes first to a temporary file with a random name (O_EXCL,
// O_NOFOLLOW; common/safe_write.h) that is then link()ed to its name, which never
// replaces a file.
// Throws UsageError naming the path for every failure.
std::string publish_plan(const std::string& dir, const std::string& name, const std::string& text,
                         std::time_t step_start);

}  // namespace layerplan::spank
