#include "model/plan_file.h"

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/error.h"
#include "model/layer_math.h"
#include "model/model_file.h"

namespace layerplan {

using nlohmann::json;

std::string read_plan_text(const std::string& path, const std::string& label) {
  std::ifstream in(path, std::ios::binary);
  require(in.is_open(), label + " cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  require(text.tellp() <= kMaxPlanFileBytes, label + " is larger than 64 MiB");
  return text.str();
}

PlanHeader read_plan_header(const std::string& text, const std::string& label) {
  const json doc = json::parse(text, nullptr, false);
  require(doc.is_object() && doc.value("format", "") == kPlanFormatName,
          label + " is not a layerplan plan file (docs/plan-format.md)");
  const json cluster = doc.value("cluster", json::object());
  const json predicted = doc.value("predicted", json::object());
  PlanHeader header;
  try {
    header.model = doc.value("model", std::string());
    header.batch = doc.value("batch", int64_t{0});
    header.devices = cluster.value("devices", 0);
    header.nodes = cluster.value("nodes", 0);
    header.gpus_per_node = cluster.value("gpus_per_node", 0);
    header.gpu = cluster.value("gpu", std::string());
    header.strategy = doc.value("strategy", std::string());
    header.predicted_step_s = predicted.is_object() ? predicted.value("step_s", 0.0) : 0.0;
  } catch (const json::exception& err) {
    throw UsageError(label + " is malformed: " + err.what());
  }
  return header;
}

std::vector<Configuration> configurations_from_json(const std::string& text, const ModelGraph& graph,
                                                    int device_count) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& err) {
    throw UsageError(std::string("plan file is not JSON: ") + err.what());
  }
  try {
    require(doc.value("format", "") == "layerplan-plan", "not a layerplan plan file (format is not layerplan-plan)");
    const int version = doc.at("version").get<int>();
    require(version == kPlanFormatVersion,
            "plan format version " + std::to_string(version) + ": expected " + std::to_string(kPlanFormatVersion));
    const std::string model = doc.at("model").get<std::string>();
    require(model == graph.name(), "plan is for model '" + model + "', expected '" + graph.name() + "'");
    const int64_t batch = doc.at("batch").get<int64_t>();
    require(batch == graph.layer(0).output.n(),
            "plan is for batch " + std::to_string(batch) + ", expected " + std::to_string(graph.layer(0).output.n()));
    const int devices = doc.at("cluster").at("devices").get<int>();
    require(devices == device_count,
            "plan is for " + std::to_string(devices) + " GPUs, expected " + std::to_string(device_count));
    const json& layers = doc.at("layers");
    require(layers.size() == static_cast<size_t>(graph.size()),
            "plan has " + std::to_string(layers.size()) + " layers, model has " + std::to_string(graph.size()));
    std::vector<Configuration> out;
    for (const Layer& l : graph.layers()) {
      const json& entry = layers.at(static_cast<size_t>(l.id));
      require(entry.at("name").get<std::string>() == l.name, "plan layer " + std::to_string(l.id) + " is '" +
                                                                 entry.at("name").get<std::string>() + "', expected '" +
                                                                 l.name + "'");
      require(entry.at("kind").get<std::string>() == kind_name(l.kind) &&
                  entry.at("output_shape").get<std::array<int64_t, kNumDims>>() == l.output.extent,
              "plan layer " + l.name + " is a " + entry.at("kind").get<std::string>() + " of another shape, expected " +
                  std::string(kind_name(l.kind)) + " " + l.output.str());
      Configuration c;
      const auto splittable = splittable_dims(l.kind);
      for (int dim = 0; dim < kNumDims; ++dim) {
        const int degree = entry.at("degrees").at(std::string(1, kDimLetters[static_cast<size_t>(dim)])).get<int>();
        require(degree >= 1 && (degree == 1 || splittable[static_cast<size_t>(dim)]) && l.output[dim] % degree == 0,
                "plan layer " + l.name + ": degree " + std::to_string(degree) + " along " +
                    kDimLetters[static_cast<size_t>(dim)] + " is not a valid split of extent " +
                    std::to_string(l.output[dim]));
        c.degrees.d[static_cast<size_t>(dim)] = degree;
      }
      c.devices = entry.at("devices").get<std::vector<int>>();
      const std::set<int> distinct(c.devices.begin(), c.devices.end());
      require(c.tiles() == c.degrees.product() && distinct.size() == c.devices.size() && *distinct.begin() >= 0 &&
                  *distinct.rbegin() < device_count,
              "plan layer " + l.name + ": needs " + std::to_string(c.degrees.product()) + " distinct devices below " +
                  std::to_string(device_count));
      out.push_back(std::move(c));
    }
    return out;
  } catch (const json::exception& err) {
    throw UsageError(std::string("malformed plan file: ") + err.what());
  }
}

PlanFile read_plan_file(const std::optional<std::string>& path) {
  const char* env_plan = std::getenv("LAYERPLAN_PLAN");
  PlanFile file;
  file.path = path.value_or(env_plan ? env_plan : "");
  require(!file.path.empty(), "no plan: give --plan FILE or set LAYERPLAN_PLAN");
  const std::string label = "plan file '" + file.path + "'";
  file.text = read_plan_text(file.path, label);
  const PlanHeader header = read_plan_header(file.text, label);
  require(header.batch >= 1 && header.devices >= 1, label + " names no batch or device count");
  file.batch = header.batch;
  file.devices = header.devices;
  file.model = header.model;
  file.strategy = header.strategy.empty() ? "?" : header.strategy;
  return file;
}

ModelAndPlan model_and_plan(const PlanFile& file, const std::optional<std::string>& model,
                            const std::vector<std::string>& model_path) {
  ModelGraph graph = resolve_model(model.value_or(file.model), model_path, file.batch);
  require(graph.name() == file.model,
          "plan file '" + file.path + "' is for model '" + file.model + "', not '" + graph.name() + "'");
  std::vector<Configuration> plan = configurations_from_json(file.text, graph, file.devices);
  return {std::move(graph), std::move(plan)};
}

}  // namespace layerplan
