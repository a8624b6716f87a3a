#pragma once
// Which configurations the search considers for a layer. The pruning rules
// (docs/planner.md explains why each keeps the optimum worth having):
//  1. only the dimensions a layer kind can be split along (see splittable_dims);
//  2. every degree is a power of two that divides the dimension's extent, so tiles are
//     equal boxes;
//  3. the tile count p is at most the job's device count: a layer may use fewer devices;
//  4. tiles go to an aligned block of p consecutive devices (device numbering is
//     node-major, so a block of p <= GPUs-per-node stays inside one node, and a larger one
//     spans whole nodes). kAlignedBlocks keeps every aligned block; kFirstBlock (the
//     default) keeps only the block that starts at device 0. kFirstBlock is a restriction:
//     two layers on fewer devices than the job may do better on different blocks, e.g. to
//     spread what they receive over several nodes' NICs. It divides the space by up to
//     the device count, which is what makes 64-256 GPUs tractable;
//  5. the job's device count and GPUs per node must be powers of two.
#include <array>
#include <vector>

#include "planner/geometry.h"
#include "planner/model_graph.h"

namespace layerplan {

enum class PlacementRule { kFirstBlock, kAlignedBlocks };

struct SpaceOptions {
  PlacementRule placement = PlacementRule::kFirstBlock;
};

// Dimensions (NCHW) the kind can be split along: conv and pooling n, c, h, w;
// fully-connected and global pooling n, c; softmax and flatten n; concat all but its
// channel axis; input n, h, w; element-wise layers (ReLU, batch-norm, dropout, add) any.
std::array<bool, kNumDims> splittable_dims(LayerKind kind);

// All degree vectors allowed by rules 1-3, ordered by tile count then dimensions.
std::vector<Degrees> candidate_degrees(const Layer& layer, int device_count);

// Rules 1-4. Throws UsageError if device_count or gpus_per_node is not a power of two.
std::vector<Configuration> enumerate_configurations(const Layer& layer, int device_count,
                                                    int gpus_per_node, const SpaceOptions& options);

bool is_power_of_two(int64_t value);

}  // namespace layerplan
