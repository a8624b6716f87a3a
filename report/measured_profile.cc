#include "report/measured_profile.h"

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/input_file.h"
#include "common/limits.h"

namespace layerplan::report {

namespace {

double seconds_of(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end()) return 0;
  if (it->is_object()) return seconds_of(*it, "seconds");
  return it->is_number() ? it->get<double>() : 0;
}

}  // namespace

MeasuredProfile read_measured_profile(const std::string& path) {
  const std::string label = "--measured '" + path + "'";
  const std::string text = read_input_file(path, label, kMaxTextInputBytes);
  check_json_depth(text, label);
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
  require(json.is_object() && json.contains("layers") && json["layers"].is_array() && json.contains("rank"),
          label + ": expected a profile written by `layerplan train --profile`");
  MeasuredProfile profile;
  profile.file = path;
  profile.rank = json["rank"].is_number_integer() ? json["rank"].get<int>() : 0;
  profile.steps = seconds_of(json, "steps");
  for (const nlohmann::json& layer : json["layers"]) {
    require(layer.is_object() && layer.contains("layer") && layer["layer"].is_string(),
            label + ": expected every entry of layers to name its layer");
    profile.layers.push_back({layer["layer"].get<std::string>(), seconds_of(layer, "compute_s"),
                              seconds_of(layer, "moves"), seconds_of(layer, "statistics_reductions")});
  }
  if (json.contains("communication") && json["communication"].is_object()) {
    profile.weight_reductions_s = seconds_of(json["communication"], "weight_reductions");
    profile.loss_reductions_s = seconds_of(json["communication"], "loss_reductions");
  }
  return profile;
}

}  // namespace layerplan::report
