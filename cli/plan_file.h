#pragma once
// A plan file read for running it: `layerplan train` and `layerplan predict` both start
// here. The file's format is docs/plan-format.md.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/geometry.h"
#include "model/model_graph.h"

namespace layerplan {

struct PlanFile {
  std::string path;
  std::string text;
  int64_t batch = 0;
  int devices = 0;
  std::string model;     // the model the plan was made for
  std::string strategy;  // "layer-wise", "data parallel", ...
};

// The plan at `path`, or at $LAYERPLAN_PLAN when `path` is empty. Throws UsageError when
// there is none, it cannot be read, or it is not a layerplan plan with a batch and a
// device count.
PlanFile read_plan_file(const std::optional<std::string>& path);

// The plan's model built for its batch (`model` overrides the plan's; a plan for another
// model is refused) and the plan's configuration of each of its layers. Throws UsageError.
struct ModelAndPlan {
  ModelGraph graph;
  std::vector<Configuration> plan;
};
ModelAndPlan model_and_plan(const PlanFile& file, const std::optional<std::string>& model,
                            const std::vector<std::string>& model_path);

}  // namespace layerplan
