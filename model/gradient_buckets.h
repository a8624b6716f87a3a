#pragma once
// Which weight-gradient shards the executor all-reduces together, and when. The planner
// prices the same buckets (planner/step_timeline.h), so they live with the vocabulary.
//
// Reducing every layer's shards on their own costs one ring (2(p-1) message times) per
// layer and replica group, which on CPUs joined by TCP costs more than the data itself
// (docs/BENCHMARKS.md). As PyTorch's DistributedDataParallel does, the executor instead
// appends the shards of one replica group (the same devices) to a bucket as the backward
// produces them, and all-reduces a bucket as one buffer once it holds `cap_elements` or
// the backward has ended. Every process derives the same buckets from the graph and the
// plan alone, so they all reduce the same buffers in the same order; `layerplan predict`
// prices the same buckets.
#include <cstdint>
#include <vector>

#include "model/geometry.h"
#include "model/model_graph.h"

namespace layerplan {

// The bucket size of the executor and the planner, as PyTorch DDP's default bucket_cap_mb.
inline constexpr int64_t kDefaultGradientBucketBytes = int64_t{25} << 20;

// One replica group's shard of one layer, in a bucket.
struct GradientSegment {
  int layer = 0;
  int group = 0;         // index into replica_groups(layer, its configuration)
  int64_t elements = 0;  // the shard's weight and bias
};

struct GradientBucket {
  std::vector<int> devices;               // the replica group's devices, ascending
  std::vector<GradientSegment> segments;  // in the order the backward produces them
  // The bucket is all-reduced right after this layer's backward, or at the end of the
  // backward when -1.
  int reduce_after_layer = -1;
  int64_t elements() const;
};

// The tiles (indices into the layer's tiles) that hold the same weight shard or batch-norm
// channels: one group per channel coordinate for layers whose channel split shards their
// weights (conv2d, fully connected, batch norm), else one group of every tile.
std::vector<std::vector<int>> replica_groups(const Layer& layer, const Configuration& config);

// The elements of one replica's shard of `layer`'s weight and bias under `config`.
int64_t shard_elements(const ModelGraph& graph, const Layer& layer, const Configuration& config);

// The cap, in gradients of `element_bytes` each, of buckets of `bytes` (at least one).
int64_t bucket_cap_elements(int64_t bytes, int64_t element_bytes = sizeof(float));

// The buckets of one step, in the order they are all-reduced: those reduced after a layer
// in the backward's (reverse topological) order, then the rest in the order they were
// opened. Groups of a single device reduce nothing and are in no bucket.
std::vector<GradientBucket> gradient_buckets(const ModelGraph& graph, const std::vector<Configuration>& plan,
                                             int64_t cap_elements);

}  // namespace layerplan
