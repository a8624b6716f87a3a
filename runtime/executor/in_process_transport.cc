#include "runtime/executor/in_process_transport.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace layerplan {

void InProcessTransport::exchange(const std::vector<BoxMove>& moves, const EdgeTag& tag) {
  for (const BoxMove& m : moves) {
    if (m.src == nullptr || m.dst == nullptr) throw std::invalid_argument("exchange: a tensor is missing");
    const Tensor part = crop(*m.src, m.region);
    const int64_t moved = tag.direction == Direction::kForward ? copy_intersection(part, m.dst)
                                                               : add_intersection(part, m.dst);
    count_move(tag, m.src_device, m.dst_device, moved);
  }
}

template <typename T>
void InProcessTransport::ring(const std::vector<int>& devices, const std::vector<std::vector<T>*>& buffers,
                              ReduceKind kind, int layer) {
  if (devices.size() != buffers.size()) throw std::invalid_argument("all_reduce: one buffer per device");
  const int p = static_cast<int>(devices.size());
  if (p <= 1) return;
  for (const auto* b : buffers) {
    if (b == nullptr) throw std::invalid_argument("all_reduce: one process holds every device");
  }
  const int64_t n = static_cast<int64_t>(buffers[0]->size());
  for (const auto* b : buffers) {
    if (static_cast<int64_t>(b->size()) != n) throw std::invalid_argument("all_reduce: buffers differ in length");
  }
  // Ring order: devices ascending, as the cost model forms its rings.
  std::vector<int> order(static_cast<size_t>(p));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return devices[a] < devices[b]; });
  auto send = [&](int from, int chunk, bool add) {
    const int to = (from + 1) % p;
    const auto [lo, hi] = ring_chunk(n, p, chunk);
    const std::vector<T>& s = *buffers[static_cast<size_t>(order[static_cast<size_t>(from)])];
    std::vector<T>& d = *buffers[static_cast<size_t>(order[static_cast<size_t>(to)])];
    for (int64_t i = lo; i < hi; ++i) d[static_cast<size_t>(i)] = add ? d[static_cast<size_t>(i)] + s[static_cast<size_t>(i)] : s[static_cast<size_t>(i)];
    count_reduce(kind, layer, devices[static_cast<size_t>(order[static_cast<size_t>(from)])],
                 devices[static_cast<size_t>(order[static_cast<size_t>(to)])], hi - lo);
  };
  // In step s of the reduce-scatter, position r sends chunk (r - s) mod p, which its
  // successor adds; after p-1 steps position r holds the sum of chunk (r + 1) mod p.
  // Within one step every position sends and receives different chunks, so running the
  // sends one after another is the same as running them at once.
  for (int s = 0; s < p - 1; ++s) {
    for (int r = 0; r < p; ++r) send(r, ((r - s) % p + p) % p, true);
  }
  for (int s = 0; s < p - 1; ++s) {
    for (int r = 0; r < p; ++r) send(r, ((r + 1 - s) % p + p) % p, false);
  }
}

void InProcessTransport::all_reduce(const std::vector<int>& devices, const std::vector<std::vector<float>*>& buffers,
                                    ReduceKind kind, int layer) {
  ring(devices, buffers, kind, layer);
}

void InProcessTransport::all_reduce(const std::vector<int>& devices,
                                    const std::vector<std::vector<double>*>& buffers, ReduceKind kind, int layer) {
  ring(devices, buffers, kind, layer);
}

}  // namespace layerplan
