#include "cli/link_figures.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.h"

namespace layerplan {

double LinkFigures::message_s(double gap_s) const {
  if (latency_by_gap.empty()) return latency_s;
  if (gap_s <= latency_by_gap.front().first) return latency_by_gap.front().second;
  for (size_t i = 1; i < latency_by_gap.size(); ++i) {
    const auto [g1, t1] = latency_by_gap[i];
    if (gap_s <= g1) {
      const auto [g0, t0] = latency_by_gap[i - 1];
      return t0 + (t1 - t0) * (gap_s - g0) / (g1 - g0);
    }
  }
  return latency_by_gap.back().second;
}

LinkFigures read_link_figures(const std::string& path) {
  std::ifstream in(path);
  require(in.is_open(), "--link '" + path + "': cannot be read");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError("--link '" + path + "': not JSON (" + e.what() + ")");
  }
  const auto number = [&](const nlohmann::json& object, const char* key, const std::string& where) {
    require(object.is_object() && object.contains(key) && object.at(key).is_number(),
            "--link '" + path + "': " + where + " needs a number '" + key + "' (as bench/gloo_link_bench writes)");
    const double v = object.at(key).get<double>();
    require(std::isfinite(v) && v >= 0, "--link '" + path + "': " + where + key + " " + std::to_string(v) +
                                            ": expected a finite number, 0 or more");
    return v;
  };
  LinkFigures link;
  link.gbytes = number(j, "bandwidth_gbytes", "");
  require(link.gbytes > 0, "--link '" + path + "': bandwidth_gbytes 0: expected a positive bandwidth");
  link.latency_s = 1e-6 * number(j, "latency_us", "");
  if (j.contains("latency_by_gap")) {
    require(j.at("latency_by_gap").is_array() && !j.at("latency_by_gap").empty(),
            "--link '" + path + "': latency_by_gap: expected a list of {gap_ms, latency_us}");
    for (const nlohmann::json& point : j.at("latency_by_gap")) {
      link.latency_by_gap.emplace_back(1e-3 * number(point, "gap_ms", "latency_by_gap: "),
                                       1e-6 * number(point, "latency_us", "latency_by_gap: "));
    }
    std::sort(link.latency_by_gap.begin(), link.latency_by_gap.end());
    for (size_t i = 1; i < link.latency_by_gap.size(); ++i) {
      require(link.latency_by_gap[i].first > link.latency_by_gap[i - 1].first,
              "--link '" + path + "': latency_by_gap gives one gap twice");
    }
  }
  return link;
}

}  // namespace layerplan
