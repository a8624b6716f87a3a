#pragma once
// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
// One rank's NCCL communicator over all ranks (docs/gpu-backend.md): rank 0's unique id
// reaches the others through the rendezvous the ranks meet in (share_from_rank0: the
// launcher's directory, PMI-2 or PMIx), then every rank joins on its GPU. The communicator is
// non-blocking, so every wait (the join, each collective) has the options' timeout, after
// which it is aborted and CommError names the rank and what timed out: no rank is left
// hanging on a peer that died. No NCCL or CUDA type reaches this header.
#include <chrono>
#include <cstddef>
#include <memory>

#include "runtime/gloo_communicator.h"

namespace layerplan {

class NcclWorld {
 public:
  // Collective over the world of `options`: joins on CUDA device `device` (the caller's
  // choice: the k-th visible GPU for local rank k). Throws CommError after the timeout.
  NcclWorld(const GlooOptions& options, int device);
  ~NcclWorld();
  NcclWorld(const NcclWorld&) = delete;
  NcclWorld& operator=(const NcclWorld&) = delete;

  int rank() const { return rank_; }
  // The communicator and its stream, for the NCCL transport (nccl_world_state.h).
  struct State;
  State& state() { return *state_; }
  int size() const { return size_; }
  // Sums `count` floats at `device_data` (GPU memory) over all ranks, in place, and waits
  // for the result on the communicator's stream.
  void all_reduce_sum(float* device_data, size_t count);

 private:
  std::unique_ptr<State> state_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace layerplan
