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

namespace layerplan {

struct NcclWorld::State {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  std::chrono::milliseconds timeout{};
  bool failed = false;

  // Waits until the communicator's last call has completed (ncclInProgress no more), or
  // aborts it after the timeout.
  void settle(int rank, const std::string& what) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    ncclResult_t state = ncclInProgress;
    while (ncclCommGetAsyncError(comm, &state) == ncclSuccess && state == ncclInProgress) {
      if (std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (state != ncclSuccess) fail(rank, what, state == ncclInProgress ? "timed out" : ncclGetErrorString(state));
  }

  [[noreturn]] void fail(int rank, const std::string& what, const std::string& why) {
    failed = true;
    if (comm != nullptr) ncclCommAbort(comm);  // ends the waits of this rank's kernels
    comm = nullptr;
    throw CommError("rank " + std::to_string(rank) + ": NCCL " + what + ": " + why);
  }
};

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
  const auto deadline = std::chrono::steady_clock::now() + state_->timeout;
  cudaError_t done = cudaErrorNotReady;
  while ((done = cudaStreamQuery(state_->stream)) == cudaErrorNotReady) {
    if (std::chrono::steady_clock::now() > deadline) state_->fail(rank_, "all-reduce", "timed out on the GPU");
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  if (done != cudaSuccess) state_->fail(rank_, "all-reduce", cudaGetErrorString(done));
}

}  // namespace layerplan
