#pragma once
// Strategies mixed from the searched plan and data parallelism, rated by the timeline beside
// the search's plan and the baselines (docs/planner.md, section 10). The search minimizes an
// additive surrogate that charges every byte of gradient sync in full, while the timeline
// hides sync behind the backward pass; so the convolutional features (many flops, few
// weights) may be faster data-parallel than as searched while the classifier (few flops,
// most weights) is faster as searched, or the other way round. These cost one pricing each,
// no search.
#include <string>
#include <vector>

#include "model/geometry.h"
#include "model/model_graph.h"

namespace layerplan {

struct MixedCandidate {
  std::string name;  // "layer-wise, data-parallel features" or "layer-wise, data-parallel classifier"
  std::vector<Configuration> configs;
};

// Cut at the first fully connected layer (in layer order): the layers before it data
// parallel and the rest as `searched`, then the layers before it as searched and the rest
// data parallel. None for a model without a fully connected layer after its first layer,
// and a mix equal to `searched` or to data parallelism is left out (already rated).
std::vector<MixedCandidate> mixed_candidates(const ModelGraph& graph, const std::vector<Configuration>& searched,
                                             const std::vector<Configuration>& data_parallel);

}  // namespace layerplan
