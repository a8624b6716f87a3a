#pragma once
// `layerplan train --profile FILE`: where each rank's steps went, as JSON. Per layer, the
// seconds this rank's tiles spent computing (kernels and SGD updates, as
// Executor::compute_seconds measures them) and in the moves of its input edges and its
// batch-norm statistics reductions; per kind, the seconds and calls of all its
// communication (TrafficCounts::Time: waiting for peers included), per step, over the steps
// after the first. Comparing the ranks' files shows which layers keep the others waiting;
// comparing them with `layerplan predict --json` shows what the cost model missed.
#include <string>

#include "model/model_graph.h"
#include "runtime/executor/executor.h"
#include "runtime/executor/transport.h"

namespace layerplan {

// The file rank `rank` writes: FILE itself for one process, FILE.rankN under a launcher.
std::string profile_file(const std::string& file, bool launched, int rank);

// Writes the profile (through a temporary file and a rename: never half-written). Throws
// UsageError when the file cannot be written.
void write_profile(const std::string& path, const ModelGraph& graph, const Executor& executor,
                   const TrafficCounts& counts, int rank, double steps);

}  // namespace layerplan
