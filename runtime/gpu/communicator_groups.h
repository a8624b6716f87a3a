#pragma once
// The NCCL sub-communicators a plan needs, made once at start-up (docs/gpu-backend.md,
// "Sub-communicators"): pure host logic, tested in CI without a GPU.
//
// Weight gradients are all-reduced per replica group, in the same buckets as on CPUs
// (gradient_buckets.h, 25 MiB by default): each bucket's devices need a communicator of
// their own. ncclCommSplit is collective over the whole world (every rank calls it, a rank
// outside the new communicator passes NCCL_SPLIT_NOCOLOR), so groups that share no device
// are made by the same call, one color each: a plan whose groups are disjoint (data
// parallel, or a layer split into channel groups) needs one call, however many groups.
// A group of every rank uses the world communicator itself. Statistics, loss shares and box
// moves are point-to-point on the world communicator and need none.
#include <cstdint>
#include <vector>

#include "model/geometry.h"
#include "model/model_graph.h"

namespace layerplan {

// The distinct device groups (ascending devices, at least 2, not every rank of `world`)
// whose weight gradients are all-reduced in buckets of `bucket_bytes`, sorted.
std::vector<std::vector<int>> weight_reduction_groups(const ModelGraph& graph, const std::vector<Configuration>& plan,
                                                      int64_t bucket_bytes, int world);

// One ncclCommSplit call: what each rank passes, and the groups it makes.
struct CommSplit {
  static constexpr int kNoColor = -1;    // NCCL_SPLIT_NOCOLOR
  std::vector<int> color;                // per world rank: the index of its group in `groups`, or kNoColor
  std::vector<int> key;                  // per world rank: its position in its group (ascending devices)
  std::vector<std::vector<int>> groups;  // disjoint
};

// The calls that make every group of `groups` (each ascending, ranks < world), in order:
// each group goes to the first call whose groups it shares no rank with. Every rank makes
// the calls in this order.
std::vector<CommSplit> plan_comm_splits(const std::vector<std::vector<int>>& groups, int world);

}  // namespace layerplan
