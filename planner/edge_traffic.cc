#include "planner/edge_traffic.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace layerplan {

void EdgeTraffic::reset(int devices, int nodes) {
  intra_send.assign(static_cast<size_t>(devices), 0);
  intra_recv.assign(static_cast<size_t>(devices), 0);
  net_out.assign(static_cast<size_t>(nodes), 0);
  net_in.assign(static_cast<size_t>(nodes), 0);
  total = 0;
}

void edge_traffic_by_pairs(const ModelGraph& graph, const Layer& consumer, int slot,
                           const Configuration& producer, const Configuration& consumer_config,
                           const DeviceGraph& devices, EdgeTraffic& out) {
  out.reset(devices.device_count(), devices.nodes());
  for_each_transfer(graph, consumer, slot, producer, consumer_config, [&](int src, int dst, int64_t n) {
    out.total += n;
    if (devices.same_node(src, dst)) {
      out.intra_send[static_cast<size_t>(src)] += n;
      out.intra_recv[static_cast<size_t>(dst)] += n;
    } else {
      out.net_out[static_cast<size_t>(devices.node_of(src))] += n;
      out.net_in[static_cast<size_t>(devices.node_of(dst))] += n;
    }
  });
}

namespace {

using Coords = std::array<int, kNumDims>;

// Tiles on devices first..first+p-1 with first a multiple of p.
bool on_aligned_block(const Configuration& c) {
  const int first = c.devices.front();
  if (first % c.tiles() != 0) return false;
  for (int t = 0; t < c.tiles(); ++t) {
    if (c.devices[static_cast<size_t>(t)] != first + t) return false;
  }
  return true;
}

// Per dimension, the inclusive range of tile coordinates of the tiles of `config` that
// live on `node`; false if the node holds none, or if they do not form a box.
bool node_tile_box(const Configuration& config, const DeviceGraph& devices, int node,
                   Coords& lo, Coords& hi) {
  const int first = config.devices.front();
  const int g = devices.gpus_per_node();
  const int begin = std::max(node * g - first, 0);
  const int end = std::min((node + 1) * g - first, config.tiles());
  if (begin >= end) return false;
  lo = tile_coords(config.degrees, begin);
  hi = tile_coords(config.degrees, end - 1);
  int64_t count = 1;
  for (int d = 0; d < kNumDims; ++d) {
    if (hi[static_cast<size_t>(d)] < lo[static_cast<size_t>(d)]) return false;
    count *= hi[static_cast<size_t>(d)] - lo[static_cast<size_t>(d)] + 1;
  }
  return count == end - begin;
}

}  // namespace

namespace {
int log2_exact(int v) {
  if (v <= 0 || (v & (v - 1)) != 0) return -1;
  int l = 0;
  while ((1 << l) < v) ++l;
  return l;
}
}  // namespace

FactoredEdgeTraffic::FactoredEdgeTraffic(const ModelGraph& graph, const Layer& consumer, int slot,
                                         const DeviceGraph& devices)
    : graph_(graph), consumer_(consumer), slot_(slot), devices_(devices),
      max_log_(log2_exact(devices.device_count()) >= 0 ? log2_exact(devices.device_count()) + 1 : 1) {
  tables_.resize(static_cast<size_t>(kNumDims * max_log_ * max_log_));
  built_.assign(tables_.size(), 0);
}

