#include "runtime/gpu/nccl_plan.h"

#include <algorithm>

namespace layerplan {

std::map<int, int64_t> RankMoves::elements_sent() const {
  std::map<int, int64_t> sent;
  for (const PeerCall& s : sends) sent[s.peer] += s.elements;
  return sent;
}

RankMoves plan_box_moves(const std::vector<BoxMove>& moves, int rank) {
  RankMoves plan;
  for (size_t i = 0; i < moves.size(); ++i) {
    const BoxMove& m = moves[i];
    const int64_t elements = m.region.volume();
    if (elements == 0) continue;
    const int index = static_cast<int>(i);
    if (m.src_device == rank && m.dst_device == rank) {
      plan.local.push_back(index);
    } else if (m.src_device == rank) {
      plan.sends.push_back({index, m.dst_device, elements});
    } else if (m.dst_device == rank) {
      plan.recvs.push_back({index, m.src_device, elements});
    }
  }
  return plan;
}

std::vector<RingSend> ring_sends(int64_t n, const std::vector<int>& devices, int rank) {
  std::vector<int> sorted = devices;
  std::sort(sorted.begin(), sorted.end());
  const auto mine = std::find(sorted.begin(), sorted.end(), rank);
  const int p = static_cast<int>(sorted.size());
  if (p <= 1 || mine == sorted.end()) return {};
  const int i = static_cast<int>(mine - sorted.begin());
  const int next = sorted[static_cast<size_t>((i + 1) % p)];
  std::vector<RingSend> sends;
  // Step k: reduce-scatter for k < p-1, then all-gather; position i sends chunk
  // (i - s + phase) mod p, as CommunicatorTransport::all_reduce.
  for (int k = 0; k < 2 * (p - 1); ++k) {
    const int phase = k / (p - 1), s = k % (p - 1);
    const auto [lo, hi] = ring_chunk(n, p, ((i - s + phase) % p + p) % p);
    if (hi > lo) sends.push_back({next, lo, hi});
  }
  return sends;
}

std::vector<int> exchange_peers(const std::vector<int>& devices, int rank) {
  if (std::find(devices.begin(), devices.end(), rank) == devices.end()) return {};
  std::vector<int> peers;
  for (const int d : devices) {
    if (d != rank) peers.push_back(d);
  }
  std::sort(peers.begin(), peers.end());
  return peers;
}

}  // namespace layerplan
