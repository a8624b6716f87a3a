#include "spank_plugin/step_request.h"

#include <algorithm>

#include "common/error.h"

namespace layerplan::spank {

StepRequest resolve_step_request(const JobOptions& options, const SlurmDefaults& defaults) {
  StepRequest request;
  request.explain = options.explain;
  request.model_given = options.model.has_value();
  request.model = options.model.value_or(defaults.default_model);
  request.batch_given = options.batch.has_value() || options.batch_per_gpu.has_value();
  request.batch_per_gpu = options.batch_per_gpu;
  if (options.batch) {
    request.batch = *options.batch;
  } else if (defaults.default_batch) {
    request.batch = static_cast<int64_t>(*defaults.default_batch);
  }
  if (options.plan_file) {
    request.off = false;
    request.mode = "file";
    request.plan_file = options.plan_file;
    return request;
  }
  const std::string mode = options.mode.value_or(defaults.default_mode);
  if (mode == "off") {
    const bool any = options.model || options.batch || options.batch_per_gpu || options.explain;
    if (any) {
      request.notes.push_back(
          std::string("--layerplan-model, --layerplan-batch(-per-gpu) and --layerplan-explain have no effect: ") +
          "layerplan is off for this job (" + (options.mode ? "--layerplan=off" : "the cluster's default") + ")");
    }
    return request;
  }
  const auto& allowed = defaults.allowed_modes;
  if (std::find(allowed.begin(), allowed.end(), mode) == allowed.end()) {
    std::string list;
    for (const std::string& m : allowed) list += (list.empty() ? "" : ", ") + m;
    throw UsageError("--layerplan '" + mode + "' is not allowed on this cluster: expected one of " + list);
  }
  request.off = false;
  request.mode = mode;
  return request;
}

std::optional<int64_t> step_batch(const StepRequest& request, int devices) {
  if (!request.batch_per_gpu) return request.batch;
  const int64_t per_gpu = *request.batch_per_gpu;
  require(devices >= 1 && per_gpu <= kMaxBatch / devices,
          "--layerplan-batch-per-gpu " + std::to_string(per_gpu) + " on " + std::to_string(devices) +
              " GPUs: expected a global batch of at most " + std::to_string(kMaxBatch) + " images");
  return per_gpu * devices;
}

}  // namespace layerplan::spank
