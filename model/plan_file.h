#pragma once
// Reading a plan file (docs/plan-format.md): the one reader that the CLI, the runtime and
// the SPANK plugin share. The planner writes the file (planner/plan_json.h); everyone else
// reads it here, first its header (what the plan is for) and then, once the model is
// built, its per-layer configurations.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/limits.h"
#include "model/geometry.h"
#include "model/model_graph.h"

namespace layerplan {

inline constexpr int kPlanFormatVersion = 1;
inline constexpr const char* kPlanFormatName = "layerplan-plan";

// Plan files larger than this are refused unread: no plan of a real model comes close.
inline constexpr int64_t kMaxPlanFileBytes = kMaxTextInputBytes;

// What a plan file records of its model (docs/plan-format.md, "The model of a plan").
struct RecordedModel {
  bool has_file_field = false;          // the file has "model_file" (plans made before it have not)
  std::optional<ModelFileOrigin> file;  // model_file: the model file; nullopt for a built-in model
  std::string graph_sha256;             // model_graph_sha256, empty when the file has none
};

// What a plan file says it is for, read before any model is built. Fields the file leaves
// out are empty or zero; the caller decides which it needs.
struct PlanHeader {
  std::string model;              // the model the plan was made for
  RecordedModel recorded;         // where that model came from, and its hashes
  int64_t batch = 0;              // the global batch
  int devices = 0;                // cluster.devices: how many devices the plan spreads over
  int nodes = 0;                  // cluster.nodes
  int gpus_per_node = 0;          // cluster.gpus_per_node
  std::string gpu;                // cluster.gpu, the GPU model priced
  std::string strategy;           // "layer-wise", "data parallel", ...
  double predicted_step_s = 0.0;  // predicted.step_s
};

// The whole file at `path`. `label` names the file in errors, e.g. "plan file 'p.json'".
// Throws UsageError when it cannot be read or is larger than kMaxPlanFileBytes.
std::string read_plan_text(const std::string& path, const std::string& label);

// The header of a plan file's text. Throws UsageError "LABEL is not a layerplan plan file
// (docs/plan-format.md)" when the text is not a JSON object whose format is layerplan-plan.
PlanHeader read_plan_header(const std::string& text, const std::string& label);

// Reads the per-layer configurations of a plan file written for `graph` on `device_count`
// devices. Throws UsageError when the text is not a layerplan plan of a known version,
// was made for another model, batch or device count, or holds a configuration that is
// not valid for its layer.
std::vector<Configuration> configurations_from_json(const std::string& text, const ModelGraph& graph, int device_count);

// A plan file read for running it: `layerplan train` and `layerplan predict` start here.
struct PlanFile {
  std::string path;
  std::string text;
  int64_t batch = 0;
  int devices = 0;
  std::string model;       // the model the plan was made for
  RecordedModel recorded;  // where that model came from, and its hashes
  std::string strategy;    // "layer-wise", "data parallel", ...
};

// Whose plan files a command runs: `layerplan train` only those of the user or root
// (another user who could write the file could make the run train anything).
enum class PlanOwner { kAnyone, kUserOrRoot };

// The Slurm plugin's SHA-256 of the plan file it published for the step (docs/slurm-plugin.md).
inline constexpr const char* kPlanSha256Variable = "LAYERPLAN_PLAN_SHA256";

// The plan at `path`, or at $LAYERPLAN_PLAN when `path` is empty. The file is opened once;
// its owner is checked on the open file (`owner`) and the bytes read are those hashed and
// parsed. When the plan is $LAYERPLAN_PLAN's and $LAYERPLAN_PLAN_SHA256 is set, their
// SHA-256 must be that, so that a file swapped after the plugin published it is refused.
// Throws UsageError when there is none, it cannot be read, belongs to someone else, is not
// the published one, or is not a layerplan plan with a batch and a device count.
PlanFile read_plan_file(const std::optional<std::string>& path, PlanOwner owner = PlanOwner::kAnyone);

// The plan's model built for its batch, found and checked as plan_model() does
// (model/plan_model.h; `model`, --model, takes precedence), and the plan's configuration
// of each of its layers. Throws UsageError.
struct ModelAndPlan {
  ModelGraph graph;
  std::vector<Configuration> plan;
};
ModelAndPlan model_and_plan(const PlanFile& file, const std::optional<std::string>& model,
                            const std::vector<std::string>& model_path);

}  // namespace layerplan
