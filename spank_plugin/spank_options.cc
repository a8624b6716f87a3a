#include "spank_plugin/spank_options.h"

#include <exception>

#include "common/error.h"
#include "spank_plugin/output_text.h"
#include "spank_plugin/plugin_state.h"

namespace layerplan::spank {

namespace {

// struct spank_option wants char*, so the strings live in writable arrays.
char kModeName[] = "layerplan";
char kModeArg[] = "MODE|PLANFILE";
char kModeUsage[] =
    "[layerplan] Plan the job's parallelism at start: auto, layerwise, data, model, owt or off, "
    "or the path of a plan file to use as is. Tasks get LAYERPLAN_PLAN, LAYERPLAN_MODE, "
    "LAYERPLAN_STEP_MS and LAYERPLAN_SUMMARY.";
char kModelName[] = "layerplan-model";
char kModelArg[] = "NAME|PATH";
char kModelUsage[] = "[layerplan] Model to plan: a zoo name (layerplan models) or a model file.";
char kBatchName[] = "layerplan-batch";
char kBatchArg[] = "N";
char kBatchUsage[] = "[layerplan] Global batch: images per step over all GPUs (default: 32 per GPU).";
char kBatchPerGpuName[] = "layerplan-batch-per-gpu";
char kBatchPerGpuUsage[] =
    "[layerplan] Images per step on each GPU, as DDP counts them: the global batch is N times the "
    "step's GPUs (instead of --layerplan-batch).";
char kExplainName[] = "layerplan-explain";
char kExplainUsage[] = "[layerplan] Print the plan table into the job's output.";

// Validates and stores one value. Locally a bad value fails srun/sbatch at once; on the
// remote side Slurm would silently drop the option, so the error is kept for task_init.
int option_callback(int val, const char* optarg, int remote) {
  PluginState& s = state();
  try {
    set_job_option(s.options, static_cast<OptionId>(val), optarg);
    s.any_option = true;
    return 0;
  } catch (const std::exception& e) {
    if (remote) {
      if (s.error.empty()) s.error = e.what();
      return 0;
    }
    slurm_error("layerplan: %s", printable(e.what()).c_str());
    return -1;
  } catch (...) {
    if (remote) {
      if (s.error.empty()) s.error = "internal error while reading an option";
      return 0;
    }
    slurm_error("layerplan: internal error while reading an option");
    return -1;
  }
}

struct spank_option kOptions[] = {
    {kModeName, kModeArg, kModeUsage, 1, static_cast<int>(OptionId::kMode), option_callback},
    {kModelName, kModelArg, kModelUsage, 1, static_cast<int>(OptionId::kModel), option_callback},
    {kBatchName, kBatchArg, kBatchUsage, 1, static_cast<int>(OptionId::kBatch), option_callback},
    {kBatchPerGpuName, kBatchArg, kBatchPerGpuUsage, 1, static_cast<int>(OptionId::kBatchPerGpu), option_callback},
    {kExplainName, nullptr, kExplainUsage, 0, static_cast<int>(OptionId::kExplain), option_callback},
};

}  // namespace

int register_options(spank_t sp) {
  for (struct spank_option& option : kOptions) {
    const spank_err_t rc = spank_option_register(sp, &option);
    if (rc != ESPANK_SUCCESS) {
      slurm_error("layerplan: cannot register --%s: %s", option.name, spank_strerror(rc));
      return -1;
    }
  }
  return 0;
}

}  // namespace layerplan::spank
