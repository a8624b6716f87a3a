#pragma once
// How the executor moves data between devices, and what it counts.
//
// The executor never touches another device's tensors itself: every activation that a
// consumer tile reads from a producer tile, every input gradient sent back to the owner
// of the region, and every all-reduce (weight gradients, batch-norm statistics) goes
// through a Transport. InProcessTransport (in_process_transport.h) copies within one
// process; a Communicator-backed transport is meant to sit behind the same interface.
//
// A process counts what it sends. Counting is in elements (not bytes) and only between different devices, as
// model/geometry.h's transfer_volumes and CostModel::sync count them:
//   - exchange: the elements of each move's region, per edge (consumer, slot),
//     direction and (src, dst) device pair;
//   - weight-gradient all_reduce over p devices: a ring (reduce-scatter then all-gather)
//     over the devices in ascending order; the buffer is cut into p chunks and each device
//     sends 2(p-1) chunks to the next, 2(p-1)·n elements in all, the volume
//     CostModel::sync prices for a ring, counted per layer of the buffer's segments;
//   - statistics and loss all_reduce over p devices: each device sends its n elements to
//     each other device, p(p-1)·n elements in all.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "model/geometry.h"
#include "runtime/kernels/tensor.h"

namespace layerplan {

enum class Direction { kForward, kBackward };

// Which edge of the graph a box move belongs to: input `slot` of layer `consumer`.
struct EdgeTag {
  int consumer = 0;
  int slot = 0;
  Direction direction = Direction::kForward;
};

// `elements` consecutive elements of an all-reduce buffer that belong to `layer`.
struct ReduceSegment {
  int layer = 0;
  int64_t elements = 0;
};

// What an all-reduce reduces: weight gradients or batch-norm statistics of `layer`, or
// the loss shares of the loss layer's tiles.
enum class ReduceKind { kWeightGradients, kBatchNormStatistics, kLoss };

// Elements moved between different devices since construction (or reset()).
struct TrafficCounts {
  // (consumer, slot, src device, dst device) -> elements, per direction.
  std::map<std::tuple<int, int, int, int>, int64_t> forward, backward;
  // layer -> elements sent by all members of its all-reduces.
  std::map<int, int64_t> weight_sync, statistics, loss;
  // (src device, dst device) -> elements of every kind.
  std::map<std::pair<int, int>, int64_t> pairs;
  // Wall time a process spent in exchange() and all_reduce() calls, waiting for its peers
  // included, and how many calls it made that moved data between processes (a
  // CommunicatorTransport measures it; an InProcessTransport leaves it zero). With the
  // executor's overlap, weight_reductions is the communication thread's time, beside the
  // backward.
  struct Time {
    double seconds = 0;
    int64_t calls = 0;
  };
  Time moves, weight_reductions, statistics_reductions, loss_reductions;
  // The same time per layer: the moves of its input edges (both directions) and its
  // batch-norm statistics reductions, where `layerplan predict` prices its transfer and sync.
  std::map<int, Time> layer_moves, layer_statistics;
};

// One box move of an exchange: the elements of `region` (the intersection of the two
// tiles' boxes, which every process can compute) from a tensor on src_device into a
// tensor on dst_device. A process passes null for a tensor of a device it does not hold.
struct BoxMove {
  const Tensor* src = nullptr;
  int src_device = 0;
  Tensor* dst = nullptr;
  int dst_device = 0;
  Box region;
};

class Transport {
 public:
  virtual ~Transport() = default;

  // Whether this process holds `device`'s tiles (in one process: every device).
  virtual bool holds(int device) const = 0;

  // Runs the moves of one edge in one direction. Forward activations are copied;
  // backward input gradients are added, since overlapping halos and the partial input
  // gradients of channel-split tiles sum at the region's owner. Every process passes the
  // same list in the same order (tensors null where it does not hold the device).
  virtual void exchange(const std::vector<BoxMove>& moves, const EdgeTag& tag) = 0;

  // Sums buffers[i] (held by devices[i], all of one length) in place; afterwards every
  // buffer holds the same values, bitwise. `devices` are distinct; buffers[i] is null
  // where this process does not hold devices[i]. Every process whose device is in the
  // group calls it, in the same order.
  //
  // Weight gradients (floats), by a ring over the devices in ascending order, the volume
  // CostModel::sync prices. The buffer may hold the gradients of several layers one after
  // another (a bucket): `segments` says whose elements are where, in order, so that each
  // element sent is counted for its layer.
  virtual void all_reduce(const std::vector<int>& devices, const std::vector<std::vector<float>*>& buffers,
                          const std::vector<ReduceSegment>& segments) = 0;
  // Batch-norm statistics and loss shares (doubles, a few per channel), by a direct
  // exchange: every member sends its whole buffer to every other member, and each adds
  // the p buffers in ascending device order. One message time instead of the ring's
  // 2(p-1), for p-1 times the ring's bytes, which these small buffers can afford.
  virtual void all_reduce(const std::vector<int>& devices, const std::vector<std::vector<double>*>& buffers,
                          ReduceKind kind, int layer) = 0;

  // Whether the weight-gradient all_reduce may run on another thread while this one calls
  // exchange() and the statistics all_reduce (ExecutorOptions::overlap): calls of each
  // kind still come one at a time, in the same order on every process.
  virtual bool reduces_concurrently() const { return false; }

  // Read and reset only while no call is running on another thread.
  const TrafficCounts& counts() const { return counts_; }
  void reset_counts() { counts_ = {}; }

 protected:
  // Counts a move or reduction send of `elements` from src to dst (different devices).
  void count_move(const EdgeTag& tag, int src, int dst, int64_t elements);
  void count_reduce(ReduceKind kind, int layer, int src, int dst, int64_t elements);
  // Counts a ring send of weight-gradient elements [lo, hi) of a buffer laid out as `segments`.
  void count_ring_send(const std::vector<ReduceSegment>& segments, int64_t lo, int64_t hi, int src, int dst);

  TrafficCounts counts_;
  // Held while counts_ changes: an overlapped weight-gradient all_reduce counts from the
  // executor's communication thread.
  std::mutex counts_mutex_;
};

// The chunk [begin, end) of an n-element buffer that ring position `index` of p owns:
// n/p elements each, the first n%p chunks one more.
std::pair<int64_t, int64_t> ring_chunk(int64_t n, int p, int index);

}  // namespace layerplan
