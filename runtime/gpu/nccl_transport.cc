// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
#include "runtime/gpu/nccl_transport.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "runtime/gpu/communicator_groups.h"
#include "runtime/gpu/cuda_check.h"
#include "runtime/gpu/device_arena.h"
#include "runtime/gpu/nccl_plan.h"
#include "runtime/gpu/nccl_world_state.h"

namespace layerplan {

static_assert(CommSplit::kNoColor == NCCL_SPLIT_NOCOLOR);

struct NcclTransport::State {
  gpu::DeviceArena arena;
  std::map<std::vector<int>, ncclComm_t> groups;  // ascending devices -> sub-communicator
  explicit State(size_t bytes) : arena(bytes) {}
};

namespace {

// Adds the wall time of its scope and one call to `time` and `layer_time` (when not null).
class Timed {
 public:
  Timed(TrafficCounts::Time* time, TrafficCounts::Time* layer_time)
      : time_(time), layer_time_(layer_time), start_(std::chrono::steady_clock::now()) {}
  ~Timed() {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    for (TrafficCounts::Time* t : {time_, layer_time_}) {
      if (t == nullptr) continue;
      t->seconds += s;
      ++t->calls;
    }
  }
  Timed(const Timed&) = delete;
  Timed& operator=(const Timed&) = delete;

 private:
  TrafficCounts::Time* time_;
  TrafficCounts::Time* layer_time_;
  std::chrono::steady_clock::time_point start_;
};

void started(NcclWorld::State& w, ncclResult_t r, int rank, const char* what) {
  if (r != ncclSuccess && r != ncclInProgress) w.fail(rank, what, ncclGetErrorString(r));
}

}  // namespace

NcclTransport::NcclTransport(NcclWorld& world, const ModelGraph& graph, const std::vector<Configuration>& plan,
                             int64_t bucket_bytes, size_t arena_bytes)
    : world_(world), state_(std::make_unique<State>(arena_bytes)) {
  NcclWorld::State& w = world_.state();
  const int rank = world_.rank();
  for (const CommSplit& split :
       plan_comm_splits(weight_reduction_groups(graph, plan, bucket_bytes, world_.size()), world_.size())) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t sub = nullptr;
    const int color = split.color[static_cast<size_t>(rank)];
    started(w, ncclCommSplit(w.comm, color, split.key[static_cast<size_t>(rank)], &sub, &config), rank,
            "ncclCommSplit");
    w.settle(rank, "ncclCommSplit");
    if (color == CommSplit::kNoColor) continue;
    w.settle(sub, rank, "sub-communicator of " + std::to_string(split.groups[static_cast<size_t>(color)].size()));
    state_->groups[split.groups[static_cast<size_t>(color)]] = sub;
  }
}

NcclTransport::~NcclTransport() {
  for (const auto& [devices, comm] : state_->groups) ncclCommDestroy(comm);
}

void NcclTransport::exchange(const std::vector<BoxMove>& moves, const EdgeTag& tag) {
  const int rank = world_.rank();
  const RankMoves plan = plan_box_moves(moves, rank);
  const bool remote = plan.uses_nccl();
  const Timed timer(remote ? &counts_.moves : nullptr, remote ? &counts_.layer_moves[tag.consumer] : nullptr);
  std::map<int, float*> arrived;  // move -> its received box on the device
  if (remote) {
    NcclWorld::State& w = world_.state();
    gpu::DeviceArena& arena = state_->arena;
    arena.reset();
    std::vector<const float*> outgoing;
    for (const PeerCall& s : plan.sends) {
      const BoxMove& m = moves[static_cast<size_t>(s.move)];
      const Tensor part = crop(*m.src, m.region);
      float* d = arena.allocate_n<float>(static_cast<size_t>(s.elements));
      gpu::check(cudaMemcpyAsync(d, part.data(), static_cast<size_t>(s.elements) * sizeof(float),
                                 cudaMemcpyHostToDevice, w.stream),
                 "box upload");
      outgoing.push_back(d);
    }
    for (const PeerCall& r : plan.recvs) arrived[r.move] = arena.allocate_n<float>(static_cast<size_t>(r.elements));
    started(w, ncclGroupStart(), rank, "group start");
    for (size_t k = 0; k < plan.sends.size(); ++k) {
      const PeerCall& s = plan.sends[k];
      started(w, ncclSend(outgoing[k], static_cast<size_t>(s.elements), ncclFloat32, s.peer, w.comm, w.stream), rank,
              "send");
      count_move(tag, rank, s.peer, s.elements);
    }
    for (const PeerCall& r : plan.recvs) {
      started(w, ncclRecv(arrived[r.move], static_cast<size_t>(r.elements), ncclFloat32, r.peer, w.comm, w.stream),
              rank, "receive");
    }
    started(w, ncclGroupEnd(), rank, "group end");
    w.settle(rank, "box moves of layer " + std::to_string(tag.consumer));
    w.wait_stream(rank, "box moves of layer " + std::to_string(tag.consumer));
  }
  // In list order, as the Gloo path, so that sums of halo gradients add in the same order.
  const bool add = tag.direction == Direction::kBackward;
  for (size_t i = 0; i < moves.size(); ++i) {
    const BoxMove& m = moves[i];
    if (m.dst_device != rank || m.region.empty()) continue;
    Tensor part;
    if (m.src_device == rank) {
      part = crop(*m.src, m.region);
    } else {
      part = Tensor(m.region, Tensor::kUninitialized);
      gpu::check(cudaMemcpy(part.data(), arrived.at(static_cast<int>(i)),
                            static_cast<size_t>(part.size()) * sizeof(float), cudaMemcpyDeviceToHost),
                 "box download");
    }
    if (add) {
      add_intersection(part, m.dst);
    } else {
      copy_intersection(part, m.dst);
    }
  }
}

