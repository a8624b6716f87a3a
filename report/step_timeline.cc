#include "report/step_timeline.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "model/geometry.h"

namespace layerplan::report {

const char* step_phase_name(StepPhase phase) {
  switch (phase) {
    case StepPhase::kTransfer:
      return "transfer";
    case StepPhase::kCompute:
      return "compute";
    case StepPhase::kSync:
      return "sync";
  }
  return "?";
}

namespace {

std::vector<int> sorted_devices(const Configuration& config) {
  std::vector<int> devices = config.devices;
  std::sort(devices.begin(), devices.end());
  return devices;
}

// The moves into `layer`: every device that sends or receives, with its share of the
// layer's bytes (a pair's elements count for both ends; both directions are priced).
TimelinePhase transfer_phase(const ModelGraph& graph, const Layer& layer, const StrategyCost& cost) {
  TimelinePhase phase;
  phase.layer = layer.id;
  phase.kind = StepPhase::kTransfer;
  const LayerCost& row = cost.layers[static_cast<size_t>(layer.id)];
  phase.duration_s = row.transfer_s;
  phase.bytes = row.transfer_bytes;
  std::map<int, int64_t> elements;  // device -> elements it sends or receives
  int64_t moved = 0;
  for (int slot = 0; slot < static_cast<int>(layer.inputs.size()); ++slot) {
    const Configuration& producer = cost.layers[static_cast<size_t>(layer.inputs[static_cast<size_t>(slot)])].config;
    for (const PairVolume& v : transfer_volumes(graph, layer, slot, producer, row.config)) {
      elements[v.src] += v.elements;
      elements[v.dst] += v.elements;
      moved += v.elements;
    }
  }
  // transfer_bytes counts each pair's elements forward and back; a device sends and
  // receives its elements once each way too.
  const double bytes_per_element = moved > 0 ? static_cast<double>(row.transfer_bytes) / static_cast<double>(moved) : 0;
  for (const auto& [device, count] : elements) {
    phase.devices.push_back(device);
    phase.device_bytes.push_back(std::llround(static_cast<double>(count) * bytes_per_element));
  }
  return phase;
}

}  // namespace

StepTimeline step_timeline(const ModelGraph& graph, const StrategyCost& cost, int device_count) {
  StepTimeline timeline;
  timeline.strategy = cost.name;
  timeline.device_count = device_count;
  double now = 0;
  auto add = [&](TimelinePhase phase) {
    if (phase.duration_s <= 0) return;
    phase.start_s = now;
    now += phase.duration_s;
    timeline.phases.push_back(std::move(phase));
  };
  for (const Layer& layer : graph.layers()) {
    const LayerCost& row = cost.layers[static_cast<size_t>(layer.id)];
    if (row.transfer_s > 0) add(transfer_phase(graph, layer, cost));
    TimelinePhase compute;
    compute.layer = layer.id;
    compute.kind = StepPhase::kCompute;
    compute.duration_s = row.compute_s;
    compute.devices = sorted_devices(row.config);
    add(compute);
    TimelinePhase sync;
    sync.layer = layer.id;
    sync.kind = StepPhase::kSync;
    sync.duration_s = row.sync_s;
    sync.bytes = row.sync_bytes;
    sync.devices = sorted_devices(row.config);
    add(sync);
  }
  timeline.step_s = now;
  return timeline;
}

}  // namespace layerplan::report
