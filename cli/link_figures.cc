#include "cli/link_figures.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.h"

namespace layerplan {

namespace {

// Linear between the points (x ascending), the nearest point's y outside them.
double interpolate(const std::vector<std::pair<double, double>>& points, double x) {
  if (x <= points.front().first) return points.front().second;
  for (size_t i = 1; i < points.size(); ++i) {
    const auto [x1, y1] = points[i];
    if (x <= x1) {
      const auto [x0, y0] = points[i - 1];
      return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
    }
  }
  return points.back().second;
}

// By gap as `interpolate`, then linear in log(bytes) between the sizes.
double by_size_s(const std::vector<SizedLatency>& sizes, double gap_s, double bytes) {
  std::vector<std::pair<double, double>> by_size;  // (log bytes, time at this gap)
  by_size.reserve(sizes.size());
  for (const SizedLatency& s : sizes) by_size.emplace_back(std::log(s.bytes), interpolate(s.by_gap, gap_s));
  return interpolate(by_size, std::log(std::max(bytes, 1.0)));
}

// `one` for one peer; for more, linear in the peer count towards `all` at `all_peers`
// (clamped there), both for messages of bytes / peers.
double by_peers_s(const LinkFigures& link, const std::vector<SizedLatency>& all, double gap_s, double bytes, int peers,
                  double (LinkFigures::*one)(double, double) const) {
  if (peers <= 1 || all.empty() || link.all_peers <= 1) return (link.*one)(gap_s, bytes);
  const double each = bytes / peers;
  const double single = (link.*one)(gap_s, each);
  const double share = std::min(1.0, static_cast<double>(peers - 1) / (link.all_peers - 1));
  return single + share * (by_size_s(all, gap_s, each) - single);
}

}  // namespace

double LinkFigures::message_s(double gap_s) const {
  return latency_by_gap.empty() ? latency_s : interpolate(latency_by_gap, gap_s);
}

double LinkFigures::message_s(double gap_s, double bytes) const {
  return latency_by_size.empty() ? message_s(gap_s) : by_size_s(latency_by_size, gap_s, bytes);
}

double LinkFigures::one_way_s(double gap_s, double bytes) const {
  return one_way_by_size.empty() ? message_s(gap_s, bytes) : by_size_s(one_way_by_size, gap_s, bytes);
}

double LinkFigures::exchange_s(double gap_s, double bytes, int peers) const {
  return by_peers_s(*this, all_peers_by_size, gap_s, bytes, peers, &LinkFigures::message_s);
}

double LinkFigures::gather_s(double gap_s, double bytes, int peers) const {
  return by_peers_s(*this, fan_in_by_size, gap_s, bytes, peers, &LinkFigures::one_way_s);
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
  // A list of {gap_ms, latency_us}, named `where` in messages, gaps ascending and distinct.
  const auto by_gap = [&](const nlohmann::json& list, const std::string& where) {
    require(list.is_array() && !list.empty(),
            "--link '" + path + "': " + where + ": expected a list of {gap_ms, latency_us}");
    LatencyByGap points;
    for (const nlohmann::json& point : list) {
      points.emplace_back(1e-3 * number(point, "gap_ms", where + ": "),
                          1e-6 * number(point, "latency_us", where + ": "));
    }
    std::sort(points.begin(), points.end());
    const std::string twice = "--link '" + path + "': " + where + " gives one gap twice";
    for (size_t i = 1; i < points.size(); ++i) require(points[i].first > points[i - 1].first, twice);
    return points;
  };
  if (j.contains("latency_by_gap")) link.latency_by_gap = by_gap(j.at("latency_by_gap"), "latency_by_gap");
  // A list of {bytes, latency_by_gap}, sizes ascending and distinct.
  const auto by_size = [&](const char* key) {
    const nlohmann::json& sizes = j.at(key);
    const std::string where = key;
    require(sizes.is_array() && !sizes.empty(),
            "--link '" + path + "': " + where + ": expected a list of {bytes, latency_by_gap}");
    std::vector<SizedLatency> list;
    const std::string at = "--link '" + path + "': " + where + ": ";
    for (const nlohmann::json& size : sizes) {
      SizedLatency s;
      s.bytes = number(size, "bytes", where + ": ");
      require(s.bytes > 0, at + "bytes 0: expected a message size, 1 or more");
      require(size.contains("latency_by_gap"), at + "each size needs its latency_by_gap");
      s.by_gap = by_gap(size.at("latency_by_gap"), where);
      list.push_back(std::move(s));
    }
    std::sort(list.begin(), list.end(), [](const SizedLatency& a, const SizedLatency& b) { return a.bytes < b.bytes; });
    const std::string twice = "--link '" + path + "': " + where + " gives one size twice";
    for (size_t i = 1; i < list.size(); ++i) require(list[i].bytes > list[i - 1].bytes, twice);
    return list;
  };
  if (j.contains("latency_by_size")) link.latency_by_size = by_size("latency_by_size");
  if (j.contains("one_way_by_size")) link.one_way_by_size = by_size("one_way_by_size");
  if (j.contains("all_peers_by_size") || j.contains("fan_in_by_size")) {
    require(j.contains("all_peers_by_size") && j.contains("fan_in_by_size") && j.contains("all_peers"),
            "--link '" + path + "': all_peers_by_size, fan_in_by_size and all_peers come together");
    const double peers = number(j, "all_peers", "");
    require(peers >= 2 && peers == std::floor(peers) && peers <= 1 << 20,
            "--link '" + path + "': all_peers " + std::to_string(peers) + ": expected a whole count of 2 or more");
    link.all_peers = static_cast<int>(peers);
    link.all_peers_by_size = by_size("all_peers_by_size");
    link.fan_in_by_size = by_size("fan_in_by_size");
  }
  return link;
}

}  // namespace layerplan
