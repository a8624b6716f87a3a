#include "planner/plan_json.h"

#include <nlohmann/json.hpp>

#include <set>

#include "common/error.h"

namespace layerplan {

using nlohmann::json;

namespace {

json degrees_json(const Degrees& d) {
  json out = json::object();
  for (int dim = 0; dim < kNumDims; ++dim) out[std::string(1, kDimLetters[static_cast<size_t>(dim)])] = d[dim];
  return out;
}

json totals_json(const StrategyCost& s, int64_t batch) {
  return {{"step_s", s.step_s()},
          {"images_per_s", s.step_s() > 0 ? static_cast<double>(batch) / s.step_s() : 0.0},
          {"compute_s", s.compute_s},
          {"transfer_s", s.transfer_s},
          {"sync_s", s.sync_s},
          {"transfer_bytes", s.transfer_bytes},
          {"sync_bytes", s.sync_bytes}};
}

}  // namespace

std::string plan_to_json(const Plan& plan, const ModelGraph& graph, const DeviceGraph& devices) {
  json layers = json::array();
  for (const Layer& l : graph.layers()) {
    const LayerCost& row = plan.chosen.layers[static_cast<size_t>(l.id)];
    json inputs = json::array();
    for (int in : l.inputs) inputs.push_back(graph.layer(in).name);
    layers.push_back({{"id", l.id},
                      {"name", l.name},
                      {"kind", kind_name(l.kind)},
                      {"inputs", inputs},
                      {"output_shape", l.output.extent},
                      {"degrees", degrees_json(row.config.degrees)},
                      {"devices", row.config.devices},
                      {"predicted", {{"compute_s", row.compute_s},
                                     {"transfer_s", row.transfer_s},
                                     {"sync_s", row.sync_s},
                                     {"transfer_bytes", row.transfer_bytes},
                                     {"sync_bytes", row.sync_bytes}}}});
  }
  json baselines = json::array();
  for (const StrategyCost& b : plan.baselines) {
    json entry = totals_json(b, plan.batch);
    entry["name"] = b.name;
    baselines.push_back(entry);
  }
  const Device& d = devices.device();
  json doc = {{"format", "layerplan-plan"},
              {"version", kPlanFormatVersion},
              {"model", plan.model},
              {"batch", plan.batch},
              {"cluster", {{"nodes", devices.nodes()},
                           {"gpus_per_node", devices.gpus_per_node()},
                           {"devices", devices.device_count()},
                           {"gpu", d.model},
                           {"description", devices.describe()}}},
              {"strategy", plan.chosen.name},
              {"predicted", totals_json(plan.chosen, plan.batch)},
              {"layers", layers},
              {"baselines", baselines},
              {"search", {{"seconds", plan.search_s},
                          {"timed_out", plan.timed_out},
                          {"warning", plan.warning},
                          {"node_eliminations", plan.search_stats.node_eliminations},
                          {"edge_eliminations", plan.search_stats.edge_eliminations}}}};
  return doc.dump(2) + "\n";
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
    require(version == kPlanFormatVersion, "plan format version " + std::to_string(version) +
                                               ": expected " + std::to_string(kPlanFormatVersion));
    const std::string model = doc.at("model").get<std::string>();
    require(model == graph.name(), "plan is for model '" + model + "', expected '" + graph.name() + "'");
    const int64_t batch = doc.at("batch").get<int64_t>();
    require(batch == graph.layer(0).output.n(), "plan is for batch " + std::to_string(batch) + ", expected " +
                                                    std::to_string(graph.layer(0).output.n()));
    const int devices = doc.at("cluster").at("devices").get<int>();
    require(devices == device_count, "plan is for " + std::to_string(devices) + " GPUs, expected " +
                                         std::to_string(device_count));
    const json& layers = doc.at("layers");
    require(layers.size() == static_cast<size_t>(graph.size()),
            "plan has " + std::to_string(layers.size()) + " layers, model has " + std::to_string(graph.size()));
    std::vector<Configuration> out;
    for (const Layer& l : graph.layers()) {
      const json& entry = layers.at(static_cast<size_t>(l.id));
      require(entry.at("name").get<std::string>() == l.name,
              "plan layer " + std::to_string(l.id) + " is '" + entry.at("name").get<std::string>() +
                  "', expected '" + l.name + "'");
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
      require(c.tiles() == c.degrees.product() && distinct.size() == c.devices.size() &&
                  *distinct.begin() >= 0 && *distinct.rbegin() < device_count,
              "plan layer " + l.name + ": needs " + std::to_string(c.degrees.product()) +
                  " distinct devices below " + std::to_string(device_count));
      out.push_back(std::move(c));
    }
    return out;
  } catch (const json::exception& err) {
    throw UsageError(std::string("malformed plan file: ") + err.what());
  }
}

}  // namespace layerplan
