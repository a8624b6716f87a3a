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

// The forward half of a layer's moves (its inputs coming in) or the backward half (their
// gradients going back): the cost model charges each half of transfer_s.
TimelinePhase half_transfer(const ModelGraph& graph, const Layer& layer, const StrategyCost& cost, double start_s) {
  TimelinePhase phase = transfer_phase(graph, layer, cost);
  phase.start_s = start_s;
  phase.duration_s /= 2;
  phase.bytes /= 2;
  for (int64_t& b : phase.device_bytes) b /= 2;
  return phase;
}

TimelinePhase compute_phase(const Layer& layer, const LayerCost& row, double start_s, double duration_s) {
  TimelinePhase phase;
  phase.layer = layer.id;
  phase.kind = StepPhase::kCompute;
  phase.start_s = start_s;
  phase.duration_s = duration_s;
  phase.devices = sorted_devices(row.config);
  return phase;
}

TimelinePhase sync_phase(const SyncSpan& span) {
  TimelinePhase phase;
  phase.layer = std::max(span.after_layer, 0);  // -1: filled at the end of the backward, after layer 0's
  phase.kind = StepPhase::kSync;
  phase.start_s = span.start_s;
  phase.duration_s = span.end_s - span.start_s;
  phase.bytes = std::llround(span.bytes);
  phase.devices = span.devices;
  return phase;
}

}  // namespace

StepTimeline step_timeline(const ModelGraph& graph, const StrategyCost& cost, int device_count) {
  StepTimeline timeline;
  timeline.strategy = cost.name;
  timeline.device_count = device_count;
  timeline.step_s = cost.step_s();
  auto add = [&](TimelinePhase phase) {
    if (phase.duration_s > 0) timeline.phases.push_back(std::move(phase));
  };
  double now = 0;
  for (const Layer& layer : graph.layers()) {  // forward: moves in, then compute
    const LayerCost& row = cost.layers[static_cast<size_t>(layer.id)];
    if (row.transfer_s > 0) add(half_transfer(graph, layer, cost, now));
    now += row.transfer_s / 2;
    add(compute_phase(layer, row, now, row.forward_compute_s));
    now += row.forward_compute_s;
  }
  const std::vector<double>& backward_start = cost.timeline.backward_start_s;
  for (int id = graph.size() - 1; id >= 0; --id) {  // backward: compute, then gradients back
    const Layer& layer = graph.layer(id);
    const LayerCost& row = cost.layers[static_cast<size_t>(id)];
    if (static_cast<size_t>(id) < backward_start.size()) now = backward_start[static_cast<size_t>(id)];
    // All-reduces running beside the backward slow it (docs/cost-model.md, "Overlap and its
    // costs"): the layer's span then lasts until the next one begins, and its phases stretch.
    const double backward_compute_s = row.compute_s - row.forward_compute_s;
    const double nominal = backward_compute_s + row.transfer_s / 2;
    double stretch = 1.0;
    // (Without overlap the backward waits for the all-reduces instead: a gap, not a stretch.)
    if (cost.timeline.overlap && id > 0 && static_cast<size_t>(id) < backward_start.size() && nominal > 0) {
      stretch = std::max(1.0, (backward_start[static_cast<size_t>(id) - 1] - now) / nominal);
    }
    add(compute_phase(layer, row, now, backward_compute_s * stretch));
    now += backward_compute_s * stretch;
    if (row.transfer_s > 0) {
      TimelinePhase back = half_transfer(graph, layer, cost, now);
      back.duration_s *= stretch;
      add(std::move(back));
    }
    now += row.transfer_s / 2 * stretch;
  }
  for (const SyncSpan& span : cost.timeline.spans) add(sync_phase(span));
  std::stable_sort(timeline.phases.begin(), timeline.phases.end(),
                   [](const TimelinePhase& a, const TimelinePhase& b) { return a.start_s < b.start_s; });
  return timeline;
}

}  // namespace layerplan::report