void NcclTransport::all_reduce(const std::vector<int>& devices, const std::vector<std::vector<float>*>& buffers,
                               const std::vector<ReduceSegment>& segments) {
  const int rank = world_.rank();
  const auto held = std::find(devices.begin(), devices.end(), rank);
  if (devices.size() <= 1 || held == devices.end()) return;
  const Timed timer(&counts_.weight_reductions, nullptr);
  std::vector<int> sorted = devices;
  std::sort(sorted.begin(), sorted.end());
  NcclWorld::State& w = world_.state();
  ncclComm_t comm = static_cast<int>(sorted.size()) == world_.size() ? w.comm : state_->groups.at(sorted);
  std::vector<float>& buffer = *buffers[static_cast<size_t>(held - devices.begin())];
  state_->arena.reset();
  float* d = state_->arena.allocate_n<float>(buffer.size());
  gpu::check(cudaMemcpyAsync(d, buffer.data(), buffer.size() * sizeof(float), cudaMemcpyHostToDevice, w.stream),
             "gradient upload");
  started(w, ncclAllReduce(d, d, buffer.size(), ncclFloat32, ncclSum, comm, w.stream), rank, "all-reduce");
  w.settle(comm, rank, "weight-gradient all-reduce");
  gpu::check(cudaMemcpyAsync(buffer.data(), d, buffer.size() * sizeof(float), cudaMemcpyDeviceToHost, w.stream),
             "gradient download");
  w.wait_stream(rank, "weight-gradient all-reduce");
  for (const RingSend& s : ring_sends(static_cast<int64_t>(buffer.size()), devices, rank))
    count_ring_send(segments, s.lo, s.hi, rank, s.peer);
}

void NcclTransport::all_reduce(const std::vector<int>& devices, const std::vector<std::vector<double>*>& buffers,
                               ReduceKind kind, int layer) {
  const int rank = world_.rank();
  const std::vector<int> peers = exchange_peers(devices, rank);
  if (peers.empty()) return;
  const bool loss = kind == ReduceKind::kLoss;
  const Timed timer(loss ? &counts_.loss_reductions : &counts_.statistics_reductions,
                    loss ? nullptr : &counts_.layer_statistics[layer]);
  std::vector<double>& buffer =
      *buffers[static_cast<size_t>(std::find(devices.begin(), devices.end(), rank) - devices.begin())];
  const size_t n = buffer.size();
  NcclWorld::State& w = world_.state();
  state_->arena.reset();
  auto* mine = static_cast<double*>(state_->arena.allocate(n * sizeof(double)));
  auto* theirs = static_cast<double*>(state_->arena.allocate(peers.size() * n * sizeof(double)));
  gpu::check(cudaMemcpyAsync(mine, buffer.data(), n * sizeof(double), cudaMemcpyHostToDevice, w.stream),
             "statistics upload");
  started(w, ncclGroupStart(), rank, "group start");
  for (size_t k = 0; k < peers.size(); ++k) {
    started(w, ncclSend(mine, n, ncclFloat64, peers[k], w.comm, w.stream), rank, "send");
    started(w, ncclRecv(theirs + k * n, n, ncclFloat64, peers[k], w.comm, w.stream), rank, "receive");
    count_reduce(kind, layer, rank, peers[k], static_cast<int64_t>(n));
  }
  started(w, ncclGroupEnd(), rank, "group end");
  w.settle(rank, "statistics exchange of layer " + std::to_string(layer));
  std::vector<double> from(peers.size() * n);
  gpu::check(cudaMemcpyAsync(from.data(), theirs, from.size() * sizeof(double), cudaMemcpyDeviceToHost, w.stream),
             "statistics download");
  w.wait_stream(rank, "statistics exchange of layer " + std::to_string(layer));
  // The members' buffers added in ascending device order, as every member does.
  std::vector<double> sum;
  size_t k = 0;
  std::vector<int> members = peers;
  members.push_back(rank);
  std::sort(members.begin(), members.end());
  for (const int member : members) {
    const double* b = member == rank ? buffer.data() : from.data() + (k++) * n;
    if (sum.empty()) {
      sum.assign(b, b + n);
    } else {
      for (size_t e = 0; e < n; ++e) sum[e] += b[e];
    }
  }
  buffer = std::move(sum);
}

}  // namespace layerplan
