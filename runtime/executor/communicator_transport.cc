#include "runtime/executor/communicator_transport.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

namespace layerplan {
namespace {

uint32_t move_tag(const EdgeTag& tag) {
  if (tag.slot >= 30) throw std::invalid_argument("communicator transport: at most 30 input slots per layer");
  return static_cast<uint32_t>(tag.consumer * 64 + 2 * tag.slot + (tag.direction == Direction::kBackward ? 1 : 0));
}

uint32_t reduce_tag(ReduceKind kind, int layer) {
  return static_cast<uint32_t>(layer * 64 + 60 + static_cast<int>(kind));
}

// Adds the wall time of its scope, and one call, to `time` and to `layer_time` (when not null).
class CallTimer {
 public:
  CallTimer(std::mutex& mutex, TrafficCounts::Time* time, TrafficCounts::Time* layer_time = nullptr)
      : mutex_(mutex),
        time_(time),
        layer_time_(layer_time),
        start_(time ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{}) {}
  ~CallTimer() {
    if (!time_) return;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const std::lock_guard<std::mutex> lock(mutex_);
    for (TrafficCounts::Time* t : {time_, layer_time_}) {
      if (!t) continue;
      t->seconds += seconds;
      ++t->calls;
    }
  }
  CallTimer(const CallTimer&) = delete;
  CallTimer& operator=(const CallTimer&) = delete;

 private:
  std::mutex& mutex_;
  TrafficCounts::Time* time_;
  TrafficCounts::Time* layer_time_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

CommunicatorTransport::CommunicatorTransport(Communicator& comm, Communicator* gradients)
    : comm_(comm), gradients_(gradients ? gradients : &comm) {
  if (gradients_->rank() != comm_.rank() || gradients_->size() != comm_.size()) {
    throw std::invalid_argument("communicator transport: the gradient communicator is rank " +
                                std::to_string(gradients_->rank()) + " of " + std::to_string(gradients_->size()) +
                                ", expected rank " + std::to_string(comm_.rank()) + " of " +
                                std::to_string(comm_.size()));
  }
}

void CommunicatorTransport::exchange(const std::vector<BoxMove>& moves, const EdgeTag& tag) {
  const uint32_t t = move_tag(tag);
  const bool add = tag.direction == Direction::kBackward;
  bool remote = false;
  for (const BoxMove& m : moves) remote = remote || (holds(m.src_device) != holds(m.dst_device));
  // counts_.layer_moves gains entries here: under the lock, as the other thread counts.
  TrafficCounts::Time* layer_time = nullptr;
  if (remote) {
    const std::lock_guard<std::mutex> lock(counts_mutex_);
    layer_time = &counts_.layer_moves[tag.consumer];
  }
  const CallTimer timer(counts_mutex_, remote ? &counts_.moves : nullptr, layer_time);
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

void CommunicatorTransport::all_reduce(const std::vector<int>& devices, const std::vector<std::vector<float>*>& buffers,
                                       const std::vector<ReduceSegment>& segments) {
  if (devices.size() != buffers.size()) throw std::invalid_argument("all_reduce: one buffer per device");
  const int p = static_cast<int>(devices.size());
  std::vector<int> sorted = devices;
  std::sort(sorted.begin(), sorted.end());
  const auto mine = std::find(sorted.begin(), sorted.end(), comm_.rank());
  if (p <= 1 || mine == sorted.end()) return;
  const CallTimer timer(counts_mutex_, &counts_.weight_reductions);
  Communicator& comm = *gradients_;
  const int i = static_cast<int>(mine - sorted.begin());
  const auto held = std::find(devices.begin(), devices.end(), comm_.rank()) - devices.begin();
  std::vector<float>& buffer = *buffers[static_cast<size_t>(held)];
  const auto n = static_cast<int64_t>(buffer.size());
  const int next = sorted[static_cast<size_t>((i + 1) % p)], prev = sorted[static_cast<size_t>((i + p - 1) % p)];
  const uint32_t tag = reduce_tag(ReduceKind::kWeightGradients, segments.empty() ? 0 : segments.front().layer);
  // The in-process ring's schedule, from position i's side: in step s it sends chunk
  // (i - s + phase) (reduce-scatter, then all-gather) and receives the one before.
  const int steps = 2 * (p - 1);
  const auto chunk_of = [&](int k, bool send) {
    const int phase = k / (p - 1), s = k % (p - 1);
    const int sent = ((i - s + phase) % p + p) % p;
    return ring_chunk(n, p, send ? sent : (sent + p - 1) % p);
  };
  // Each step's receive is posted before that step's send (see exchange()): the reduce-
  // scatter's into one chunk of scratch, added once it is in; the all-gather's straight into
  // the buffer, whose chunk there this rank no longer reads or sends. One receive is
  // outstanding at a time, so the scratch is one chunk, as it was before receives went first.
  std::vector<float> scratch(static_cast<size_t>(ring_chunk(n, p, 0).second));
  const auto post_receive = [&](int k) -> std::unique_ptr<Request> {
    const auto [lo, hi] = chunk_of(k, false);
    if (k >= steps || hi <= lo) return nullptr;
    float* into = k < p - 1 ? scratch.data() : buffer.data() + lo;
    return comm.irecv(into, static_cast<size_t>(hi - lo), prev, tag);
  };
  std::unique_ptr<Request> received = post_receive(0);
  for (int k = 0; k < steps; ++k) {
    const auto [slo, shi] = chunk_of(k, true);
    const auto [rlo, rhi] = chunk_of(k, false);
    std::unique_ptr<Request> sent;
    if (shi > slo) {
      sent = comm.isend(buffer.data() + slo, static_cast<size_t>(shi - slo), next, tag);
      count_ring_send(segments, slo, shi, comm.rank(), next);
    }
    if (received) {
      received->wait();
      if (k < p - 1) {
        for (int64_t e = rlo; e < rhi; ++e) buffer[static_cast<size_t>(e)] += scratch[static_cast<size_t>(e - rlo)];
      }
    }
    if (sent) sent->wait();
    received = post_receive(k + 1);  // no send of this rank is in flight now
  }
}

void CommunicatorTransport::all_reduce(const std::vector<int>& devices,
                                       const std::vector<std::vector<double>*>& buffers, ReduceKind kind, int layer) {
  if (devices.size() != buffers.size()) throw std::invalid_argument("all_reduce: one buffer per device");
  std::vector<int> sorted = devices;
  std::sort(sorted.begin(), sorted.end());
  const int me = comm_.rank();
  if (sorted.size() <= 1 || std::find(sorted.begin(), sorted.end(), me) == sorted.end()) return;
  const bool loss = kind == ReduceKind::kLoss;
  TrafficCounts::Time* layer_time = nullptr;
  if (!loss) {
    const std::lock_guard<std::mutex> lock(counts_mutex_);
    layer_time = &counts_.layer_statistics[layer];
  }
  const CallTimer timer(counts_mutex_, loss ? &counts_.loss_reductions : &counts_.statistics_reductions, layer_time);
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
