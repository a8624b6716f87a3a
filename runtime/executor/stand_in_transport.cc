#include "runtime/executor/stand_in_transport.h"

namespace layerplan {

void StandInTransport::exchange(const std::vector<BoxMove>& moves, const EdgeTag& tag) {
  const bool add = tag.direction == Direction::kBackward;
  for (const BoxMove& m : moves) {
    if (!holds(m.dst_device)) {
      if (holds(m.src_device)) crop(*m.src, m.region);  // a real send copies the region out first
      continue;
    }
    if (holds(m.src_device)) {
      const Tensor part = crop(*m.src, m.region);
      if (add) {
        add_intersection(part, m.dst);
      } else {
        copy_intersection(part, m.dst);
      }
    } else if (!add) {
      copy_intersection(Tensor(m.region), m.dst);  // zeros in place of the peer's activations
    }
  }
}

}  // namespace layerplan
