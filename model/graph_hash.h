#pragma once
// The layer graph's own hash, which a plan file records (docs/plan-format.md, "The model
// of a plan"): it binds a plan to its model whatever the model came from (the zoo, a model
// file or ONNX), where the file's own hash cannot (a built-in model has no file).
#include <string>

#include "model/model_graph.h"

namespace layerplan {

// SHA-256 (64 lowercase hex digits) of a canonical text of the graph: per layer, in id
// order, its name, kind, inputs, output channels, height and width, window, bias, groups,
// activation and constants, batch-norm and dropout settings. Neither the model's name nor
// the batch (the plan records both) enter it. A field added to Layer joins it here.
std::string graph_sha256(const ModelGraph& graph);

}  // namespace layerplan
