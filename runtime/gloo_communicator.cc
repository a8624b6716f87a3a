#include "runtime/gloo_communicator.h"

#include <gloo/barrier.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <net/if.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>

#include "common/error.h"
#include "runtime/process_manager.h"

namespace layerplan {
namespace {

// Gloo's collectives use slot prefixes 0x01..0x08 (gloo/types.h); ours stay clear of them.
constexpr uint64_t kPointToPointSlot = 0x40;
constexpr uint64_t kAllReduceSlot = 0x41;
constexpr uint64_t kBroadcastSlot = 0x42;

uint64_t make_slot(uint64_t prefix, uint32_t tag) { return (prefix << 56) | (static_cast<uint64_t>(tag) << 24); }

// Gloo's rendezvous store over a process manager's key-value space (PMI-2 or PMIx). Keys
// become visible only after a fence that every task of the step joins, so each set is a
// put and a fence: Gloo's full-mesh connect sets the same keys on every rank (its
// hostname, then its addresses), while what it reads differs (rank 0 reads no hostname),
// so fencing on the sets is what keeps the ranks' fences matched.
class ProcessManagerStore : public gloo::rendezvous::Store {
 public:
  explicit ProcessManagerStore(ProcessManager& manager) : manager_(manager) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    manager_.put(key, data);
    manager_.fence();
  }
  std::vector<char> get(const std::string& key) override { return manager_.get(key); }
  // Every key set before is visible already; the fence has no timeout of its own (Slurm
  // ends the step when a task dies).
  void wait(const std::vector<std::string>& /*keys*/) override {}
  void wait(const std::vector<std::string>& /*keys*/, const std::chrono::milliseconds& /*timeout*/) override {}

 private:
  ProcessManager& manager_;
};

bool uses_process_manager(Rendezvous r) { return r == Rendezvous::kPmi2 || r == Rendezvous::kPmix; }

ProcessManager& manager_of(Rendezvous r) {
  return process_manager(r == Rendezvous::kPmix ? ProcessManagerKind::kPmix : ProcessManagerKind::kPmi2);
}

// What every communicator of one process shares: the tcp device, the store and the counters.
struct GlooShared {
  std::shared_ptr<gloo::transport::Device> device;
  std::unique_ptr<gloo::rendezvous::Store> store;
  std::shared_ptr<ByteCounters> counters;
  std::chrono::milliseconds timeout{};
  std::string store_name;  // where the ranks meet, for messages
  int world_size = 1;
  bool store_fences_every_rank = false;  // PMI-2: only groups of the whole world can meet
  std::mutex mutex;
  std::map<std::string, int> groups_made;  // how often each member list was used, for unique store prefixes
};

std::string join(std::span<const int> ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size(); ++i) out += (i ? "," : "") + std::to_string(ranks[i]);
  return out;
}

class GlooRequest : public Request {
 public:
  GlooRequest(std::unique_ptr<gloo::transport::UnboundBuffer> buffer, bool is_send, std::chrono::milliseconds timeout,
              std::string what)
      : buffer_(std::move(buffer)), is_send_(is_send), timeout_(timeout), what_(std::move(what)) {}
  ~GlooRequest() override {
    try {
      wait();
    } catch (...) {  // the error was the caller's to see by calling wait()
    }
  }

  void wait() override {
    if (done_) return;
    done_ = true;
    if (!buffer_) return;  // an empty transfer
    bool ok = false;
    try {
      ok = is_send_ ? buffer_->waitSend(timeout_) : buffer_->waitRecv(timeout_);
    } catch (const std::exception& e) {
      throw CommError(what_ + ": " + e.what());
    }
    if (!ok) throw CommError(what_ + ": aborted");
  }

 private:
  std::unique_ptr<gloo::transport::UnboundBuffer> buffer_;
  bool is_send_;
  std::chrono::milliseconds timeout_;
  std::string what_;
  bool done_ = false;
};

