#include "report/plan_trace.h"

#include "common/trace_events.h"
#include "report/step_timeline.h"

namespace layerplan::report {

void write_plan_trace(std::ostream& out, const ModelGraph& graph, const StrategyCost& strategy, int device_count) {
  const StepTimeline timeline = step_timeline(graph, strategy, device_count);
  std::vector<TraceProcess> processes;
  processes.reserve(static_cast<size_t>(device_count));
  for (int d = 0; d < device_count; ++d) processes.push_back({d, "gpu " + std::to_string(d) + " (predicted)"});
  std::vector<TraceSpan> spans;
  for (const TimelinePhase& phase : timeline.phases) {
    const std::string& layer = graph.layer(phase.layer).name;
    for (size_t i = 0; i < phase.devices.size(); ++i) {
      TraceSpan span;
      span.process = phase.devices[i];
      span.category = step_phase_name(phase.kind);
      span.name = layer + (phase.kind == StepPhase::kCompute ? "" : std::string(" ") + span.category);
      span.layer = layer;
      span.start_us = phase.start_s * 1e6;
      span.duration_us = phase.duration_s * 1e6;
      if (phase.kind == StepPhase::kTransfer) span.bytes = phase.device_bytes[i];
      if (phase.kind == StepPhase::kSync) {
        span.bytes = phase.bytes / static_cast<int64_t>(phase.devices.size());
        span.thread = 1;  // all-reduces may run beside the backward
      }
      spans.push_back(std::move(span));
    }
  }
  write_trace(out, processes, std::move(spans));
}

}  // namespace layerplan::report
