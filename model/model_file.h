#pragma once
// Models described in a file rather than built in: a JSON document listing the layers in
// the vocabulary of ModelGraph (docs/model-format.md is its specification). The planner
// reads text, not files; the caller reads the file.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/model_graph.h"

namespace layerplan {

inline constexpr int kModelFormatVersion = 1;

// Builds the model described by `text` for a global batch of `batch` images. Throws
// UsageError that starts with `origin` (the file's path) and names the layer and the
// field at fault: malformed JSON, an unknown kind, a missing or mistyped field, an input
// that is not an earlier layer, a window that does not fit its input.
ModelGraph model_from_json(const std::string& text, int64_t batch, const std::string& origin);

// The model as a model file (the zoo's models can be exported, edited and planned).
std::string model_to_json(const ModelGraph& graph);

// Whether resolve_model() hashes a model file it reads and records it in the graph
// (ModelGraph::file(), which a plan file records): kSkip where nothing will check it, as
// for the report's scaling chart, which reads the model again for each GPU count.
enum class ModelDigest { kRecord, kSkip };

// The model `name` names, for `batch` images: a zoo model; else a model file at
// that path (with a '/' or ending in .json); else NAME.json or NAME in a model_path
// folder. Throws UsageError naming what was tried when nothing is found or readable.
ModelGraph resolve_model(const std::string& name, const std::vector<std::string>& model_path, int64_t batch,
                         ModelDigest digest = ModelDigest::kRecord);

// Whether `name` is a model built into layerplan (model/zoo.h).
bool is_zoo_model(const std::string& name);

// The model in the model file at `path` (ONNX when it ends in .onnx), recorded in the
// graph as resolve_model() does; nullopt when no regular file is there.
std::optional<ModelGraph> read_model_file_at(const std::string& path, int64_t batch);

}  // namespace layerplan
