#include "runtime/executor/in_process_transport.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace layerplan {

void InProcessTransport::exchange(const std::vector<BoxMove>& moves, const EdgeTag& tag) {
  for (const BoxMove& m : moves) {
    if (m.src == nullptr || m.dst == nullptr) throw std::invalid_argument("exchange: a tensor is missing");
    const Tensor part = crop(*m.src, m.region);
    const int64_t moved =
        tag.direction == Direction::kForward ? copy_intersection(part, m.dst) : add_intersection(part, m.dst);
    count_move(tag, m.src_device, m.dst_device, moved);
  }
}

namespace {

// Checks what all_reduce requires of an in-process call; returns the buffers' length.
template <typename T>
int64_t checked_length(const std::vector<int>& devices, const std::vector<std::vector<T>*>& buffers) {
  if (devices.size() != buffers.size()) throw std::invalid_argument("all_reduce: one buffer per device");
  for (const auto* b : buffers) {
    if (b == nullptr) throw std::invalid_argument("all_reduce: one process holds every device");
    if (b->size() != buffers[0]->size()) throw std::invalid_argument("all_reduce: buffers differ in length");
  }
  return buffers.empty() ? 0 : static_cast<int64_t>(buffers[0]->size());
}

// Positions of `devices` in ascending device order.
std::vector<int> ascending_order(const std::vector<int>& devices) {
  std::vector<int> order(devices.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return devices[static_cast<size_t>(a)] < devices[static_cast<size_t>(b)]; });
  return order;
}

}  // namespace

void InProcessTransport::all_reduce(const std::vector<int>& devices, const std::vector<std::vector<float>*>& buffers,
                                    const std::vector<ReduceSegment>& segments) {
  const int p = static_cast<int>(devices.size());
  const int64_t n = checked_length(devices, buffers);
  if (p <= 1) return;
  // Ring order: devices ascending, as the cost model forms its rings.
  const std::vector<int> order = ascending_order(devices);
  auto send = [&](int from, int chunk, bool add) {
    const int to = (from + 1) % p;
    const auto [lo, hi] = ring_chunk(n, p, chunk);
    const std::vector<float>& s = *buffers[static_cast<size_t>(order[static_cast<size_t>(from)])];
    std::vector<float>& d = *buffers[static_cast<size_t>(order[static_cast<size_t>(to)])];
    for (int64_t i = lo; i < hi; ++i)
      d[static_cast<size_t>(i)] =
          add ? d[static_cast<size_t>(i)] + s[static_cast<size_t>(i)] : s[static_cast<size_t>(i)];
    count_ring_send(segments, lo, hi, devices[static_cast<size_t>(order[static_cast<size_t>(from)])],
                    devices[static_cast<size_t>(order[static_cast<size_t>(to)])]);
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

void InProcessTransport::all_reduce(const std::vector<int>& devices, const std::vector<std::vector<double>*>& buffers,
                                    ReduceKind kind, int layer) {
  const int64_t n = checked_length(devices, buffers);
  if (devices.size() <= 1) return;
  const std::vector<int> order = ascending_order(devices);
  // Every member adds the same p buffers in the same order.
  std::vector<double> sum = *buffers[static_cast<size_t>(order[0])];
  for (size_t k = 1; k < order.size(); ++k) {
    const std::vector<double>& b = *buffers[static_cast<size_t>(order[k])];
    for (int64_t i = 0; i < n; ++i) sum[static_cast<size_t>(i)] += b[static_cast<size_t>(i)];
  }
  for (size_t from = 0; from < devices.size(); ++from) {
    for (size_t to = 0; to < devices.size(); ++to) {
      if (from != to) count_reduce(kind, layer, devices[from], devices[to], n);
    }
  }
  for (auto* b : buffers) *b = sum;
}

}  // namespace layerplan
