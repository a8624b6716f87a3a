#include "predict/link_figures.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "common/error.h"
#include "common/input_file.h"

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

// Reads the parts of bench/gloo_link_bench's JSON; every error names the file, the list
// (`where`, empty at the top level) and what is wrong.
class LinkFileReader {
 public:
  explicit LinkFileReader(std::string path) : path_(std::move(path)) {}

  nlohmann::json parse(const std::string& text) const {
    check_json_depth(text, "--link '" + path_ + "'");
    try {
      return nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      // Only the position: the parser's message quotes the text.
      throw UsageError(message("", "not JSON (syntax error at byte " + std::to_string(e.byte) + ")"));
    } catch (const nlohmann::json::exception&) {
      throw UsageError(message("", "not JSON that can be read (a number beyond the range of a double?)"));
    }
  }

  // Throws UsageError unless `ok`.
  void check(bool ok, const std::string& where, const std::string& what) const {
    if (!ok) throw UsageError(message(where, what));
  }

  // `object`'s number `key`: finite, 0 or more.
  double number(const nlohmann::json& object, const char* key, const std::string& where) const {
    check(object.is_object() && object.contains(key) && object.at(key).is_number(), where,
          std::string(" needs a number '") + key + "' (as bench/gloo_link_bench writes)");
    const double v = object.at(key).get<double>();
    check(std::isfinite(v) && v >= 0, where, key + (" " + std::to_string(v)) + ": expected a finite number, 0 or more");
    return v;
  }

  // A list of {gap_ms, latency_us}, gaps ascending and distinct.
  LatencyByGap by_gap(const nlohmann::json& list, const std::string& where) const {
    check(list.is_array() && !list.empty(), where, ": expected a list of {gap_ms, latency_us}");
    LatencyByGap points;
    points.reserve(list.size());
    const std::string in_list = where + ": ";
    for (const nlohmann::json& point : list) {
      points.emplace_back(1e-3 * number(point, "gap_ms", in_list), 1e-6 * number(point, "latency_us", in_list));
    }
    std::sort(points.begin(), points.end());
    for (size_t i = 1; i < points.size(); ++i)
      check(points[i].first > points[i - 1].first, where, " gives one gap twice");
    return points;
  }

  // The list `key` of `j`: {bytes, latency_by_gap}, sizes ascending and distinct.
  std::vector<SizedLatency> by_size(const nlohmann::json& j, const char* key) const {
    const nlohmann::json& sizes = j.at(key);
    const std::string where = key;
    check(sizes.is_array() && !sizes.empty(), where, ": expected a list of {bytes, latency_by_gap}");
    std::vector<SizedLatency> list;
    list.reserve(sizes.size());
    for (const nlohmann::json& size : sizes) list.push_back(sized_latency(size, where));
    std::sort(list.begin(), list.end(), [](const SizedLatency& a, const SizedLatency& b) { return a.bytes < b.bytes; });
    for (size_t i = 1; i < list.size(); ++i) check(list[i].bytes > list[i - 1].bytes, where, " gives one size twice");
    return list;
  }

 private:
  SizedLatency sized_latency(const nlohmann::json& size, const std::string& where) const {
    SizedLatency s;
    s.bytes = number(size, "bytes", where + ": ");
    check(s.bytes > 0, where, ": bytes 0: expected a message size, 1 or more");
    check(size.contains("latency_by_gap"), where, ": each size needs its latency_by_gap");
    s.by_gap = by_gap(size.at("latency_by_gap"), where);
    return s;
  }

  std::string message(const std::string& where, const std::string& what) const {
    std::string m = "--link '";
    m += path_;
    m += "': ";
    m += where;
    m += what;
    return m;
  }

  std::string path_;
};

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
  return link_figures_from_json(read_input_file(path, "--link '" + path + "'", kMaxTextInputBytes), path);
}

LinkFigures link_figures_from_json(const std::string& text, const std::string& path) {
  const LinkFileReader reader(path);
  const nlohmann::json j = reader.parse(text);
  LinkFigures link;
  link.gbytes = reader.number(j, "bandwidth_gbytes", "");
  reader.check(link.gbytes > 0, "", "bandwidth_gbytes 0: expected a positive bandwidth");
  link.latency_s = 1e-6 * reader.number(j, "latency_us", "");
  if (j.contains("latency_by_gap")) link.latency_by_gap = reader.by_gap(j.at("latency_by_gap"), "latency_by_gap");
  if (j.contains("latency_by_size")) link.latency_by_size = reader.by_size(j, "latency_by_size");
  if (j.contains("one_way_by_size")) link.one_way_by_size = reader.by_size(j, "one_way_by_size");
  if (j.contains("all_peers_by_size") || j.contains("fan_in_by_size")) {
    reader.check(j.contains("all_peers_by_size") && j.contains("fan_in_by_size") && j.contains("all_peers"), "",
                 "all_peers_by_size, fan_in_by_size and all_peers come together");
    const double peers = reader.number(j, "all_peers", "");
    reader.check(peers >= 2 && peers == std::floor(peers) && peers <= 1 << 20, "",
                 "all_peers " + std::to_string(peers) + ": expected a whole count of 2 or more");
    link.all_peers = static_cast<int>(peers);
    link.all_peers_by_size = reader.by_size(j, "all_peers_by_size");
    link.fan_in_by_size = reader.by_size(j, "fan_in_by_size");
  }
  return link;
}

}  // namespace layerplan
