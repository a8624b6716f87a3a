#include "predict/move_shape.h"

#include <algorithm>

namespace layerplan {

MoveShape move_shape(const std::vector<PairVolume>& volumes, int devices, bool backward) {
  std::vector<std::set<int>> senders(static_cast<size_t>(devices));
  std::vector<std::set<int>> receivers = senders;
  for (const PairVolume& v : volumes) {
    const int from = backward ? v.dst : v.src;
    const int to = backward ? v.src : v.dst;
    senders[static_cast<size_t>(to)].insert(from);
    receivers[static_cast<size_t>(from)].insert(to);
  }
  MoveShape shape;
  for (const PairVolume& v : volumes) shape.devices.insert({v.src, v.dst});
  for (size_t d = 0; d < senders.size(); ++d) {
    if (!senders[d].empty() && !receivers[d].empty()) shape.one_way = false;
  }
  for (size_t d = 0; d < senders.size(); ++d) {
    std::set<int> peers = senders[d];
    if (!shape.one_way) peers.insert(receivers[d].begin(), receivers[d].end());
    shape.peers = std::max(shape.peers, static_cast<int>(peers.size()));
  }
  return shape;
}

}  // namespace layerplan