const FactoredEdgeTraffic::DimTable& FactoredEdgeTraffic::table(int d, int pdeg, int qdeg) {
  const auto at = static_cast<size_t>((d * max_log_ + log2_exact(pdeg)) * max_log_ + log2_exact(qdeg));
  DimTable& t = tables_[at];
  if (built_[at]) return t;
  built_[at] = 1;
  const auto i_d = static_cast<size_t>(d);
  const int64_t psize = graph_.input_shape(consumer_, slot_)[d] / pdeg;
  const int64_t qsize = consumer_.output[d] / qdeg;
  t.q = qdeg;
  t.overlap.assign(static_cast<size_t>(pdeg * qdeg), 0);
  t.need.assign(static_cast<size_t>(qdeg), 0);
  // Required regions are separable per dimension: probe dimension d alone, the others
  // whole (any index would do; whole keeps every kind's rules valid).
  const Box base = Box::whole(consumer_.output);
  for (int j = 0; j < qdeg; ++j) {
    Box probe = base;
    probe.dim[i_d] = {j * qsize, (j + 1) * qsize};
    const Interval req = required_input_box(graph_, consumer_, slot_, probe).dim[i_d];
    t.need[static_cast<size_t>(j)] = req.size();
    for (int i = 0; i < pdeg; ++i) {
      const int64_t lo = std::max(req.lo, i * psize), hi = std::min(req.hi, (i + 1) * psize);
      t.overlap[static_cast<size_t>(i * qdeg + j)] = hi > lo ? hi - lo : 0;
    }
  }
  t.sum_i.assign(static_cast<size_t>((pdeg + 1) * qdeg), 0);
  t.sum_j.assign(static_cast<size_t>(pdeg * (qdeg + 1)), 0);
  for (int i = 0; i < pdeg; ++i) {
    for (int j = 0; j < qdeg; ++j) {
      const int64_t v = t.overlap_at(i, j);
      t.sum_i[static_cast<size_t>((i + 1) * qdeg + j)] = t.sum_i[static_cast<size_t>(i * qdeg + j)] + v;
      t.sum_j[static_cast<size_t>(i * (qdeg + 1) + j + 1)] = t.sum_j[static_cast<size_t>(i * (qdeg + 1) + j)] + v;
    }
  }
  return t;
}

namespace {

// Advances tile coordinates to the next tile in tile order (channel fastest, then w, h, n).
void next_tile(const Degrees& degrees, Coords& c) {
  for (int dim : {1, 3, 2, 0}) {
    if (++c[static_cast<size_t>(dim)] < degrees[dim]) return;
    c[static_cast<size_t>(dim)] = 0;
  }
}

}  // namespace

const FactoredEdgeTraffic::NodeBoxes& FactoredEdgeTraffic::node_boxes(const Configuration& config) {
  uint64_t key = static_cast<uint64_t>(config.devices.front()) << 24;
  for (int d = 0; d < kNumDims; ++d) key |= static_cast<uint64_t>(log2_exact(config.degrees[d]) & 63) << (6 * d);
  auto [it, inserted] = node_boxes_.try_emplace(key);
  NodeBoxes& b = it->second;
  if (!inserted) return b;
  // Per node, the box of tile coordinates it holds. On an aligned block this is always a
  // box; verify rather than assume.
  const int nodes = devices_.nodes(), g = devices_.gpus_per_node();
  const int first = config.devices.front();
  b.has.assign(static_cast<size_t>(nodes), 0);
  b.lo.resize(static_cast<size_t>(nodes));
  b.hi.resize(static_cast<size_t>(nodes));
  b.valid = true;
  for (int k = 0; k < nodes; ++k) {
    const auto i_k = static_cast<size_t>(k);
    b.has[i_k] = node_tile_box(config, devices_, k, b.lo[i_k], b.hi[i_k]);
    const bool here = first < (k + 1) * g && first + config.tiles() > k * g;
    if (here != static_cast<bool>(b.has[i_k])) b.valid = false;
  }
  return b;
}