class GlooCommunicator : public Communicator {
 public:
  // Connects this process, member `rank` of `members` (global ranks), to the other
  // members through the store under `prefix`.
  GlooCommunicator(std::shared_ptr<GlooShared> shared, std::string prefix, std::vector<int> members, int rank)
      : shared_(std::move(shared)), prefix_(std::move(prefix)), members_(std::move(members)), rank_(rank) {
    const int size = static_cast<int>(members_.size());
    context_ = std::make_shared<gloo::rendezvous::Context>(rank_, size);
    context_->setTimeout(shared_->timeout);
    try {
      gloo::rendezvous::PrefixStore store(prefix_, *shared_->store);
      context_->connectFullMesh(store, shared_->device);
      // connectFullMesh can return on one member while others are still connecting; a
      // member that then left at once would fail their connection. After this barrier
      // every member has its whole mesh.
      if (size > 1) {
        gloo::BarrierOptions barrier(context_);
        barrier.setTag(next_sequence());
        barrier.setTimeout(shared_->timeout);
        gloo::barrier(barrier);
      }
    } catch (const std::exception& e) {
      throw CommError(who() + ": could not connect to the other " + std::to_string(size - 1) + " rank(s) of group [" +
                      join(members_) + "] through " + shared_->store_name + " within " +
                      std::to_string(shared_->timeout.count()) + " ms (is every rank started?): " + e.what());
    }
  }

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(members_.size()); }
  int global_rank(int group_rank) const override {
    check_member(group_rank, "global_rank");
    return members_[static_cast<size_t>(group_rank)];
  }
  ByteCounters& counters() override { return *shared_->counters; }

  std::unique_ptr<Request> isend(const float* data, size_t count, int peer, uint32_t tag) override {
    check_peer(peer, "send");
    const std::string what = who() + ": send of " + std::to_string(count) + " floats to rank " +
                             std::to_string(global_rank(peer)) + " (tag " + std::to_string(tag) + ")";
    return post(const_cast<float*>(data), count, peer, make_slot(kPointToPointSlot, tag), true, what,
                TrafficKind::kPointToPoint);
  }

  std::unique_ptr<Request> irecv(float* data, size_t count, int peer, uint32_t tag) override {
    check_peer(peer, "recv");
    const std::string what = who() + ": receive of " + std::to_string(count) + " floats from rank " +
                             std::to_string(global_rank(peer)) + " (tag " + std::to_string(tag) + ")";
    return post(data, count, peer, make_slot(kPointToPointSlot, tag), false, what, TrafficKind::kPointToPoint);
  }

  void all_reduce_sum(float* data, size_t count) override {
    const int p = size();
    if (p == 1 || count == 0) return;
    const uint64_t slot = make_slot(kAllReduceSlot, next_sequence());
    const std::vector<size_t> offsets = ring_chunk_offsets(count, p);
    const auto chunk = [&](int c) { return static_cast<size_t>((c % p + p) % p); };
    const int right = (rank_ + 1) % p, left = (rank_ + p - 1) % p;
    const std::string from_left = " from rank " + std::to_string(global_rank(left));
    const std::string to_right = " to rank " + std::to_string(global_rank(right));
    if (scratch_.size() < offsets[1] - offsets[0]) scratch_.resize(offsets[1] - offsets[0]);  // chunk 0 is a largest
    // Reduce-scatter: at step k, send chunk r-k to the right and add chunk r-k-1 from the left.
    for (int k = 0; k < p - 1; ++k) {
      const size_t send = chunk(rank_ - k), recv = chunk(rank_ - k - 1);
      const std::string step = who() + ": all_reduce_sum (reduce-scatter step " + std::to_string(k) + ")";
      float* target = data + offsets[recv];
      exchange(data + offsets[send], offsets[send + 1] - offsets[send], right, scratch_.data(),
               offsets[recv + 1] - offsets[recv], left, slot, step + to_right, step + from_left,
               [&](size_t begin, size_t length) {
                 for (size_t i = begin; i < begin + length; ++i) target[i] += scratch_[i];
               });
    }
    // All-gather: at step k, send chunk r+1-k (complete) to the right and take chunk r-k from the left.
    for (int k = 0; k < p - 1; ++k) {
      const size_t send = chunk(rank_ + 1 - k), recv = chunk(rank_ - k);
      const std::string step = who() + ": all_reduce_sum (all-gather step " + std::to_string(k) + ")";
      exchange(data + offsets[send], offsets[send + 1] - offsets[send], right, data + offsets[recv],
               offsets[recv + 1] - offsets[recv], left, slot, step + to_right, step + from_left, [](size_t, size_t) {});
    }
  }

  void broadcast(float* data, size_t count, int root) override {
    check_member(root, "broadcast root");
    const int p = size();
    if (p == 1 || count == 0) return;
    const uint64_t slot = make_slot(kBroadcastSlot, next_sequence());
    const int parent = broadcast_tree_parent(p, root, rank_);
    if (parent >= 0) {
      post(data, count, parent, slot, false,
           who() + ": broadcast from root " + std::to_string(global_rank(root)) + ", receive from rank " +
               std::to_string(global_rank(parent)),
           TrafficKind::kCollective)
          ->wait();
    }
    std::vector<std::unique_ptr<Request>> sends;
    for (int child : broadcast_tree_children(p, root, rank_)) {
      sends.push_back(post(data, count, child, slot, true,
                           who() + ": broadcast from root " + std::to_string(global_rank(root)) + ", send to rank " +
                               std::to_string(global_rank(child)),
                           TrafficKind::kCollective));
    }
    for (auto& s : sends) s->wait();
  }

  void barrier() override {
    if (size() == 1) return;
    try {
      gloo::BarrierOptions options(context_);
      options.setTag(next_sequence());
      options.setTimeout(shared_->timeout);
      gloo::barrier(options);
    } catch (const std::exception& e) {
      throw CommError(who() + ": barrier of group [" + join(members_) + "]: " + e.what());
    }
  }

  std::unique_ptr<Communicator> create_group(std::span<const int> global_ranks) override {
    const std::string list = "[" + join(global_ranks) + "]";
    if (global_ranks.empty()) throw std::invalid_argument("create_group: empty member list");
    for (size_t i = 0; i < global_ranks.size(); ++i) {
      if (i > 0 && global_ranks[i] <= global_ranks[i - 1]) {
        throw std::invalid_argument("create_group " + list + ": ranks must be sorted and distinct");
      }
      if (std::find(members_.begin(), members_.end(), global_ranks[i]) == members_.end()) {
        throw std::invalid_argument("create_group " + list + ": rank " + std::to_string(global_ranks[i]) +
                                    " is not in this communicator [" + join(members_) + "]");
      }
    }
    const int me = members_[static_cast<size_t>(rank_)];
    const auto mine = std::find(global_ranks.begin(), global_ranks.end(), me);
    if (mine == global_ranks.end()) {
      throw std::invalid_argument("create_group " + list + ": rank " + std::to_string(me) + " is not a member");
    }
    if (shared_->store_fences_every_rank && static_cast<int>(global_ranks.size()) != shared_->world_size) {
      throw std::invalid_argument("create_group " + list +
                                  ": groups of some ranks need the rendezvous directory (PMI-2's fence takes "
                                  "every task of the step)");
    }
    std::string prefix = prefix_ + "/group" + list;
    {
      std::lock_guard<std::mutex> lock(shared_->mutex);
      prefix += "#" + std::to_string(shared_->groups_made[prefix]++);
    }
    return std::make_unique<GlooCommunicator>(shared_, prefix,
                                              std::vector<int>(global_ranks.begin(), global_ranks.end()),
                                              static_cast<int>(mine - global_ranks.begin()));
  }

 private:
  std::string who() const { return "rank " + std::to_string(members_[static_cast<size_t>(rank_)]); }

  void check_member(int group_rank, const char* what) const {
    if (group_rank < 0 || group_rank >= size()) {
      throw std::invalid_argument(std::string(what) + ": rank " + std::to_string(group_rank) + " outside a group of " +
                                  std::to_string(size()));
    }
  }
  void check_peer(int peer, const char* what) const {
    check_member(peer, what);
    if (peer == rank_) throw std::invalid_argument(std::string(what) + " to oneself is not supported");
  }

  uint32_t next_sequence() { return sequence_++; }

  // One ring step: sends `send_count` floats to `to` while receiving `recv_count` from
  // `from`, both cut into segments of at most kSegmentFloats that are all posted at once,
  // so that the transfer overlaps `on_received(begin, length)` (called per received
  // segment, in order) as in Gloo's own ring.
  template <typename OnReceived>
  void exchange(const float* send_data, size_t send_count, int to, float* recv_data, size_t recv_count, int from,
                uint64_t slot, const std::string& send_what, const std::string& recv_what, OnReceived on_received) {
    constexpr size_t kSegmentFloats = size_t{256} * 1024;  // 1 MiB, Gloo's default segment bound
    std::vector<std::unique_ptr<Request>> recvs, sends;
    for (size_t b = 0; b < recv_count; b += kSegmentFloats) {
      recvs.push_back(post(recv_data + b, std::min(kSegmentFloats, recv_count - b), from, slot, false, recv_what,
                           TrafficKind::kCollective));
    }
    for (size_t b = 0; b < send_count; b += kSegmentFloats) {
      sends.push_back(post(const_cast<float*>(send_data) + b, std::min(kSegmentFloats, send_count - b), to, slot, true,
                           send_what, TrafficKind::kCollective));
    }
    for (size_t i = 0; i < recvs.size(); ++i) {
      recvs[i]->wait();
      const size_t begin = i * kSegmentFloats;
      on_received(begin, std::min(kSegmentFloats, recv_count - begin));
    }
    for (auto& s : sends) s->wait();
  }

  // Posts one transfer of `count` floats with `peer` (a group rank) and counts a send.
  std::unique_ptr<Request> post(float* data, size_t count, int peer, uint64_t slot, bool is_send,
                                const std::string& what, TrafficKind kind) {
    if (count == 0) return std::make_unique<GlooRequest>(nullptr, is_send, shared_->timeout, what);
    const size_t bytes = count * sizeof(float);
    try {
      auto buffer = context_->createUnboundBuffer(data, bytes);
      if (is_send) {
        buffer->send(peer, slot);
        shared_->counters->add(kind, global_rank(peer), bytes);
      } else {
        buffer->recv(peer, slot);
      }
      return std::make_unique<GlooRequest>(std::move(buffer), is_send, shared_->timeout, what);
    } catch (const std::exception& e) {
      throw CommError(what + ": " + e.what());
    }
  }

  std::shared_ptr<GlooShared> shared_;
  std::string prefix_;
  std::vector<int> members_;
  int rank_;
  std::shared_ptr<gloo::rendezvous::Context> context_;
  uint32_t sequence_ = 0;       // collectives issued, in the same order on every member
  std::vector<float> scratch_;  // all-reduce receive buffer, kept between calls
};

