#include "runtime/executor/communicator_transport.h"

#include <algorithm>
#include <memory>
#include <stdexcept>

namespace layerplan {
namespace {

uint32_t move_tag(const EdgeTag& tag) {
  if (tag.slot >= 30) throw std::invalid_argument("communicator transport: at most 30 input slots per layer");
  return static_cast<uint32_t>(tag.consumer * 64 + 2 * tag.slot + (tag.direction == Direction::kBackward ? 1 : 0));
}

uint32_t reduce_tag(ReduceKind kind, int layer) {
  return static_cast<uint32_t>(layer * 64 + 60 + static_cast<int>(kind));
}

}  // namespace

void CommunicatorTransport::exchange(const std::vector<BoxMove>& moves, const EdgeTag& tag) {
  const uint32_t t = move_tag(tag);
  const bool add = tag.direction == Direction::kBackward;
  std::vector<Tensor> outgoing;
  outgoing.reserve(moves.size());  // the sends read these until waited for
  std::vector<std::unique_ptr<Request>> sends;
  for (const BoxMove& m : moves) {
    if (!holds(m.src_device) || holds(m.dst_device)) continue;
    outgoing.push_back(crop(*m.src, m.region));
    sends.push_back(comm_.isend(outgoing.back().data(), static_cast<size_t>(outgoing.back().size()), m.dst_device, t));
    count_move(tag, m.src_device, m.dst_device, m.region.volume());
  }
  for (const BoxMove& m : moves) {
    if (!holds(m.dst_device)) continue;
    Tensor part;
    if (holds(m.src_device)) {
      part = crop(*m.src, m.region);
    } else {
      part = Tensor(m.region);
      comm_.recv(part.data(), static_cast<size_t>(part.size()), m.src_device, t);
    }
    if (add) {
      add_intersection(part, m.dst);
    } else {
      copy_intersection(part, m.dst);
    }
  }
  for (auto& s : sends) s->wait();
}

template <typename T>
void CommunicatorTransport::ring(const std::vector<int>& devices, const std::vector<std::vector<T>*>& buffers,
                                 ReduceKind kind, int layer) {
  static_assert(sizeof(T) % sizeof(float) == 0);
  constexpr size_t kFloats = sizeof(T) / sizeof(float);
  if (devices.size() != buffers.size()) throw std::invalid_argument("all_reduce: one buffer per device");
  const int p = static_cast<int>(devices.size());
  std::vector<int> sorted = devices;
  std::sort(sorted.begin(), sorted.end());
  const auto mine = std::find(sorted.begin(), sorted.end(), comm_.rank());
  if (p <= 1 || mine == sorted.end()) return;
  const int i = static_cast<int>(mine - sorted.begin());
  const auto held = std::find(devices.begin(), devices.end(), comm_.rank()) - devices.begin();
  std::vector<T>& buffer = *buffers[static_cast<size_t>(held)];
  const auto n = static_cast<int64_t>(buffer.size());
  const int next = sorted[static_cast<size_t>((i + 1) % p)], prev = sorted[static_cast<size_t>((i + p - 1) % p)];
  const uint32_t tag = reduce_tag(kind, layer);
  std::vector<T> incoming;
  // The in-process ring's schedule, from position i's side: in step s it sends chunk
  // (i - s) (reduce-scatter; then (i + 1 - s), all-gather) and receives the one before.
  for (int phase = 0; phase < 2; ++phase) {
    for (int s = 0; s < p - 1; ++s) {
      const int send_chunk = ((i - s + phase) % p + p) % p;
      const int recv_chunk = (send_chunk + p - 1) % p;
      const auto [slo, shi] = ring_chunk(n, p, send_chunk);
      const auto [rlo, rhi] = ring_chunk(n, p, recv_chunk);
      std::unique_ptr<Request> sent;
      if (shi > slo) {
        sent = comm_.isend(reinterpret_cast<const float*>(buffer.data() + slo), static_cast<size_t>(shi - slo) * kFloats,
                           next, tag);
        count_reduce(kind, layer, comm_.rank(), next, shi - slo);
      }
      if (rhi > rlo) {
        incoming.assign(static_cast<size_t>(rhi - rlo), T{});
        comm_.recv(reinterpret_cast<float*>(incoming.data()), incoming.size() * kFloats, prev, tag);
        for (int64_t k = rlo; k < rhi; ++k) {
          const T v = incoming[static_cast<size_t>(k - rlo)];
          buffer[static_cast<size_t>(k)] = phase == 0 ? buffer[static_cast<size_t>(k)] + v : v;
        }
      }
      if (sent) sent->wait();
    }
  }
}

void CommunicatorTransport::all_reduce(const std::vector<int>& devices,
                                       const std::vector<std::vector<float>*>& buffers, ReduceKind kind, int layer) {
  ring(devices, buffers, kind, layer);
}

void CommunicatorTransport::all_reduce(const std::vector<int>& devices,
                                       const std::vector<std::vector<double>*>& buffers, ReduceKind kind, int layer) {
  ring(devices, buffers, kind, layer);
}

}  // namespace layerplan
