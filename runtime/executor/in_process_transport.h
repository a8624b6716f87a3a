#pragma once
// A Transport for one process that simulates every device of a plan: moves are copies
// (or sums) of box intersections, and all-reduces run the ring (or the direct exchange)
// step by step over the devices' buffers, so the counts are what a real one would send.
#include "runtime/executor/transport.h"

namespace layerplan {

class InProcessTransport : public Transport {
 public:
  bool holds(int) const override { return true; }
  // The ring touches only the buffers it is given; counting is locked.
  bool reduces_concurrently() const override { return true; }
  void exchange(const std::vector<BoxMove>& moves, const EdgeTag& tag) override;
  void all_reduce(const std::vector<int>& devices, const std::vector<std::vector<float>*>& buffers,
                  const std::vector<ReduceSegment>& segments) override;
  void all_reduce(const std::vector<int>& devices, const std::vector<std::vector<double>*>& buffers, ReduceKind kind,
                  int layer) override;
};

}  // namespace layerplan