int env_int(const char* name, int fallback, bool required) {
  const char* text = std::getenv(name);
  if (!text || !*text) {
    require(!required, std::string(name) + " is not set: expected it from `layerplan launch`");
    return fallback;
  }
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  require(*end == '\0' && value >= 0 && value <= 1'000'000,
          std::string(name) + "='" + text + "': expected a non-negative integer");
  return static_cast<int>(value);
}

// The optional settings every way of starting ranks shares.
void read_comm_settings(GlooOptions& options) {
  const int timeout_s = env_int("LAYERPLAN_COMM_TIMEOUT_S", 60, false);
  require(timeout_s >= 1, "LAYERPLAN_COMM_TIMEOUT_S=0: expected at least 1 second");
  options.timeout = std::chrono::seconds(timeout_s);
  if (const char* iface = std::getenv("LAYERPLAN_COMM_INTERFACE"); iface && *iface) options.interface = iface;
}

// Checks what connect_gloo needs and names the store the ranks meet in.
std::unique_ptr<gloo::rendezvous::Store> make_store(const GlooOptions& options) {
  if (uses_process_manager(options.rendezvous)) {
    ProcessManager& pm = manager_of(options.rendezvous);
    require(pm.rank() == options.rank && pm.size() == options.world_size,
            std::string(pm.name()) + " says rank " + std::to_string(pm.rank()) + " of " + std::to_string(pm.size()) +
                ", the environment rank " + std::to_string(options.rank) + " of " + std::to_string(options.world_size) +
                ": expected the same");
    return std::make_unique<ProcessManagerStore>(pm);
  }
  std::error_code ec;
  require(std::filesystem::is_directory(options.store_dir, ec),
          "rendezvous directory '" + options.store_dir + "': expected an existing directory");
  return std::make_unique<gloo::rendezvous::FileStore>(options.store_dir);
}

}  // namespace

