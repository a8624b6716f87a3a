// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
#include "runtime/gpu/nccl_world.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "runtime/communicator.h"
#include "runtime/gpu/nccl_world_state.h"

namespace layerplan {

NcclWorld::NcclWorld(const GlooOptions& options, int device)
    : state_(std::make_unique<State>()), rank_(options.rank), size_(options.world_size) {
  state_->timeout = options.timeout;
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  if (options.rank == 0 && ncclGetUniqueId(&id) != ncclSuccess)
    state_->fail(rank_, "unique id", "ncclGetUniqueId failed");
  const std::vector<char> shared =
      share_from_rank0(options, "nccl-unique-id", std::span<const char>(id.internal, sizeof id.internal));
  require(shared.size() == sizeof id.internal, "NCCL unique id of " + std::to_string(shared.size()) +
                                                   " bytes from rank 0: expected " +
                                                   std::to_string(sizeof id.internal));
  std::memcpy(id.internal, shared.data(), sizeof id.internal);
  if (cudaSetDevice(device) != cudaSuccess ||
      cudaStreamCreateWithFlags(&state_->stream, cudaStreamNonBlocking) != cudaSuccess) {
    throw UsageError("rank " + std::to_string(rank_) + ": cannot use CUDA device " + std::to_string(device));
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // every wait is ours, with a timeout
  const ncclResult_t started = ncclCommInitRankConfig(&state_->comm, size_, id, rank_, &config);
  if (started != ncclSuccess && started != ncclInProgress) state_->fail(rank_, "join", ncclGetErrorString(started));
  state_->settle(rank_, "join of " + std::to_string(size_) + " ranks");
}

NcclWorld::~NcclWorld() {
  if (state_->comm != nullptr) ncclCommDestroy(state_->comm);
  if (state_->stream != nullptr) cudaStreamDestroy(state_->stream);
}

void NcclWorld::all_reduce_sum(float* device_data, size_t count) {
  require(state_->comm != nullptr, "NCCL communicator used after it failed");
  const ncclResult_t r =
      ncclAllReduce(device_data, device_data, count, ncclFloat32, ncclSum, state_->comm, state_->stream);
  if (r != ncclSuccess && r != ncclInProgress) state_->fail(rank_, "all-reduce", ncclGetErrorString(r));
  state_->settle(rank_, "all-reduce of " + std::to_string(count) + " floats");
  state_->wait_stream(rank_, "all-reduce");
}

}  // namespace layerplan
