#pragma once
// Checks a file against Chrome's trace event format as Perfetto and chrome://tracing read
// it (the JSON object form): a traceEvents array whose events have ph, pid, tid and name;
// ts in microseconds (a number, not negative) on every B and E event; on each thread, every
// E closing the open B of the same name, at or after it; nothing left open. Returns the
// problems found, empty when none.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace layerplan::testing_trace {

struct TraceSummary {
  std::vector<std::string> problems;
  std::map<int, std::string> process_names;  // pid -> process_name
  std::map<int, double> busy_us;             // pid -> the sum of its spans
  std::map<int, double> end_us;              // pid -> its last E
  int spans = 0;
};

inline TraceSummary check_trace(const std::string& text) {
  TraceSummary s;
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array()) {
    s.problems.push_back("not a JSON object with a traceEvents array");
    return s;
  }
  std::map<std::pair<int, int>, std::vector<std::pair<std::string, double>>> open;  // (pid, tid) -> stack
  for (const nlohmann::json& e : doc["traceEvents"]) {
    for (const char* key : {"ph", "pid", "tid", "name"}) {
      if (!e.contains(key)) s.problems.push_back("event without " + std::string(key) + ": " + e.dump());
    }
    if (!e.contains("ph") || !e.contains("pid") || !e.contains("tid")) continue;
    const std::string ph = e["ph"].get<std::string>();
    const int pid = e["pid"].get<int>();
    const std::pair<int, int> thread{pid, e["tid"].get<int>()};
    if (ph == "M") {
      if (e.value("name", "") == "process_name") s.process_names[pid] = e["args"]["name"].get<std::string>();
      continue;
    }
    if (ph != "B" && ph != "E") {
      s.problems.push_back("unexpected ph " + ph);
      continue;
    }
    if (!e.contains("ts") || !e["ts"].is_number() || e["ts"].get<double>() < 0) {
      s.problems.push_back("B/E event without a non-negative numeric ts: " + e.dump());
      continue;
    }
    const double ts = e["ts"].get<double>();
    const std::string name = e.value("name", "");
    auto& stack = open[thread];
    if (ph == "B") {
      stack.emplace_back(name, ts);
      continue;
    }
    if (stack.empty() || stack.back().first != name || stack.back().second > ts) {
      s.problems.push_back("E of " + name + " at " + std::to_string(ts) + " closes no open B of that name before it");
      continue;
    }
    s.busy_us[pid] += ts - stack.back().second;
    s.end_us[pid] = std::max(s.end_us[pid], ts);
    ++s.spans;
    stack.pop_back();
  }
  for (const auto& [thread, stack] : open) {
    if (!stack.empty()) s.problems.push_back("B of " + stack.back().first + " never ended");
  }
  return s;
}

}  // namespace layerplan::testing_trace