GlooOptions gloo_options_from_env() {
  GlooOptions options;
  options.rank = env_int("LAYERPLAN_RANK", 0, true);
  options.world_size = env_int("LAYERPLAN_WORLD_SIZE", 1, true);
  const char* dir = std::getenv("LAYERPLAN_STORE_DIR");
  require(dir && *dir, "LAYERPLAN_STORE_DIR is not set: expected it from `layerplan launch`");
  options.store_dir = dir;
  read_comm_settings(options);
  options.local_rank = env_int("LAYERPLAN_LOCAL_RANK", options.rank, false);
  return options;
}

std::optional<GlooOptions> world_from_env() {
  if (std::getenv("LAYERPLAN_RANK") != nullptr) return gloo_options_from_env();
  // SLURM_STEP_NUM_TASKS is set for the tasks of an srun step only, not in a batch
  // script, which may run a one-process training itself.
  const int tasks = env_int("SLURM_STEP_NUM_TASKS", 1, false);
  if (tasks <= 1) return std::nullopt;
  const int task = env_int("SLURM_PROCID", 0, false);
  const ProcessManagerKind manager = process_manager_from_env();
  require(manager != ProcessManagerKind::kNone,
          "task " + std::to_string(task) + " of " + std::to_string(tasks) +
              " of a Slurm step without PMI: start the step with `srun --mpi=pmi2` (or set "
              "MpiDefault=pmi2 in slurm.conf) so that its tasks can meet");
  GlooOptions options;
  options.rendezvous = manager == ProcessManagerKind::kPmix ? Rendezvous::kPmix : Rendezvous::kPmi2;
  options.rank = task;
  options.world_size = tasks;
  options.local_rank = env_int("SLURM_LOCALID", 0, false);
  read_comm_settings(options);
  return options;
}

