#pragma once
// Chrome's trace event format (the JSON that Perfetto and chrome://tracing open): one
// process per device or rank, each span written as a begin ("B") and an end ("E") event
// on a thread of the process, timestamps in microseconds. `layerplan plan --trace` writes
// the predicted step and `layerplan train --trace` the measured one in this format, so the
// two open side by side (docs/traces.md).
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace layerplan {

struct TraceSpan {
  int process = 0;       // the device or rank
  std::string name;      // e.g. "conv1"
  std::string category;  // "compute", "transfer" or "sync"
  double start_us = 0;
  double duration_us = 0;
  int64_t bytes = -1;  // written as args.bytes when >= 0
  std::string layer;   // written as args.layer when not empty
  int thread = 0;      // spans on one thread never overlap (predicted all-reduces run on thread 1)
};

struct TraceProcess {
  int id = 0;
  std::string name;  // "gpu 3", "rank 3"
};

// Writes {"traceEvents": [...], "displayTimeUnit": "ms"}: a process_name metadata event
// per process, then every span's begin and end, ordered by process and time so that
// begin/end pairs nest on each thread.
void write_trace(std::ostream& out, const std::vector<TraceProcess>& processes, std::vector<TraceSpan> spans);

// The events of `write_trace` without the enclosing object, comma-separated: what one rank
// contributes to a merged file.
void write_trace_events(std::ostream& out, const std::vector<TraceProcess>& processes, std::vector<TraceSpan> spans);

// A JSON string literal of `text` (quotes included).
std::string json_string(const std::string& text);

}  // namespace layerplan
