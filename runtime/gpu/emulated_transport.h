#pragma once
// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
// The executor's transport for several devices emulated on ONE GPU (scripts/gpu-check's
// executor row): NCCL refuses two ranks on one GPU, so this transport stands in for the NCCL
// one there. Each emulated device has its own stream and its own device buffers: a box move
// uploads the producer's tile on the source device's stream, packs the box with the backend's
// own kernel, hands it to the destination's stream (an event), copies it into the
// destination's buffer and unpacks it there, adding in the backward; a weight-gradient
// all-reduce runs the ring of the CPU path chunk by chunk between the devices' buffers, so
// the sums are the CPU's, bitwise. Batch-norm statistics and loss shares (a few doubles) are
// summed on the host, as InProcessTransport does. It counts what InProcessTransport counts.
#include <map>
#include <memory>

#include "runtime/executor/in_process_transport.h"

namespace layerplan {

class EmulatedDevicesTransport : public InProcessTransport {
 public:
  // On CUDA device `gpu`, with one device arena of `arena_bytes` for every emulated device.
  explicit EmulatedDevicesTransport(int gpu, size_t arena_bytes = size_t{1} << 30);
  ~EmulatedDevicesTransport() override;
  EmulatedDevicesTransport(const EmulatedDevicesTransport&) = delete;
  EmulatedDevicesTransport& operator=(const EmulatedDevicesTransport&) = delete;

  void exchange(const std::vector<BoxMove>& moves, const EdgeTag& tag) override;
  void all_reduce(const std::vector<int>& devices, const std::vector<std::vector<float>*>& buffers,
                  const std::vector<ReduceSegment>& segments) override;
  using InProcessTransport::all_reduce;  // doubles: on the host
  // Moves and rings share one arena and stream state: not from two threads at once.
  bool reduces_concurrently() const override { return false; }

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace layerplan
