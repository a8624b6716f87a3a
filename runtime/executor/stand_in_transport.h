#pragma once
// A Transport for timing one device's computation while the other devices' ranks time
// theirs (`layerplan predict` under `layerplan launch`): this process holds one device,
// and nothing travels between processes. A region that another device would send is
// filled with zeros, a gradient another device would add is left out, and all-reduces
// leave each buffer as it is; moves within the device are real. The numbers are not a
// training run's; the kernels' work and the executor's own copying are.
#include "runtime/executor/transport.h"

namespace layerplan {

class StandInTransport : public Transport {
 public:
  explicit StandInTransport(int device) : device_(device) {}

  bool holds(int device) const override { return device == device_; }
  bool reduces_concurrently() const override { return true; }  // nothing moves
  void exchange(const std::vector<BoxMove>& moves, const EdgeTag& tag) override;
  void all_reduce(const std::vector<int>&, const std::vector<std::vector<float>*>&,
                  const std::vector<ReduceSegment>&) override {}
  void all_reduce(const std::vector<int>&, const std::vector<std::vector<double>*>&, ReduceKind, int) override {}

 private:
  int device_;
};

}  // namespace layerplan