std::unique_ptr<Communicator> connect_gloo(const GlooOptions& options) {
  require(options.world_size >= 1, "world size " + std::to_string(options.world_size) + ": expected at least 1 rank");
  require(options.rank >= 0 && options.rank < options.world_size,
          "rank " + std::to_string(options.rank) + ": expected 0.." + std::to_string(options.world_size - 1));
  std::unique_ptr<gloo::rendezvous::Store> store = make_store(options);
  require(options.timeout.count() > 0, "communication timeout: expected a positive duration");
  // An unknown interface name would make Gloo throw from deep inside; say it plainly.
  require(::if_nametoindex(options.interface.c_str()) != 0,
          "network interface '" + options.interface + "': no such interface on this machine");

  auto shared = std::make_shared<GlooShared>();
  shared->timeout = options.timeout;
  shared->world_size = options.world_size;
  shared->store_fences_every_rank = uses_process_manager(options.rendezvous);
  shared->store_name = uses_process_manager(options.rendezvous) ? std::string(manager_of(options.rendezvous).name())
                                                                : "directory " + options.store_dir;
  shared->counters = std::make_shared<ByteCounters>(options.world_size);
  try {
    gloo::transport::tcp::attr attr;
    attr.iface = options.interface;
    attr.ai_family = AF_INET;  // AF_UNSPEC may pick IPv6
    shared->device = gloo::transport::tcp::CreateDevice(attr);
    shared->store = std::move(store);
  } catch (const std::exception& e) {
    throw CommError("rank " + std::to_string(options.rank) + ": could not set up Gloo on interface '" +
                    options.interface + "' with " + shared->store_name + ": " + e.what());
  }
  std::vector<int> members(static_cast<size_t>(options.world_size));
  for (int i = 0; i < options.world_size; ++i) members[static_cast<size_t>(i)] = i;
  return std::make_unique<GlooCommunicator>(shared, "world", std::move(members), options.rank);
}

std::vector<char> share_from_rank0(const GlooOptions& options, const std::string& key, std::span<const char> value) {
  const std::string name = "layerplan/share/" + key;
  if (uses_process_manager(options.rendezvous)) {
    ProcessManager& pm = manager_of(options.rendezvous);
    if (options.rank == 0) pm.put(name, value);
    pm.fence();
    return options.rank == 0 ? std::vector<char>(value.begin(), value.end()) : pm.get(name);
  }
  try {
    std::unique_ptr<gloo::rendezvous::Store> store = make_store(options);
    if (options.rank == 0) {
      store->set(name, std::vector<char>(value.begin(), value.end()));
      return {value.begin(), value.end()};
    }
    store->wait({name}, options.timeout);
    return store->get(name);
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw CommError("rank " + std::to_string(options.rank) + ": '" + key + "' from rank 0 through directory " +
                    options.store_dir + ": " + e.what());
  }
}

}  // namespace layerplan
