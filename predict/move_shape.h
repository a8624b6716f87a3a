#pragma once
// How an edge's box moves go, which decides the link figure a move is priced at
// (predict/link_figures.h): one way or both ways, and with how many peers.
#include <set>
#include <vector>

#include "model/geometry.h"

namespace layerplan {

// One way: no device both sends and receives in the moves, as into or out of a layer on
// fewer devices. Peers: at most, the devices a device receives from when one way, else
// those it sends to or receives from.
struct MoveShape {
  bool one_way = true;
  int peers = 0;
  std::set<int> devices;  // those that send or receive in the moves
};

// The shape of an edge's moves (transfer_volumes) among `devices` devices, forward, or
// backward: the gradients go from each pair's dst back to its src, so a gather forward
// scatters backward.
MoveShape move_shape(const std::vector<PairVolume>& volumes, int devices, bool backward);

}  // namespace layerplan
