#include "runtime/training/train_trace.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/error.h"
#include "common/input_file.h"
#include "common/limits.h"
#include "common/safe_write.h"

namespace layerplan {

namespace {

constexpr int64_t kElementBytes = sizeof(float);  // the runtime trains in fp32

// Elements device `device` sends or receives in the moves into `layer`, in one direction.
int64_t moved_elements(const std::map<std::tuple<int, int, int, int>, int64_t>& moves, int layer, int device) {
  int64_t total = 0;
  for (const auto& [key, elements] : moves) {
    const auto& [consumer, slot, src, dst] = key;
    if (consumer == layer && (src == device || dst == device)) total += elements;
  }
  return total;
}

double layer_seconds(const std::map<int, TrafficCounts::Time>& times, int layer) {
  const auto it = times.find(layer);
  return it == times.end() ? 0.0 : it->second.seconds;
}

// Appends spans one after another on one device.
class DeviceClock {
 public:
  DeviceClock(std::vector<TraceSpan>& spans, int device) : spans_(spans), device_(device) {}
  void add(const std::string& name, const char* category, double seconds, const std::string& layer,
           int64_t bytes = -1) {
    if (seconds <= 0) return;
    spans_.push_back({device_, name, category, now_us_, seconds * 1e6, bytes, layer});
    now_us_ += seconds * 1e6;
  }

 private:
  std::vector<TraceSpan>& spans_;
  int device_;
  double now_us_ = 0;
};

// A device's seconds in one layer; the executor times devices up to the highest one the plan
// uses, so a device the plan leaves idle (past the end) computed nothing.
double device_seconds(const std::vector<std::vector<double>>& table, size_t layer, size_t device) {
  return layer < table.size() && device < table[layer].size() ? table[layer][device] : 0.0;
}

}  // namespace

std::vector<TraceSpan> measured_step_spans(const ModelGraph& graph, const Executor& executor,
                                           const TrafficCounts& counts, double steps, const std::vector<int>& devices) {
  const double per = steps > 0 ? 1.0 / steps : 0.0;
  std::vector<TraceSpan> spans;
  for (const int d : devices) {
    const auto device = static_cast<size_t>(d);
    DeviceClock clock(spans, d);
    for (const Layer& l : graph.layers()) {
      const auto id = static_cast<size_t>(l.id);
      const int64_t bytes =
          moved_elements(counts.forward, l.id, d) * kElementBytes / (steps > 0 ? static_cast<int64_t>(steps) : 1);
      clock.add(l.name + " moves", "transfer", layer_seconds(counts.layer_moves, l.id) * per / 2, l.name, bytes);
      clock.add(l.name, "compute", device_seconds(executor.forward_seconds(), id, device) * per, l.name);
      clock.add(l.name + " statistics", "sync", layer_seconds(counts.layer_statistics, l.id) * per / 2, l.name);
    }
    for (int id = graph.size() - 1; id >= 0; --id) {
      const Layer& l = graph.layer(id);
      const auto i = static_cast<size_t>(id);
      const double backward =
          device_seconds(executor.compute_seconds(), i, device) - device_seconds(executor.forward_seconds(), i, device);
      clock.add(l.name + " backward", "compute", backward * per, l.name);
      clock.add(l.name + " statistics", "sync", layer_seconds(counts.layer_statistics, id) * per / 2, l.name);
      const int64_t bytes =
          moved_elements(counts.backward, id, d) * kElementBytes / (steps > 0 ? static_cast<int64_t>(steps) : 1);
      clock.add(l.name + " moves", "transfer", layer_seconds(counts.layer_moves, id) * per / 2, l.name, bytes);
    }
    clock.add("weight all-reduces", "sync", counts.weight_reductions.seconds * per, "");
    clock.add("loss all-reduce", "sync", counts.loss_reductions.seconds * per, "");
  }
  return spans;
}

void write_trace_part(const std::string& file, bool launched, int rank, const ModelGraph& graph,
                      const Executor& executor, const TrafficCounts& counts, double steps) {
  std::vector<int> devices;
  if (launched) {
    devices.push_back(rank);
  } else if (!executor.compute_seconds().empty()) {
    for (size_t d = 0; d < executor.compute_seconds().front().size(); ++d) devices.push_back(static_cast<int>(d));
  }
  std::vector<TraceProcess> processes;
  processes.reserve(devices.size());
  char steps_text[32];
  std::snprintf(steps_text, sizeof steps_text, "%g", steps);
  for (const int d : devices) {
    processes.push_back(
        {d, (launched ? "rank " : "device ") + std::to_string(d) + " (measured, mean of " + steps_text + " steps)"});
  }
  std::ostringstream out;
  write_trace(out, processes, measured_step_spans(graph, executor, counts, steps, devices));
  write_file_safely(launched ? file + ".rank" + std::to_string(rank) : file, out.str(), "--trace");
}

void merge_trace_parts(const std::string& file, int world_size) {
  nlohmann::json events = nlohmann::json::array();
  for (int rank = 0; rank < world_size; ++rank) {
    const std::string part = file + ".rank" + std::to_string(rank);
    const nlohmann::json doc =
        nlohmann::json::parse(read_input_file(part, "--trace part '" + part + "'", kMaxTextInputBytes), nullptr, false);
    require(doc.is_object() && doc.contains("traceEvents") && doc["traceEvents"].is_array(),
            "--trace part '" + part + "': expected a trace this run wrote");
    for (const nlohmann::json& e : doc["traceEvents"]) events.push_back(e);
  }
  const nlohmann::json merged = {{"displayTimeUnit", "ms"}, {"traceEvents", events}};
  write_file_safely(file, merged.dump() + "\n", "--trace");
  for (int rank = 0; rank < world_size; ++rank) std::filesystem::remove(file + ".rank" + std::to_string(rank));
}

}  // namespace layerplan
