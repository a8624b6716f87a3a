#include "runtime/executor/communicator_transport.h"

#include <algorithm>
#include <chrono>
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

namespace {

// Adds the wall time of its scope, and one call, to `time` (when not null).
class CallTimer {
 public:
  explicit CallTimer(TrafficCounts::Time* time)
      : time_(time), start_(time ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{}) {}
  ~CallTimer() {
    if (!time_) return;
    time_->seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    ++time_->calls;
  }
  CallTimer(const CallTimer&) = delete;
  CallTimer& operator=(const CallTimer&) = delete;

 private:
  TrafficCounts::Time* time_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

void CommunicatorTransport::exchange(const std::vector<BoxMove>& moves, const EdgeTag& tag) {
  const uint32_t t = move_tag(tag);
  const bool add = tag.direction == Direction::kBackward;
  bool remote = false;
  for (const BoxMove& m : moves) remote = remote || (holds(m.src_device) != holds(m.dst_device));
  const CallTimer timer(remote ? &counts_.moves : nullptr);
  // Receives are posted before anything is sent: Gloo sends a message at once only to a
  // peer whose receive it already knows of, and otherwise waits for one more round trip.
  std::vector<Tensor> incoming(moves.size());
  std::vector<std::unique_ptr<Request>> recvs(moves.size());
  for (size_t i = 0; i < moves.size(); ++i) {
    const BoxMove& m = moves[i];
    if (!holds(m.dst_device) || holds(m.src_device)) continue;
    incoming[i] = Tensor(m.region, Tensor::kUninitialized);
    recvs[i] = comm_.irecv(incoming[i].data(), static_cast<size_t>(incoming[i].size()), m.src_device, t);
  }
  std::vector<Tensor> outgoing;
  outgoing.reserve(moves.size());  // the sends read these until waited for
  std::vector<std::unique_ptr<Request>> sends;
  for (const BoxMove& m : moves) {
    if (!holds(m.src_device) || holds(m.dst_device)) continue;
    outgoing.push_back(crop(*m.src, m.region));
    sends.push_back(comm_.isend(outgoing.back().data(), static_cast<size_t>(outgoing.back().size()), m.dst_device, t));
    count_move(tag, m.src_device, m.dst_device, m.region.volume());
  }
  for (size_t i = 0; i < moves.size(); ++i) {
    const BoxMove& m = moves[i];
    if (!holds(m.dst_device)) continue;
    Tensor part;
    if (holds(m.src_device)) {
      part = crop(*m.src, m.region);
    } else {
      recvs[i]->wait();
      part = std::move(incoming[i]);
    }
    if (add) {
      add_intersection(part, m.dst);
    } else {
      copy_intersection(part, m.dst);
    }
  }
  for (auto& s : sends) s->wait();
}

void CommunicatorTransport::all_reduce(const std::vector<int>& devices,
                                       const std::vector<std::vector<float>*>& buffers,
                                       const std::vector<ReduceSegment>& segments) {
  if (devices.size() != buffers.size()) throw std::invalid_argument("all_reduce: one buffer per device");
  const int p = static_cast<int>(devices.size());
  std::vector<int> sorted = devices;
  std::sort(sorted.begin(), sorted.end());
  const auto mine = std::find(sorted.begin(), sorted.end(), comm_.rank());
  if (p <= 1 || mine == sorted.end()) return;
  const CallTimer timer(&counts_.weight_reductions);
  const int i = static_cast<int>(mine - sorted.begin());
  const auto held = std::find(devices.begin(), devices.end(), comm_.rank()) - devices.begin();
  std::vector<float>& buffer = *buffers[static_cast<size_t>(held)];
  const auto n = static_cast<int64_t>(buffer.size());
  const int next = sorted[static_cast<size_t>((i + 1) % p)], prev = sorted[static_cast<size_t>((i + p - 1) % p)];
  const uint32_t tag = reduce_tag(ReduceKind::kWeightGradients, segments.empty() ? 0 : segments.front().layer);
  // The in-process ring's schedule, from position i's side: in step s it sends chunk
  // (i - s + phase) (reduce-scatter, then all-gather) and receives the one before.
  const auto send_chunk = [&](int phase, int s) { return ((i - s + phase) % p + p) % p; };
  const auto recv_chunk = [&](int phase, int s) { return (send_chunk(phase, s) + p - 1) % p; };
  // Every receive of both phases is posted first (see exchange()), each into its own
  // part of `incoming`; receives from one peer with one tag match in posting order.
  const int steps = 2 * (p - 1);
  std::vector<int64_t> offset(static_cast<size_t>(steps) + 1, 0);
  for (int k = 0; k < steps; ++k) {
    const auto [lo, hi] = ring_chunk(n, p, recv_chunk(k / (p - 1), k % (p - 1)));
    offset[static_cast<size_t>(k) + 1] = offset[static_cast<size_t>(k)] + (hi - lo);
  }
  std::vector<float> incoming(static_cast<size_t>(offset.back()));
  std::vector<std::unique_ptr<Request>> recvs(static_cast<size_t>(steps));
  for (int k = 0; k < steps; ++k) {
    const int64_t size = offset[static_cast<size_t>(k) + 1] - offset[static_cast<size_t>(k)];
    if (size > 0) {
      recvs[static_cast<size_t>(k)] =
          comm_.irecv(incoming.data() + offset[static_cast<size_t>(k)], static_cast<size_t>(size), prev, tag);
    }
  }
  for (int k = 0; k < steps; ++k) {
    const int phase = k / (p - 1), s = k % (p - 1);
    const auto [slo, shi] = ring_chunk(n, p, send_chunk(phase, s));
    const auto [rlo, rhi] = ring_chunk(n, p, recv_chunk(phase, s));
    std::unique_ptr<Request> sent;
    if (shi > slo) {
      sent = comm_.isend(buffer.data() + slo, static_cast<size_t>(shi - slo), next, tag);
      count_ring_send(segments, slo, shi, comm_.rank(), next);
    }
    if (rhi > rlo) {
      recvs[static_cast<size_t>(k)]->wait();
      const float* in = incoming.data() + offset[static_cast<size_t>(k)];
      for (int64_t e = rlo; e < rhi; ++e) {
        const float v = in[e - rlo];
        buffer[static_cast<size_t>(e)] = phase == 0 ? buffer[static_cast<size_t>(e)] + v : v;
      }
    }
    if (sent) sent->wait();
  }
}

void CommunicatorTransport::all_reduce(const std::vector<int>& devices,
                                       const std::vector<std::vector<double>*>& buffers, ReduceKind kind, int layer) {
  if (devices.size() != buffers.size()) throw std::invalid_argument("all_reduce: one buffer per device");
  std::vector<int> sorted = devices;
  std::sort(sorted.begin(), sorted.end());
  const int me = comm_.rank();
  if (sorted.size() <= 1 || std::find(sorted.begin(), sorted.end(), me) == sorted.end()) return;
  const CallTimer timer(kind == ReduceKind::kLoss ? &counts_.loss_reductions : &counts_.statistics_reductions);
  const auto held = std::find(devices.begin(), devices.end(), me) - devices.begin();
  std::vector<double>& buffer = *buffers[static_cast<size_t>(held)];
  const size_t n = buffer.size(), floats = n * (sizeof(double) / sizeof(float));
  const uint32_t tag = reduce_tag(kind, layer);
  std::vector<std::vector<double>> from(sorted.size());
  std::vector<std::unique_ptr<Request>> recvs;
  for (size_t k = 0; k < sorted.size(); ++k) {
    if (sorted[k] == me) continue;
    from[k].resize(n);
    recvs.push_back(comm_.irecv(reinterpret_cast<float*>(from[k].data()), floats, sorted[k], tag));
  }
  std::vector<std::unique_ptr<Request>> sends;
  for (const int peer : sorted) {
    if (peer == me) continue;
    sends.push_back(comm_.isend(reinterpret_cast<const float*>(buffer.data()), floats, peer, tag));
    count_reduce(kind, layer, me, peer, static_cast<int64_t>(n));
  }
  for (auto& r : recvs) r->wait();
  // The p buffers added in ascending device order, as every member does.
  std::vector<double> sum(n, 0.0);
  for (size_t k = 0; k < sorted.size(); ++k) {
    const std::vector<double>& b = sorted[k] == me ? buffer : from[k];
    if (k == 0) {
      sum = b;
    } else {
      for (size_t e = 0; e < n; ++e) sum[e] += b[e];
    }
  }
  for (auto& s : sends) s->wait();  // they read `buffer`
  buffer = std::move(sum);
}

}  // namespace layerplan
