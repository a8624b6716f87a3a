#include "runtime/executor/transport.h"

#include <algorithm>

namespace layerplan {

std::pair<int64_t, int64_t> ring_chunk(int64_t n, int p, int index) {
  const int64_t base = n / p, extra = n % p;
  const int64_t begin = index * base + std::min<int64_t>(index, extra);
  return {begin, begin + base + (index < extra ? 1 : 0)};
}

void Transport::count_move(const EdgeTag& tag, int src, int dst, int64_t elements) {
  if (src == dst || elements == 0) return;
  const std::lock_guard<std::mutex> lock(counts_mutex_);
  auto& per_edge = tag.direction == Direction::kForward ? counts_.forward : counts_.backward;
  per_edge[{tag.consumer, tag.slot, src, dst}] += elements;
  counts_.pairs[{src, dst}] += elements;
}

void Transport::count_reduce(ReduceKind kind, int layer, int src, int dst, int64_t elements) {
  const std::lock_guard<std::mutex> lock(counts_mutex_);
  auto& per_layer = kind == ReduceKind::kWeightGradients       ? counts_.weight_sync
                    : kind == ReduceKind::kBatchNormStatistics ? counts_.statistics
                                                               : counts_.loss;
  per_layer[layer] += elements;
  counts_.pairs[{src, dst}] += elements;
}

void Transport::count_ring_send(const std::vector<ReduceSegment>& segments, int64_t lo, int64_t hi, int src, int dst) {
  int64_t begin = 0;
  for (const ReduceSegment& segment : segments) {
    const int64_t end = begin + segment.elements;
    const int64_t overlap = std::min(hi, end) - std::max(lo, begin);
    if (overlap > 0) count_reduce(ReduceKind::kWeightGradients, segment.layer, src, dst, overlap);
    begin = end;
  }
}

}  // namespace layerplan
