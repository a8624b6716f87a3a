#include "model/plan_file.h"

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

#include "common/error.h"
#include "common/index.h"
#include "common/input_file.h"
#include "common/limits.h"
#include "common/text.h"
#include "model/json_input.h"
#include "model/layer_math.h"
#include "model/model_file.h"

namespace layerplan {

using nlohmann::json;

namespace {

// `object[key]`, or nullptr when `object` is not an object or has no such key.
const json* find_field(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// `object[key]`; UsageError "WHERE: missing NAME" when absent.
const json& need_field(const json& object, const char* key, const std::string& where, const std::string& name) {
  const json* v = find_field(object, key);
  require(v != nullptr, where + ": missing " + name);
  return *v;
}

// Throws unless `doc` is a plan of this format and version.
void require_plan_format(const json& doc, const std::string& label) {
  const json* format = find_field(doc, "format");
  require(format != nullptr && format->is_string() && format->get_ref<const std::string&>() == kPlanFormatName,
          label + " is not a layerplan plan file (" +
              (doc.is_object() ? "format " + (format ? describe_json(*format) : std::string("missing"))
                               : "not a JSON object") +
              ", expected \"" + kPlanFormatName + "\"; docs/plan-format.md)");
}

void read_cluster_header(const json& cluster, const std::string& label, PlanHeader& header) {
  require(cluster.is_object(), label + ": cluster " + describe_json(cluster) + ": expected an object");
  if (const json* v = find_field(cluster, "devices")) {
    header.devices = static_cast<int>(json_integer(*v, label, "cluster.devices", 1, kMaxDevices));
  }
  if (const json* v = find_field(cluster, "nodes")) {
    header.nodes = static_cast<int>(json_integer(*v, label, "cluster.nodes", 1, kMaxDevices));
  }
  if (const json* v = find_field(cluster, "gpus_per_node")) {
    header.gpus_per_node = static_cast<int>(json_integer(*v, label, "cluster.gpus_per_node", 1, kMaxDevices));
  }
  if (const json* v = find_field(cluster, "gpu")) header.gpu = json_string(*v, label, "cluster.gpu");
}

// The degrees of a plan layer: each in range, a valid split of its extent, and their
// product at most the device count (checked in 64 bits before anything multiplies them).
Degrees read_degrees(const json& entry, const Layer& l, int device_count, const std::string& where) {
  const json& degrees = need_field(entry, "degrees", where, "degrees");
  const auto splittable = splittable_dims(l.kind);
  Degrees out;
  for (int dim = 0; dim < kNumDims; ++dim) {
    const auto d = static_cast<size_t>(dim);
    const std::string letter(1, kDimLetters[d]);
    const auto degree = static_cast<int>(json_integer(need_field(degrees, letter.c_str(), where, "degrees." + letter),
                                                      where, "degrees." + letter, 1, kMaxDevices));
    require((degree == 1 || splittable[d]) && l.output[dim] % degree == 0,
            where + ": degree " + std::to_string(degree) + " along " + letter + " is not a valid split of extent " +
                std::to_string(l.output[dim]));
    out.d[d] = degree;
  }
  require(product_within({out[0], out[1], out[2], out[3]}, device_count).has_value(),
          where + ": degrees " + std::to_string(out[0]) + "x" + std::to_string(out[1]) + "x" + std::to_string(out[2]) +
              "x" + std::to_string(out[3]) + " make more tiles than the " + std::to_string(device_count) + " devices");
  return out;
}

Configuration read_configuration(const json& entry, const Layer& l, int device_count) {
  const std::string where = "plan layer " + clipped(l.name);
  require(entry.is_object(), where + ": " + describe_json(entry) + ": expected an object");
  const std::string name = json_string(need_field(entry, "name", where, "name"), where, "name");
  require(name == l.name,
          "plan layer " + std::to_string(l.id) + " is '" + clipped(name) + "', expected '" + clipped(l.name) + "'");
  const std::string kind = json_string(need_field(entry, "kind", where, "kind"), where, "kind");
  require(
      kind == kind_name(l.kind) && need_field(entry, "output_shape", where, "output_shape") == json(l.output.extent),
      where + " is a " + clipped(kind) + " of another shape, expected " + std::string(kind_name(l.kind)) + " " +
          l.output.str());
  Configuration c;
  c.degrees = read_degrees(entry, l, device_count, where);
  const json& devices = need_field(entry, "devices", where, "devices");
  require(devices.is_array() && devices.size() == static_cast<size_t>(c.degrees.product()),
          where + ": devices " + describe_json(devices) + ": needs " + std::to_string(c.degrees.product()) +
              " distinct devices below " + std::to_string(device_count));
  for (const json& d : devices) {
    c.devices.push_back(static_cast<int>(json_integer(d, where, "device", 0, device_count - 1)));
  }
  const std::set<int> distinct(c.devices.begin(), c.devices.end());
  require(distinct.size() == c.devices.size(), where + ": needs " + std::to_string(c.degrees.product()) +
                                                   " distinct devices below " + std::to_string(device_count));
  return c;
}

}  // namespace

std::string read_plan_text(const std::string& path, const std::string& label) {
  return read_input_file(path, label, kMaxPlanFileBytes);
}

PlanHeader read_plan_header(const std::string& text, const std::string& label) {
  const json doc = parse_json_input(text, label);
  require_plan_format(doc, label);
  PlanHeader header;
  if (const json* v = find_field(doc, "model")) header.model = json_string(*v, label, "model");
  if (const json* v = find_field(doc, "batch")) header.batch = json_integer(*v, label, "batch", 1, kMaxBatch);
  if (const json* v = find_field(doc, "cluster")) read_cluster_header(*v, label, header);
  if (const json* v = find_field(doc, "strategy")) header.strategy = json_string(*v, label, "strategy");
  const json* predicted = find_field(doc, "predicted");
  if (const json* v = predicted ? find_field(*predicted, "step_s") : nullptr; v && !v->is_null()) {
    header.predicted_step_s = json_number(*v, label, "predicted.step_s");
  }
  return header;
}

std::vector<Configuration> configurations_from_json(const std::string& text, const ModelGraph& graph,
                                                    int device_count) {
  const std::string where = "plan file";
  const json doc = parse_json_input(text, where);
  require_plan_format(doc, where);
  const int64_t version =
      json_integer(need_field(doc, "version", where, "version"), where, "version", 0, kMaxModelField);
  require(version == kPlanFormatVersion,
          "plan format version " + std::to_string(version) + ": expected " + std::to_string(kPlanFormatVersion));
  const std::string model = json_string(need_field(doc, "model", where, "model"), where, "model");
  require(model == graph.name(), "plan is for model '" + clipped(model) + "', expected '" + graph.name() + "'");
  const int64_t batch = json_integer(need_field(doc, "batch", where, "batch"), where, "batch", 1, kMaxBatch);
  require(batch == graph.layer(0).output.n(),
          "plan is for batch " + std::to_string(batch) + ", expected " + std::to_string(graph.layer(0).output.n()));
  const json& cluster = need_field(doc, "cluster", where, "cluster");
  const int64_t devices =
      json_integer(need_field(cluster, "devices", where, "cluster.devices"), where, "cluster.devices", 1, kMaxDevices);
  require(devices == device_count,
          "plan is for " + std::to_string(devices) + " GPUs, expected " + std::to_string(device_count));
  const json& layers = need_field(doc, "layers", where, "layers");
  require(layers.is_array() && layers.size() == static_cast<size_t>(graph.size()),
          "plan has " + (layers.is_array() ? std::to_string(layers.size()) + " layers" : describe_json(layers)) +
              ", model has " + std::to_string(graph.size()));
  std::vector<Configuration> out;
  out.reserve(layers.size());
  for (const Layer& l : graph.layers())
    out.push_back(read_configuration(layers[static_cast<size_t>(l.id)], l, device_count));
  return out;
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
