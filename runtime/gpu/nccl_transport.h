#pragma once
// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
// The executor's transport over NCCL (docs/gpu-backend.md, "NCCL transport"): rank r holds
// device r, as with the Gloo communicator, and runs the calls runtime/gpu/nccl_plan.h plans:
//   - each exchange (the box moves of one edge in one direction) is one ncclGroupStart ...
//     ncclSend/ncclRecv ... ncclGroupEnd batch; moves within the rank are copies;
//   - weight-gradient buckets (the CPU path's, 25 MiB) are one ncclAllReduce each, on the
//     replica group's sub-communicator, made once here with ncclCommSplit;
//   - batch-norm statistics and loss shares go to every other member in one group, and
//     each member adds them in ascending device order, as the Gloo path does.
// It counts exactly what CommunicatorTransport counts (ring volumes for the all-reduce:
// run NCCL with NCCL_ALGO=Ring for the bytes on the wire to be those, and for every
// member's sum to be bitwise the same). The executor's tensors are host memory today, so
// each call stages them through the device arena and waits for the stream before it
// returns: a host synchronisation per call, which device-resident tensors will remove.
#include <memory>

#include "model/geometry.h"
#include "model/model_graph.h"
#include "runtime/executor/transport.h"
#include "runtime/gpu/nccl_world.h"

namespace layerplan {

class NcclTransport : public Transport {
 public:
  // Collective over the world: makes the sub-communicators of `plan`'s weight-gradient
  // buckets of `bucket_bytes`. `world` must outlive the transport.
  NcclTransport(NcclWorld& world, const ModelGraph& graph, const std::vector<Configuration>& plan, int64_t bucket_bytes,
                size_t arena_bytes = size_t{1} << 30);
  ~NcclTransport() override;
  NcclTransport(const NcclTransport&) = delete;
  NcclTransport& operator=(const NcclTransport&) = delete;

  bool holds(int device) const override { return device == world_.rank(); }
  void exchange(const std::vector<BoxMove>& moves, const EdgeTag& tag) override;
  void all_reduce(const std::vector<int>& devices, const std::vector<std::vector<float>*>& buffers,
                  const std::vector<ReduceSegment>& segments) override;
  void all_reduce(const std::vector<int>& devices, const std::vector<std::vector<double>*>& buffers, ReduceKind kind,
                  int layer) override;

 private:
  struct State;
  NcclWorld& world_;
  std::unique_ptr<State> state_;
};

}  // namespace layerplan
