#pragma once
// What the plugin does for one job step: the job's options completed by the admin's
// [slurm] defaults and checked against the allowed modes. Pure.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spank_plugin/job_options.h"
#include "topology/admin_config.h"

namespace layerplan::spank {

struct StepRequest {
  bool off = true;                       // leave the job untouched
  std::string mode;                      // auto | layerwise | data | model | owt, or "file"
  std::optional<std::string> plan_file;  // mode "file": the plan to use as is
  std::string model;                     // zoo name or model file
  bool model_given = false;              // --layerplan-model was given (else the default)
  std::optional<int64_t> batch;          // unset: the admin's default_batch, else 32 per GPU
  std::optional<int64_t> batch_per_gpu;  // --layerplan-batch-per-gpu: batch = this x the step's GPUs
  bool batch_given = false;              // --layerplan-batch or --layerplan-batch-per-gpu was given
  bool explain = false;
  std::vector<std::string> notes;  // options that have no effect, for the user
};

// Throws UsageError when the mode is not among the admin's allowed_modes.
StepRequest resolve_step_request(const JobOptions& options, const SlurmDefaults& defaults);

// The global batch of a step on `devices` GPUs: the per-GPU batch times `devices` when one was
// asked for, else `request.batch` (unset: the planner's 32 per GPU). Throws UsageError when
// the product exceeds kMaxBatch.
std::optional<int64_t> step_batch(const StepRequest& request, int devices);

}  // namespace layerplan::spank
