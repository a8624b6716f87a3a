#pragma once
// What srun does differently inside a job that asked for layerplan (docs/slurm-plugin.md,
// "A rank that dies"): its tasks are the ranks of one training, so a task that dies must
// end the whole step at once, as `srun --kill-on-bad-exit=1` does; otherwise ranks that
// hold no layer of the plan, or wait on a collective, would go on until their timeout.
namespace layerplan::spank {

// Called in srun's slurm_spank_init (before srun reads its options and environment): in
// a job the plugin planned (LAYERPLAN_PLAN set), sets SLURM_KILL_BAD_EXIT=1 unless the
// environment sets it already. `srun --kill-on-bad-exit=0` still turns it off for a step.
void default_kill_on_bad_exit();

}  // namespace layerplan::spank
