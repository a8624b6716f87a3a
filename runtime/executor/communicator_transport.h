#pragma once
// A Transport over a Communicator: rank r holds device r's tiles, and box moves and ring
// all-reduces between devices are point-to-point transfers between ranks.
//
// Tags: a box move of input `slot` of layer L in direction d uses L·64 + 2·slot + d; an
// all-reduce of layer L (of a bucket: its first segment's layer) uses L·64 + 60 + kind. Transfers with the same peer
// and tag match in the order they are posted, and every rank walks the same moves in the same order, so one tag per
// edge and direction suffices. Doubles (batch-norm statistics and loss shares) travel as pairs of floats.
//
// Overlap (ExecutorOptions::overlap): given a second communicator over the same ranks (its own
// Gloo context, so its own connections and tags), the weight-gradient rings run on it, from
// the executor's communication thread, while the executor's thread moves boxes and reduces
// statistics and the loss over the first. Each communicator is used by one thread only, and
// each thread's calls come in the same order on every rank, so neither can take the
// other's messages or wait for them.
//
// Each rank also measures the time its calls that move data between ranks take
// (TrafficCounts::moves and the three reductions), waiting for peers included.
//
// Each rank counts what it sends, so the communicator's byte counters of a rank equal
// 4 · (box and weight elements sent) + 8 · (statistics and loss elements sent).
#include "runtime/communicator.h"
#include "runtime/executor/transport.h"

namespace layerplan {

class CommunicatorTransport : public Transport {
 public:
  // `comm` must outlive the transport; its world rank r holds device r.
  // `gradients`, when given, is a communicator over the same ranks in the same order (the
  // world's create_group of every rank) that carries the weight-gradient all-reduces.
  explicit CommunicatorTransport(Communicator& comm, Communicator* gradients = nullptr);

  bool holds(int device) const override { return device == comm_.rank(); }
  bool reduces_concurrently() const override { return gradients_ != &comm_; }
  // Posts every send of this rank first, then receives in list order, so that ranks that
  // send to each other cannot deadlock. Throws CommError as the communicator does.
  void exchange(const std::vector<BoxMove>& moves, const EdgeTag& tag) override;
  void all_reduce(const std::vector<int>& devices, const std::vector<std::vector<float>*>& buffers,
                  const std::vector<ReduceSegment>& segments) override;
  void all_reduce(const std::vector<int>& devices, const std::vector<std::vector<double>*>& buffers, ReduceKind kind,
                  int layer) override;

 private:
  Communicator& comm_;
  Communicator* gradients_;  // &comm_ without a second communicator
};

}  // namespace layerplan
