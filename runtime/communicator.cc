#include "runtime/communicator.h"

#include <stdexcept>

namespace layerplan {

ByteCounters::ByteCounters(int world_size)
    : world_size_(world_size), counts_(new std::atomic<uint64_t>[static_cast<size_t>(world_size) * 2]) {
  if (world_size < 1) throw std::invalid_argument("ByteCounters: world size must be at least 1");
  reset();
}

void ByteCounters::add(TrafficKind kind, int global_peer, uint64_t bytes) {
  if (global_peer < 0 || global_peer >= world_size_) {
    throw std::invalid_argument("ByteCounters: peer " + std::to_string(global_peer) + " outside the world");
  }
  counts_[static_cast<size_t>(global_peer) * 2 + static_cast<size_t>(kind)].fetch_add(bytes, std::memory_order_relaxed);
}

uint64_t ByteCounters::sent_to(int global_peer, TrafficKind kind) const {
  if (global_peer < 0 || global_peer >= world_size_) {
    throw std::invalid_argument("ByteCounters: peer " + std::to_string(global_peer) + " outside the world");
  }
  return counts_[static_cast<size_t>(global_peer) * 2 + static_cast<size_t>(kind)].load(std::memory_order_relaxed);
}

uint64_t ByteCounters::total(TrafficKind kind) const {
  uint64_t sum = 0;
  for (int peer = 0; peer < world_size_; ++peer) sum += sent_to(peer, kind);
  return sum;
}

void ByteCounters::reset() {
  for (size_t i = 0; i < static_cast<size_t>(world_size_) * 2; ++i) counts_[i].store(0, std::memory_order_relaxed);
}

std::vector<size_t> ring_chunk_offsets(size_t count, int ranks) {
  if (ranks < 1) throw std::invalid_argument("ring_chunk_offsets: ranks must be at least 1");
  const size_t p = static_cast<size_t>(ranks);
  std::vector<size_t> offsets(p + 1, 0);
  for (size_t i = 0; i < p; ++i) offsets[i + 1] = offsets[i] + count / p + (i < count % p ? 1 : 0);
  return offsets;
}

uint64_t ring_all_reduce_bytes_sent(size_t count, int ranks, int rank) {
  if (ranks == 1) return 0;
  const std::vector<size_t> offsets = ring_chunk_offsets(count, ranks);
  const auto chunk = [&](int i) { return offsets[static_cast<size_t>(i) + 1] - offsets[static_cast<size_t>(i)]; };
  // All chunks twice, except chunk rank+1 (reduce-scatter) and chunk rank+2 (all-gather).
  const uint64_t elements = 2 * count - chunk((rank + 1) % ranks) - chunk((rank + 2) % ranks);
  return elements * sizeof(float);
}

std::vector<int> broadcast_tree_children(int ranks, int root, int rank) {
  const int v = (rank - root + ranks) % ranks;  // rank relative to the root
  std::vector<int> children;
  for (int mask = 1; mask < ranks; mask <<= 1) {
    if (v < mask && v + mask < ranks) children.push_back((v + mask + root) % ranks);
  }
  return children;
}

int broadcast_tree_parent(int ranks, int root, int rank) {
  const int v = (rank - root + ranks) % ranks;
  if (v == 0) return -1;
  int mask = 1;
  while (mask * 2 <= v) mask <<= 1;
  return (v - mask + root) % ranks;
}

}  // namespace layerplan
