#include "model/plan_model.h"

#include <filesystem>

#include "common/error.h"
#include "common/text.h"
#include "model/graph_hash.h"
#include "model/model_file.h"

namespace layerplan {

namespace {

namespace fs = std::filesystem;

// Enough of a SHA-256 to tell two apart in a message.
std::string short_hash(const std::string& sha256) { return sha256.substr(0, 16) + "..."; }

std::string quoted(const std::string& path) { return "'" + clipped(path, 4 * kMaxQuotedChars) + "'"; }

// The recorded model file where it is found, or UsageError naming where it looked.
ModelGraph find_recorded_file(const std::string& plan_path, const ModelFileOrigin& recorded, int64_t batch) {
  const std::vector<std::string> candidates = recorded_model_candidates(plan_path, recorded);
  for (const std::string& path : candidates) {
    if (std::optional<ModelGraph> graph = read_model_file_at(path, batch)) return std::move(*graph);
  }
  std::string looked;
  for (const std::string& path : candidates) looked += (looked.empty() ? "" : " and ") + quoted(path);
  throw UsageError("plan file " + quoted(plan_path) + " was made from model file " + quoted(recorded.path) +
                   ", which is not there (looked at " + looked + "): give the model file with --model");
}

// The model file found must hold the bytes the plan was made from.
void check_file(const std::string& plan_path, const ModelFileOrigin& recorded, const ModelFileOrigin& found) {
  std::string differs;
  if (found.size != recorded.size) {
    differs = "its size is " + std::to_string(found.size) + " bytes, not " + std::to_string(recorded.size);
  }
  if (found.sha256 != recorded.sha256) {
    differs += (differs.empty() ? "" : "; ") + std::string("its SHA-256 is ") + short_hash(found.sha256) + ", not " +
               short_hash(recorded.sha256);
  }
  const std::string made_from = found.path == recorded.path ? "" : " (" + quoted(recorded.path) + ")";
  require(differs.empty(), "model file " + quoted(found.path) + " is not the one plan file " + quoted(plan_path) +
                               " was made from" + made_from + ": " + differs + "; make the plan again for this model");
}

std::string model_label(const ModelGraph& graph) {
  return graph.file() ? "model file " + quoted(graph.file()->path) : "model '" + clipped(graph.name()) + "'";
}

// The layer graph must be the one the plan was made for, where the plan says which.
void check_graph(const std::string& plan_path, const std::string& recorded, const ModelGraph& graph) {
  if (recorded.empty()) return;
  const std::string have = graph_sha256(graph);
  require(have == recorded, "the layer graph of " + model_label(graph) + " is not the one plan file " +
                                quoted(plan_path) + " was made for: its hash is " + short_hash(have) + ", the plan's " +
                                short_hash(recorded) + "; make the plan again for this model");
}

ModelGraph find_model(const std::string& plan_path, const PlanHeader& header, const std::optional<std::string>& model,
                      const std::vector<std::string>& model_path, int64_t batch) {
  const RecordedModel& recorded = header.recorded;
  if (model) return resolve_model(*model, model_path, batch);
  if (recorded.file) return find_recorded_file(plan_path, *recorded.file, batch);
  if (recorded.has_file_field) {
    require(is_zoo_model(header.model), "plan file " + quoted(plan_path) + " was made for the built-in model '" +
                                            clipped(header.model) + "', which this layerplan does not have");
    return resolve_model(header.model, {}, batch);
  }
  return resolve_model(header.model, model_path, batch);  // a plan from before model_file
}

}  // namespace

std::vector<std::string> recorded_model_candidates(const std::string& plan_path, const ModelFileOrigin& recorded) {
  std::vector<std::string> out{recorded.path};
  fs::path folder = fs::path(plan_path).parent_path();
  if (folder.empty()) folder = ".";
  const fs::path beside = folder / fs::path(recorded.path).filename();
  if (fs::absolute(beside).lexically_normal() != fs::path(recorded.path).lexically_normal()) {
    out.push_back(beside.string());
  }
  return out;
}

ModelGraph plan_model(const std::string& plan_path, const PlanHeader& header, const std::optional<std::string>& model,
                      const std::vector<std::string>& model_path, int64_t batch) {
  ModelGraph graph = find_model(plan_path, header, model, model_path, batch);
  if (header.recorded.file && graph.file()) check_file(plan_path, *header.recorded.file, *graph.file());
  require(graph.name() == header.model, "plan file " + quoted(plan_path) + " is for model '" + clipped(header.model) +
                                            "', not '" + clipped(graph.name()) + "'");
  check_graph(plan_path, header.recorded.graph_sha256, graph);
  return graph;
}

}  // namespace layerplan
