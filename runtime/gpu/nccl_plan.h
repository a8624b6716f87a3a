#pragma once
// Which NCCL calls each rank issues for the executor's transfers (docs/gpu-backend.md,
// "NCCL transport"): pure host logic, tested in CI without a GPU, that the NCCL transport
// runs. Rank r holds device r, as with the Gloo communicator (communicator_transport.h).
//
// - A box move of an edge is one ncclGroupStart ... ncclGroupEnd batch per rank: an
//   ncclSend for each move from its device to another, an ncclRecv for each move into it,
//   both in the order of the move list, which every rank walks alike, so the k-th send from
//   a to b meets b's k-th receive from a (NCCL matches point-to-point calls in issue order).
//   A move within the rank's own device is a device copy, without NCCL.
// - A weight-gradient all-reduce is one ncclAllReduce over the group's sub-communicator;
//   ring_sends() is what the Gloo ring sends from this rank, which the transport counts, so
//   that the counted bytes are the ring's whatever NCCL does inside (NCCL_ALGO=Ring moves
//   exactly these volumes).
// - Batch-norm statistics and loss shares go to every other member with ncclSend/ncclRecv
//   in one group (exchange_peers()), and each member adds the buffers in ascending device
//   order, as the Gloo path does: the same bytes, the same sums bitwise.
#include <cstdint>
#include <map>
#include <vector>

#include "runtime/executor/transport.h"

namespace layerplan {

// One point-to-point call of an exchange: move `move` of the list, `elements` floats.
struct PeerCall {
  int move = 0;
  int peer = 0;
  int64_t elements = 0;
  bool operator==(const PeerCall&) const = default;
};

// What one rank does for one exchange.
struct RankMoves {
  std::vector<PeerCall> sends;  // ncclSend, in list order
  std::vector<PeerCall> recvs;  // ncclRecv, in list order
  std::vector<int> local;       // moves within this rank's device: device copies
  // Elements this rank sends to each peer (4 bytes each): what it counts.
  std::map<int, int64_t> elements_sent() const;
  // Whether the rank takes part in NCCL at all (an empty group is skipped).
  bool uses_nccl() const { return !sends.empty() || !recvs.empty(); }
};

// The calls of rank `rank` for `moves` (the same list on every rank; tensors are ignored,
// only devices and regions count). Moves of an empty region are skipped on every rank.
RankMoves plan_box_moves(const std::vector<BoxMove>& moves, int rank);

// One send of a ring all-reduce: elements [lo, hi) of the buffer to `peer`.
struct RingSend {
  int peer = 0;
  int64_t lo = 0;
  int64_t hi = 0;
  bool operator==(const RingSend&) const = default;
};

// The sends of `rank` in the ring all-reduce of an n-element buffer over `devices`
// (reduce-scatter then all-gather over the devices in ascending order, chunks as
// ring_chunk): CommunicatorTransport's schedule. Empty when the rank is not a member or
// the group has one device.
std::vector<RingSend> ring_sends(int64_t n, const std::vector<int>& devices, int rank);

// The other members of `devices`, ascending, to which `rank` sends its whole statistics
// buffer and from which it receives theirs; empty when it is not a member.
std::vector<int> exchange_peers(const std::vector<int>& devices, int rank);

}  // namespace layerplan
