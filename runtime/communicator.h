#pragma once
// The communication interface that workers use: point-to-point transfers of float
// buffers, all-reduce (sum), broadcast and barrier over a group of ranks, and
// sub-groups for the replicas of one weight shard. A CPU implementation over Gloo
// (runtime/gloo_communicator.h) exists; a GPU one over NCCL is meant to fit behind
// the same interface.
//
// Every communicator counts the bytes it sends, per destination (global rank) and
// per kind (point-to-point or collective), so that a test can compare the bytes a
// run moved with the planner's prediction. docs/runtime.md says exactly what each
// operation counts; in short:
//   - send: `count * 4` bytes to the peer, counted when the send is posted;
//   - all_reduce_sum over p ranks: a ring (reduce-scatter then all-gather). The
//     buffer is cut into p chunks (ring_chunks()); rank r sends 2(p-1) chunks to
//     rank r+1 (mod p): all but chunk r+1 in the reduce-scatter, all but chunk r+2 in
//     the all-gather. The group sends 2(p-1)·n bytes in total, 2(p-1)/p·n per rank
//     when p divides n;
//   - broadcast: a binomial tree from the root; each rank sends the whole buffer to
//     each of its children, so the group sends (p-1)·n bytes in total;
//   - barrier: nothing (it carries no data).
// The Gloo implementation moves exactly these bytes (it runs these algorithms over
// Gloo's point-to-point transport), so the counters are what was sent, not an estimate.
//
// Failures: every operation has a deadline. A peer that died, or that does not take
// part within the timeout, makes the operation throw CommError naming the operation
// and the peer; it never hangs. After a CommError the communicator (and the groups made
// from it) may not be used again.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace layerplan {

// A communication operation failed: a peer died, closed its connection, or did not
// take part before the deadline. The message names the rank, the operation and the peer.
class CommError : public std::runtime_error {
 public:
  explicit CommError(const std::string& message) : std::runtime_error(message) {}
};

enum class TrafficKind { kPointToPoint = 0, kCollective = 1 };

// Bytes sent by this process, per destination global rank and per kind. Thread-safe.
// One ByteCounters is shared by a world communicator and every group made from it.
class ByteCounters {
 public:
  explicit ByteCounters(int world_size);

  int world_size() const { return world_size_; }
  void add(TrafficKind kind, int global_peer, uint64_t bytes);
  // Bytes sent to `global_peer` of this kind.
  uint64_t sent_to(int global_peer, TrafficKind kind) const;
  // Bytes sent to all peers of this kind.
  uint64_t total(TrafficKind kind) const;
  // Sets every counter to 0.
  void reset();

 private:
  int world_size_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // [peer * 2 + kind]
};

// A posted point-to-point transfer. wait() blocks until it completes and throws
// CommError on failure or timeout. Destroying a Request that was not waited for
// waits for it, ignoring errors.
class Request {
 public:
  virtual ~Request() = default;
  virtual void wait() = 0;
};

// A group of ranks that can talk to each other. Ranks are numbered 0..size()-1 within
// the group; global_rank() maps them to the world's numbering, which the byte counters use.
// Not thread-safe for collectives: call collectives on one communicator from one thread
// at a time, in the same order on every member (as with NCCL and MPI).
class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Global (world) rank of member `group_rank`.
  virtual int global_rank(int group_rank) const = 0;

  // Posts a send of `count` floats to member `peer` with `tag`. The buffer must stay
  // valid and unchanged until the request is waited for. Sends to the same peer with
  // the same tag are matched with receives in the order they were posted. A send to
  // oneself is not supported (copy locally instead): throws std::invalid_argument.
  virtual std::unique_ptr<Request> isend(const float* data, size_t count, int peer, uint32_t tag) = 0;
  // Posts a receive of exactly `count` floats from member `peer` with `tag`.
  virtual std::unique_ptr<Request> irecv(float* data, size_t count, int peer, uint32_t tag) = 0;
  void send(const float* data, size_t count, int peer, uint32_t tag) { isend(data, count, peer, tag)->wait(); }
  void recv(float* data, size_t count, int peer, uint32_t tag) { irecv(data, count, peer, tag)->wait(); }

  // In place: on return every member's `data` holds the element-wise sum of all
  // members' inputs. Every member passes the same count.
  virtual void all_reduce_sum(float* data, size_t count) = 0;
  // In place: on return every member's `data` holds member `root`'s.
  virtual void broadcast(float* data, size_t count, int root) = 0;
  // Returns once every member has entered the barrier.
  virtual void barrier() = 0;

  // A communicator over the members given by their global ranks (sorted, distinct,
  // containing this process). Only the members call it, each with the same list, and
  // every process must create its groups in the same order (group creation blocks until
  // all members have connected). Group rank i is global_ranks[i]. The group shares this
  // communicator's byte counters. Throws std::invalid_argument for a bad list.
  virtual std::unique_ptr<Communicator> create_group(std::span<const int> global_ranks) = 0;

  // Bytes sent by this process, shared with every group made from the same world.
  virtual ByteCounters& counters() = 0;
};

// How a ring all-reduce of `count` elements over `ranks` members cuts the buffer:
// chunk i is [offsets[i], offsets[i+1]). The first count % ranks chunks have one
// element more than the rest. Exposed so tests and the planner can count exactly.
std::vector<size_t> ring_chunk_offsets(size_t count, int ranks);

// Bytes that member `rank` of a ring all-reduce of `count` floats over `ranks` members
// sends to member (rank + 1) % ranks (see the header comment).
uint64_t ring_all_reduce_bytes_sent(size_t count, int ranks, int rank);

// The children of member `rank` in the binomial broadcast tree rooted at `root` over
// `ranks` members, in the order they are sent to.
std::vector<int> broadcast_tree_children(int ranks, int root, int rank);
// The parent of member `rank` in that tree (-1 for the root).
int broadcast_tree_parent(int ranks, int root, int rank);

}  // namespace layerplan
