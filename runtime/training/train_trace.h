#pragma once
// `layerplan train --trace FILE`: the measured step of every rank in Chrome's trace event
// format (common/trace_events.h), as `layerplan plan --trace` writes the predicted one.
// The executor keeps per-layer totals, not timestamps, so the trace is the mean step after
// the first, rebuilt in the executor's order from the measured totals: forward (per layer,
// half its moves, its forward compute, half its statistics' reductions), backward (in
// reverse: the rest of each), then the weight and loss reductions. One process per device;
// launched ranks each write FILE.rankN and rank 0 merges them into FILE after a barrier
// (docs/report.md, "Traces").
#include <string>
#include <vector>

#include "common/trace_events.h"
#include "model/model_graph.h"
#include "runtime/executor/executor.h"
#include "runtime/executor/transport.h"

namespace layerplan {

// The spans of the mean step of `devices` (those this process holds), over `steps` steps.
std::vector<TraceSpan> measured_step_spans(const ModelGraph& graph, const Executor& executor,
                                           const TrafficCounts& counts, double steps, const std::vector<int>& devices);

// Writes this process's part: FILE for one process, FILE.rankN for a launched rank (through a
// temporary file and a rename, common/safe_write.h). Throws UsageError when it cannot be written.
void write_trace_part(const std::string& file, bool launched, int rank, const ModelGraph& graph,
                      const Executor& executor, const TrafficCounts& counts, double steps);

// Rank 0, once every rank has written its part: merges FILE.rank0 ... FILE.rank(N-1) into
// FILE and removes the parts. Throws UsageError when a part is missing or unreadable.
void merge_trace_parts(const std::string& file, int world_size);

}  // namespace layerplan
