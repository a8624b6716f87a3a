#pragma once
// What a job asked for with --layerplan, --layerplan-model, --layerplan-batch (or
// --layerplan-batch-per-gpu) and --layerplan-explain, validated as Slurm hands each value over. Pure: no Slurm calls,
// so the option callbacks stay thin and the rules have unit tests.
#include <cstdint>
#include <optional>
#include <string>

namespace layerplan::spank {

enum class OptionId { kMode = 1, kModel, kBatch, kExplain, kBatchPerGpu };

// 16 Mi images per step: far beyond any real batch, and small enough that tensor sizes
// computed from it cannot overflow 64 bits.
constexpr int64_t kMaxBatch = int64_t{1} << 24;

struct JobOptions {
  std::optional<std::string> mode;       // auto | layerwise | data | model | owt | off
  std::optional<std::string> plan_file;  // --layerplan=PATH: a plan file used as is
  std::optional<std::string> model;      // zoo name or model file
  std::optional<int64_t> batch;          // global batch, >= 1
  std::optional<int64_t> batch_per_gpu;  // images per GPU, >= 1; the two replace each other
  bool explain = false;
};

// Stores one option's value (`value` is null for --layerplan-explain). Slurm calls option
// callbacks more than once (environment first, then the command line; twice on the remote
// side of an srun), so a repeat is accepted and a later value replaces an earlier one, as
// `srun --layerplan=data` inside an `#SBATCH --layerplan=auto` script expects.
// Throws UsageError naming the option, the value and what was expected.
void set_job_option(JobOptions& options, OptionId id, const char* value);

// True when `value` names a plan file rather than a mode: it holds a '/' or ends in .json.
bool looks_like_plan_file(const std::string& value);

}  // namespace layerplan::spank
