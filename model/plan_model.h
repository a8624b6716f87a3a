#pragma once
// Finding the model a plan file was made for, and checking that it is that model
// (docs/plan-format.md, "The model of a plan"): `layerplan train`, `predict`,
// `check-plan`, `report` and the SPANK plugin all take a plan's model from here.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/model_graph.h"
#include "model/plan_file.h"

namespace layerplan {

// The model of the plan file at `plan_path` (whose header is `header`), for `batch` images:
//  1. `model` when given (--model): a zoo name, a model file, or a file in `model_path`,
//     as resolve_model() finds them;
//  2. else, when the plan records a model file: that file at its recorded path, else the
//     file of that name in the plan file's folder (UsageError naming both when neither is
//     there);
//  3. else, when it records a built-in model, that model; a plan made before model files
//     were recorded is resolved by its model name, as resolve_model() with `model_path`.
// Then throws UsageError (exit 2) naming the plan file and the model file and what differs
// when the file's size or SHA-256 is not the recorded one, the graph's hash is not the
// recorded one (where recorded), or the model's name is not the plan's.
ModelGraph plan_model(const std::string& plan_path, const PlanHeader& header, const std::optional<std::string>& model,
                      const std::vector<std::string>& model_path, int64_t batch);

// Where plan_model() looks for a recorded model file, in order: its path, then its file
// name in the plan file's folder (once when both are the same path).
std::vector<std::string> recorded_model_candidates(const std::string& plan_path, const ModelFileOrigin& recorded);

}  // namespace layerplan
