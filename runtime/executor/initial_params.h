#pragma once
// Seeded initial parameters, generated for the whole layer so that every plan starts from
// the same weights: a plan takes shard(initial_params(...), tile channels).
#include <cstdint>

#include "model/model_graph.h"
#include "runtime/kernels/params.h"

namespace layerplan {

// conv2d and fully_connected: weight and bias uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)]
// (the bound of PyTorch's default initialisation; not its random stream), drawn from a
// generator seeded by (seed, layer id). batch_norm: weight 1, bias 0, running mean 0 and
// running variance 1, as PyTorch. Throws std::invalid_argument for a kind without parameters.
LayerParams initial_params(const ModelGraph& graph, const Layer& layer, uint64_t seed);

}  // namespace layerplan