bool FactoredEdgeTraffic::compute(const Configuration& producer, const Configuration& consumer_config,
                                  EdgeTraffic& out) {
  if (!on_aligned_block(producer) || !on_aligned_block(consumer_config)) return false;
  const Degrees& pd = producer.degrees;
  const Degrees& qd = consumer_config.degrees;
  std::array<const DimTable*, kNumDims> dim{};
  for (int d = 0; d < kNumDims; ++d) {
    const int lp = log2_exact(pd[d]), lq = log2_exact(qd[d]);
    if (lp < 0 || lq < 0 || lp >= max_log_ || lq >= max_log_) return false;
    dim[static_cast<size_t>(d)] = &table(d, pd[d], qd[d]);
  }
  const int nodes = devices_.nodes(), g = devices_.gpus_per_node();
  const int pfirst = producer.devices.front(), qfirst = consumer_config.devices.front();
  const NodeBoxes& pb = node_boxes(producer);
  const NodeBoxes& qb = node_boxes(consumer_config);
  if (!pb.valid || !qb.valid) return false;
  const std::vector<char>& p_has = pb.has;
  const std::vector<char>& q_has = qb.has;
  const std::vector<Coords>&p_lo = pb.lo, &p_hi = pb.hi, &q_lo = qb.lo, &q_hi = qb.hi;
  out.reset(devices_.device_count(), nodes);

  // Receivers: each consumer tile needs its region, minus what its own device holds; what
  // its node's producer tiles hold comes over intra-node links, the rest over the network.
  Coords q{}, p_local{};
  const int local_offset = qfirst - pfirst;  // producer tile index on consumer tile 0's device
  if (local_offset >= 0 && local_offset < producer.tiles()) p_local = tile_coords(pd, local_offset);
  for (int t = 0; t < consumer_config.tiles(); ++t, next_tile(qd, q)) {
    const int dev = qfirst + t;
    const auto k = static_cast<size_t>(dev / g);
    int64_t region = 1, in_node = p_has[k] ? 1 : 0, local = 1;
    const int local_tile = t + local_offset;
    const bool has_local = local_tile >= 0 && local_tile < producer.tiles();
    for (int d = 0; d < kNumDims; ++d) {
      const auto i_d = static_cast<size_t>(d);
      const DimTable& tab = *dim[i_d];
      region *= tab.need[static_cast<size_t>(q[i_d])];
      if (in_node) in_node *= tab.over_i(p_lo[k][i_d], p_hi[k][i_d], q[i_d]);
      if (has_local) local *= tab.overlap_at(p_local[i_d], q[i_d]);
    }
    if (!has_local) local = 0;
    if (has_local) next_tile(pd, p_local);
    out.intra_recv[static_cast<size_t>(dev)] = in_node - local;
    out.net_in[k] += region - in_node;
    out.total += region - local;
  }
  // Senders: each producer tile sends its overlap with every consumer region, minus its
  // own device's; to its node's consumer tiles over intra-node links, the rest over the
  // network.
  Coords p{}, q_local{};
  const int q_offset = pfirst - qfirst;
  if (q_offset >= 0 && q_offset < consumer_config.tiles()) q_local = tile_coords(qd, q_offset);
  for (int t = 0; t < producer.tiles(); ++t, next_tile(pd, p)) {
    const int dev = pfirst + t;
    const auto k = static_cast<size_t>(dev / g);
    int64_t all = 1, in_node = q_has[k] ? 1 : 0, local = 1;
    const int local_tile = t + q_offset;
    const bool has_local = local_tile >= 0 && local_tile < consumer_config.tiles();
    for (int d = 0; d < kNumDims; ++d) {
      const auto i_d = static_cast<size_t>(d);
      const DimTable& tab = *dim[i_d];
      all *= tab.over_j(p[i_d], 0, qd[d] - 1);
      if (in_node) in_node *= tab.over_j(p[i_d], q_lo[k][i_d], q_hi[k][i_d]);
      if (has_local) local *= tab.overlap_at(p[i_d], q_local[i_d]);
    }
    if (!has_local) local = 0;
    if (has_local) next_tile(qd, q_local);
    out.intra_send[static_cast<size_t>(dev)] = in_node - local;
    out.net_out[k] += all - in_node;
  }
  return true;
}

}  // namespace layerplan
