#pragma once
// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
// The NCCL and CUDA state behind NcclWorld (nccl_world.h), shared with the NCCL transport
// (nccl_transport.cc): the world communicator, its stream, and the waits with a timeout.
// Private to runtime/gpu.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <string>
#include <thread>

#include "runtime/communicator.h"
#include "runtime/gpu/nccl_world.h"

namespace layerplan {

struct NcclWorld::State {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  std::chrono::milliseconds timeout{};
  bool failed = false;

  // Waits until the communicator's last call has completed (ncclInProgress no more), or
  // aborts it after the timeout.
  void settle(int rank, const std::string& what) { settle(comm, rank, what); }
  // The same for another communicator of this rank (a sub-communicator), which fails with it.
  void settle(ncclComm_t c, int rank, const std::string& what) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    ncclResult_t state = ncclInProgress;
    while (ncclCommGetAsyncError(c, &state) == ncclSuccess && state == ncclInProgress) {
      if (std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (state != ncclSuccess) fail(rank, what, state == ncclInProgress ? "timed out" : ncclGetErrorString(state));
  }

  // Waits for the communicator's stream, or aborts the communicator after the timeout.
  void wait_stream(int rank, const std::string& what) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    cudaError_t done = cudaErrorNotReady;
    while ((done = cudaStreamQuery(stream)) == cudaErrorNotReady) {
      if (std::chrono::steady_clock::now() > deadline) fail(rank, what, "timed out on the GPU");
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    if (done != cudaSuccess) fail(rank, what, cudaGetErrorString(done));
  }

  [[noreturn]] void fail(int rank, const std::string& what, const std::string& why) {
    failed = true;
    if (comm != nullptr) ncclCommAbort(comm);  // ends the waits of this rank's kernels
    comm = nullptr;
    throw CommError("rank " + std::to_string(rank) + ": NCCL " + what + ": " + why);
  }
};

}  // namespace layerplan
