#include "planner/edge_traffic.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "common/index.h"

namespace layerplan {

void EdgeTraffic::reset(int devices, int nodes) {
  intra_send.assign(static_cast<size_t>(devices), 0);
  intra_recv.assign(static_cast<size_t>(devices), 0);
  net_out.assign(static_cast<size_t>(nodes), 0);
  net_in.assign(static_cast<size_t>(nodes), 0);
  total = 0;
}

void edge_traffic_by_pairs(const ModelGraph& graph, const Layer& consumer, int slot, const Configuration& producer,
                           const Configuration& consumer_config, const DeviceGraph& devices, EdgeTraffic& out) {
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

// Tile numbering order, outermost first (geometry.h): n, h, w, c.
constexpr std::array<int, kNumDims> kTileOrder = {0, 2, 3, 1};

// Appends disjoint boxes of tile coordinates (inclusive bounds) that together hold exactly
// tiles [begin, end) of `degrees`. Coordinates of the dimensions before `level` in tile
// order are already fixed in `lo`/`hi`; [begin, end) counts tiles of the remaining ones.
// A run of consecutive tile indices splits into a partial head, a box of whole slices and
// a partial tail per level, so this yields at most 2 * kNumDims - 1 boxes.
void append_run_boxes(const Degrees& degrees, int level, int begin, int end, Coords lo, Coords hi,
                      std::vector<Coords>& out_lo, std::vector<Coords>& out_hi) {
  if (begin >= end) return;
  if (level == kNumDims) {
    out_lo.push_back(lo);
    out_hi.push_back(hi);
    return;
  }
  const auto dim = static_cast<size_t>(kTileOrder[static_cast<size_t>(level)]);
  int inner = 1;  // tiles per index along `dim`
  for (int k = level + 1; k < kNumDims; ++k) inner *= degrees[kTileOrder[static_cast<size_t>(k)]];
  int head = begin / inner;
  const int tail = end / inner;
  if (head == tail) {  // within one index along `dim`
    lo[dim] = hi[dim] = head;
    append_run_boxes(degrees, level + 1, begin - head * inner, end - head * inner, lo, hi, out_lo, out_hi);
    return;
  }
  if (begin % inner != 0) {
    lo[dim] = hi[dim] = head;
    append_run_boxes(degrees, level + 1, begin % inner, inner, lo, hi, out_lo, out_hi);
    ++head;
  }
  if (head < tail) {  // whole slices head .. tail-1: every inner coordinate
    Coords box_lo = lo, box_hi = hi;
    box_lo[dim] = head;
    box_hi[dim] = tail - 1;
    for (int k = level + 1; k < kNumDims; ++k) {
      const auto d = static_cast<size_t>(kTileOrder[static_cast<size_t>(k)]);
      box_lo[d] = 0;
      box_hi[d] = degrees[static_cast<int>(d)] - 1;
    }
    out_lo.push_back(box_lo);
    out_hi.push_back(box_hi);
  }
  if (end % inner != 0) {
    lo[dim] = hi[dim] = tail;
    append_run_boxes(degrees, level + 1, 0, end % inner, lo, hi, out_lo, out_hi);
  }
}

}  // namespace

FactoredEdgeTraffic::FactoredEdgeTraffic(const ModelGraph& graph, const Layer& consumer, int slot,
                                         const DeviceGraph& devices, int64_t dense_entries)
    : graph_(graph), consumer_(consumer), slot_(slot), devices_(devices), dense_entries_(dense_entries) {
  const int count = devices.device_count();
  rank_of_.assign(static_cast<size_t>(count) + 1, -1);
  for (int v = 1; v <= count; ++v) {
    if (count % v == 0) rank_of_[static_cast<size_t>(v)] = divisors_++;
  }
  consecutive_.resize(static_cast<size_t>(count));
  std::iota(consecutive_.begin(), consecutive_.end(), 0);
  tables_.resize(static_cast<size_t>(kNumDims) * table_size(divisors_, divisors_));
  built_.assign(tables_.size(), 0);
  bytes_ = static_cast<int64_t>((rank_of_.capacity() + consecutive_.capacity()) * sizeof(int) +
                                tables_.capacity() * sizeof(DimTable) + built_.capacity());
}

bool FactoredEdgeTraffic::on_aligned_block(const Configuration& c) const {
  const int first = c.devices.front(), tiles = c.tiles();
  if (first < 0 || first % tiles != 0 || first > devices_.device_count() - tiles) return false;
  // memcmp against 0, 1, 2, ...: pricing checks both sides of every pair, up to 1024 devices each.
  return std::memcmp(c.devices.data(), consecutive_.data() + first, static_cast<size_t>(tiles) * sizeof(int)) == 0;
}

int64_t FactoredEdgeTraffic::DimTable::below(int64_t x, int jlo, int jhi) const {
  // Regions ending at or before x lie wholly below it: a prefix of j, as hi is
  // non-decreasing. Regions starting at or after x contribute nothing: a suffix, as lo is.
  // Those between contribute x - lo[j].
  const auto first = lo.begin() + jlo, last = lo.begin() + jhi + 1;
  const auto whole_end = static_cast<int>(std::upper_bound(hi.begin() + jlo, hi.begin() + jhi + 1, x) - hi.begin());
  const auto part_end = static_cast<int>(std::lower_bound(first, last, x) - lo.begin());
  const auto j1 = static_cast<size_t>(whole_end), j2 = static_cast<size_t>(std::max(part_end, whole_end));
  return size_prefix[j1] - size_prefix[static_cast<size_t>(jlo)] + static_cast<int64_t>(j2 - j1) * x -
         (lo_prefix[j2] - lo_prefix[j1]);
}

const FactoredEdgeTraffic::DimTable& FactoredEdgeTraffic::table(int d, int pdeg, int qdeg) {
  const size_t at = flat_index(d, divisors_, rank_of_[static_cast<size_t>(pdeg)]) * static_cast<size_t>(divisors_) +
                    static_cast<size_t>(rank_of_[static_cast<size_t>(qdeg)]);
  DimTable& t = tables_[at];
  if (built_[at]) return t;
  built_[at] = 1;
  const auto i_d = static_cast<size_t>(d);
  t.psize = graph_.input_shape(consumer_, slot_)[d] / pdeg;
  const int64_t qsize = consumer_.output[d] / qdeg;
  const auto q = static_cast<size_t>(qdeg);
  t.lo.assign(q, 0);
  t.hi.assign(q, 0);
  t.size_prefix.assign(q + 1, 0);
  t.lo_prefix.assign(q + 1, 0);
  // Required regions are separable per dimension: probe dimension d alone, the others
  // whole (any index would do; whole keeps every kind's rules valid).
  Box probe = Box::whole(consumer_.output);
  for (size_t j = 0; j < q; ++j) {
    probe.dim[i_d] = {static_cast<int64_t>(j) * qsize, static_cast<int64_t>(j + 1) * qsize};
    const Interval req = required_input_box(graph_, consumer_, slot_, probe).dim[i_d];
    t.lo[j] = req.lo;
    t.hi[j] = req.lo + req.size();
    if (j > 0 && (t.lo[j] < t.lo[j - 1] || t.hi[j] < t.hi[j - 1])) t.valid = false;
    t.size_prefix[j + 1] = t.size_prefix[j] + req.size();
    t.lo_prefix[j + 1] = t.lo_prefix[j] + t.lo[j];
  }
  t.translates = t.valid && graph_.input_shape(consumer_, slot_)[d] == consumer_.output[d];
  for (size_t j = 0; j < q && t.translates; ++j) {
    t.translates = t.lo[j] == static_cast<int64_t>(j) * qsize && t.hi[j] == static_cast<int64_t>(j + 1) * qsize;
  }
  auto held = [](const std::vector<int64_t>& v) { return static_cast<int64_t>(v.capacity() * sizeof(int64_t)); };
  bytes_ += held(t.lo) + held(t.hi) + held(t.size_prefix) + held(t.lo_prefix);
  if (!t.valid) return t;
  t.q = qdeg;
  const int64_t dense = static_cast<int64_t>(pdeg) * (qdeg + 1);
  if (dense <= dense_entries_ && dense_bytes_ + dense * int64_t{sizeof(int64_t)} <= kDenseBudgetBytes) {
    t.sum_j.assign(table_size(pdeg, qdeg + 1), 0);
    for (int i = 0; i < pdeg; ++i) {
      for (int j = 0; j < qdeg; ++j) {
        t.sum_j[flat_index(i, qdeg + 1, j + 1)] = t.sum_j[flat_index(i, qdeg + 1, j)] + t.overlap_at(i, j);
      }
    }
  }
  t.sent_to_all.assign(static_cast<size_t>(pdeg), 0);
  t.sent_prefix.assign(static_cast<size_t>(pdeg) + 1, 0);
  for (int i = 0; i < pdeg; ++i) {
    const auto i_i = static_cast<size_t>(i);
    t.sent_to_all[i_i] = t.over_j(i, 0, qdeg - 1);
    t.sent_prefix[i_i + 1] = t.sent_prefix[i_i] + t.sent_to_all[i_i];
  }
  dense_bytes_ += held(t.sum_j);
  bytes_ += held(t.sum_j) + held(t.sent_to_all) + held(t.sent_prefix);
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
  // The key packs the first device and the rank of every degree (all below divisors_).
  auto key = static_cast<uint64_t>(config.devices.front());
  for (int d = 0; d < kNumDims; ++d) {
    key = key * static_cast<uint64_t>(divisors_) +
          static_cast<uint64_t>(rank_of_[static_cast<size_t>(config.degrees[d])]);
  }
  auto [it, inserted] = node_boxes_.try_emplace(key);
  NodeBoxes& b = it->second;
  if (!inserted) return b;
  // Node k holds the tiles on devices [k*g, (k+1)*g): a run of tile indices.
  const int nodes = devices_.nodes(), g = devices_.gpus_per_node();
  const int first = config.devices.front();
  b.has.assign(static_cast<size_t>(nodes), 0);
  b.lo.assign(static_cast<size_t>(nodes), Coords{});
  b.hi.assign(static_cast<size_t>(nodes), Coords{});
  b.more.assign(static_cast<size_t>(nodes) + 1, 0);
  b.valid = true;
  std::vector<Coords> lo, hi;
  for (int k = 0; k < nodes; ++k) {
    const auto i_k = static_cast<size_t>(k);
    const int begin = std::max(k * g - first, 0);
    const int end = std::min((k + 1) * g - first, config.tiles());
    lo.clear();
    hi.clear();
    append_run_boxes(config.degrees, 0, begin, end, Coords{}, Coords{}, lo, hi);
    // Verify rather than assume: the boxes hold exactly end - begin tiles.
    int64_t count = 0;
    for (size_t i = 0; i < lo.size(); ++i) {
      int64_t volume = 1;
      for (int d = 0; d < kNumDims; ++d) volume *= hi[i][static_cast<size_t>(d)] - lo[i][static_cast<size_t>(d)] + 1;
      count += volume;
    }
    if (count != std::max(end - begin, 0)) b.valid = false;
    if (!lo.empty()) {
      b.has[i_k] = 1;
      b.lo[i_k] = lo[0];
      b.hi[i_k] = hi[0];
      b.more_lo.insert(b.more_lo.end(), lo.begin() + 1, lo.end());
      b.more_hi.insert(b.more_hi.end(), hi.begin() + 1, hi.end());
    }
    b.more[i_k + 1] = static_cast<int>(b.more_lo.size());
  }
  b.one_box = b.more_lo.empty();
  find_grid(config, b);
  constexpr int64_t kHashNode = 64;  // the map's node and bucket, about
  bytes_ += kHashNode + static_cast<int64_t>(
                            sizeof(NodeBoxes) + b.has.capacity() +
                            (b.lo.capacity() + b.hi.capacity()) * sizeof(Coords) + b.more.capacity() * sizeof(int) +
                            (b.more_lo.capacity() + b.more_hi.capacity() + b.cell.capacity()) * sizeof(Coords));
  return b;
}

void FactoredEdgeTraffic::find_grid(const Configuration& config, NodeBoxes& b) const {
  b.grid = false;
  const int g = devices_.gpus_per_node(), first = config.devices.front();
  if (!b.valid || first % g != 0 || config.tiles() % g != 0) return;
  b.first_full = first / g;
  b.full = config.tiles() / g;
  const auto f0 = static_cast<size_t>(b.first_full);
  for (size_t d = 0; d < kNumDims; ++d) {
    b.extent[d] = b.hi[f0][d] - b.lo[f0][d] + 1;
    if (config.degrees.d[d] % b.extent[d] != 0) return;
    b.cells.d[d] = config.degrees.d[d] / b.extent[d];
  }
  if (b.cells.product() != b.full) return;
  b.cell.assign(b.lo.size(), Coords{});
  for (int i = 0; i < b.full; ++i) {
    const auto k = f0 + static_cast<size_t>(i);
    if (b.more[k + 1] != b.more[k]) return;
    b.cell[k] = tile_coords(b.cells, i);
    for (size_t d = 0; d < kNumDims; ++d) {
      if (b.lo[k][d] != b.cell[k][d] * b.extent[d] || b.hi[k][d] != b.lo[k][d] + b.extent[d] - 1) return;
    }
  }
  b.grid = true;
}

bool FactoredEdgeTraffic::dim_tables(const Degrees& pd, const Degrees& qd, DimTables& dim) {
  const int count = devices_.device_count();
  for (int d = 0; d < kNumDims; ++d) {
    if (pd[d] < 1 || pd[d] > count || qd[d] < 1 || qd[d] > count) return false;
    if (rank_of_[static_cast<size_t>(pd[d])] < 0 || rank_of_[static_cast<size_t>(qd[d])] < 0) return false;
    dim[static_cast<size_t>(d)] = &table(d, pd[d], qd[d]);
    if (!dim[static_cast<size_t>(d)]->valid) return false;
  }
  return true;
}

int64_t FactoredEdgeTraffic::more_boxes_received(const Frame& f, size_t k, const Coords& q) {
  int64_t sum = 0;
  for (auto b = static_cast<size_t>(f.pb.more[k]); b < static_cast<size_t>(f.pb.more[k + 1]); ++b) {
    int64_t part = 1;
    for (size_t d = 0; d < kNumDims; ++d) part *= f.dim[d]->over_i(f.pb.more_lo[b][d], f.pb.more_hi[b][d], q[d]);
    sum += part;
  }
  return sum;
}

int64_t FactoredEdgeTraffic::more_boxes_sent(const Frame& f, size_t k, const Coords& p) {
  int64_t sum = 0;
  for (auto b = static_cast<size_t>(f.qb.more[k]); b < static_cast<size_t>(f.qb.more[k + 1]); ++b) {
    int64_t part = 1;
    for (size_t d = 0; d < kNumDims; ++d) part *= f.dim[d]->over_j(p[d], f.qb.more_lo[b][d], f.qb.more_hi[b][d]);
    sum += part;
  }
  return sum;
}

template <bool kMoreBoxes, class Sink>
void FactoredEdgeTraffic::receivers(const Frame& f, int begin, int end, Cursor& at, Sink&& sink) const {
  const Degrees& pd = f.producer.degrees;
  const Degrees& qd = f.consumer.degrees;
  const int qfirst = f.consumer.devices.front();
  const int local_offset = qfirst - f.producer.devices.front();  // producer tile on consumer tile 0's device
  if (at.tile != begin) {
    at.own = tile_coords(qd, begin);
    at.other = {};
    const int first_local = begin + local_offset;
    if (first_local >= 0 && first_local < f.producer.tiles()) at.other = tile_coords(pd, first_local);
  }
  Coords& q = at.own;
  Coords& p_local = at.other;
  at.tile = end;
  // The node of the current tile, advanced by counting rather than dividing per tile.
  auto k = static_cast<size_t>((qfirst + begin) / f.gpus_per_node);
  int left_in_node = f.gpus_per_node - (qfirst + begin) % f.gpus_per_node;
  for (int t = begin; t < end; ++t, next_tile(qd, q)) {
    const bool node_has = f.pb.has[k] != 0;
    int64_t region = 1, in_node = node_has ? 1 : 0, local = 1;
    const int local_tile = t + local_offset;
    const bool has_local = local_tile >= 0 && local_tile < f.producer.tiles();
    for (size_t d = 0; d < kNumDims; ++d) {
      const DimTable& tab = *f.dim[d];
      region *= tab.need(q[d]);
      if (node_has) in_node *= tab.over_i(f.pb.lo[k][d], f.pb.hi[k][d], q[d]);
      if (has_local) local *= tab.overlap_at(p_local[d], q[d]);
    }
    if constexpr (kMoreBoxes) in_node += more_boxes_received(f, k, q);
    if (!has_local) local = 0;
    if (has_local) next_tile(pd, p_local);
    // device, its node, what it receives from its own node, from other nodes, in all
    sink(qfirst + t, k, in_node - local, region - in_node, region - local);
    if (--left_in_node == 0) ++k, left_in_node = f.gpus_per_node;
  }
}

template <bool kMoreBoxes, class Sink>
void FactoredEdgeTraffic::senders(const Frame& f, int begin, int end, Cursor& at, Sink&& sink) const {
  const Degrees& pd = f.producer.degrees;
  const Degrees& qd = f.consumer.degrees;
  const int pfirst = f.producer.devices.front();
  const int q_offset = pfirst - f.consumer.devices.front();
  if (at.tile != begin) {
    at.own = tile_coords(pd, begin);
    at.other = {};
    const int first_local = begin + q_offset;
    if (first_local >= 0 && first_local < f.consumer.tiles()) at.other = tile_coords(qd, first_local);
  }
  Coords& p = at.own;
  Coords& q_local = at.other;
  at.tile = end;
  auto k = static_cast<size_t>((pfirst + begin) / f.gpus_per_node);
  int left_in_node = f.gpus_per_node - (pfirst + begin) % f.gpus_per_node;
  for (int t = begin; t < end; ++t, next_tile(pd, p)) {
    const bool node_has = f.qb.has[k] != 0;
    int64_t all = 1, in_node = node_has ? 1 : 0, local = 1;
    const int local_tile = t + q_offset;
    const bool has_local = local_tile >= 0 && local_tile < f.consumer.tiles();
    for (size_t d = 0; d < kNumDims; ++d) {
      const DimTable& tab = *f.dim[d];
      all *= tab.sent_to_all[static_cast<size_t>(p[d])];
      if (node_has) in_node *= tab.over_j(p[d], f.qb.lo[k][d], f.qb.hi[k][d]);
      if (has_local) local *= tab.overlap_at(p[d], q_local[d]);
    }
    if constexpr (kMoreBoxes) in_node += more_boxes_sent(f, k, p);
    if (!has_local) local = 0;
    if (has_local) next_tile(qd, q_local);
    // device, its node, what it sends to its own node, to other nodes
    sink(pfirst + t, k, in_node - local, all - in_node);
    if (--left_in_node == 0) ++k, left_in_node = f.gpus_per_node;
  }
}

template <bool kMoreBoxes>
void FactoredEdgeTraffic::add_receivers(const Frame& f, EdgeTraffic& out) const {
  Cursor at;
  receivers<kMoreBoxes>(f, 0, f.consumer.tiles(), at,
                        [&](int dev, size_t k, int64_t intra, int64_t net, int64_t moved) {
                          out.intra_recv[static_cast<size_t>(dev)] = intra;
                          out.net_in[k] += net;
                          out.total += moved;
                        });
}

template <bool kMoreBoxes>
void FactoredEdgeTraffic::add_senders(const Frame& f, EdgeTraffic& out) const {
  Cursor at;
  senders<kMoreBoxes>(f, 0, f.producer.tiles(), at, [&](int dev, size_t k, int64_t intra, int64_t net) {
    out.intra_send[static_cast<size_t>(dev)] = intra;
    out.net_out[k] += net;
  });
}

bool FactoredEdgeTraffic::compute(const Configuration& producer, const Configuration& consumer_config,
                                  EdgeTraffic& out) {
  if (!on_aligned_block(producer) || !on_aligned_block(consumer_config)) return false;
  const int count = devices_.device_count();
  DimTables dim{};
  if (!dim_tables(producer.degrees, consumer_config.degrees, dim)) return false;
  const NodeBoxes& pb = node_boxes(producer);
  const NodeBoxes& qb = node_boxes(consumer_config);
  if (!pb.valid || !qb.valid) return false;
  out.reset(count, devices_.nodes());
  const Frame f{producer, consumer_config, dim, pb, qb, devices_.gpus_per_node()};
  if (pb.one_box && qb.one_box) {
    add_receivers<false>(f, out);
    add_senders<false>(f, out);
  } else {
    add_receivers<true>(f, out);
    add_senders<true>(f, out);
  }
  return true;
}

TrafficSummary summarize(const EdgeTraffic& traffic) {
  TrafficSummary s;
  for (size_t d = 0; d < traffic.intra_send.size(); ++d) {
    s.busiest_device = std::max({s.busiest_device, traffic.intra_send[d], traffic.intra_recv[d]});
  }
  for (size_t k = 0; k < traffic.net_out.size(); ++k) {
    s.busiest_node = std::max({s.busiest_node, traffic.net_out[k], traffic.net_in[k]});
  }
  s.total = traffic.total;
  return s;
}

namespace {

// How a configuration's tiles cover node k of `g` devices: all of its devices, none, or some.
enum class Cover { kNone, kFull, kPartial };
Cover cover(const Configuration& c, int k, int g) {
  const int first = c.devices.front(), end = first + c.tiles();
  if ((k + 1) * g <= first || k * g >= end) return Cover::kNone;
  return k * g >= first && (k + 1) * g <= end ? Cover::kFull : Cover::kPartial;
}

// Of a configuration that covers node k fully: where the node's first tile lies in its sample
// block (tiles / n degree, the tiles of one n index), and the n indices of the node's tiles.
struct NodeSpan {
  int phase = 0, first_n = 0, last_n = -1;
};
NodeSpan span(const Configuration& c, int k, int g) {
  const int first = k * g - c.devices.front();
  const int block = c.tiles() / c.degrees[0];
  return {first % block, first / block, (first + g - 1) / block};
}

// Keys that would hold more overlaps than this per GPU of a node are not worth comparing:
// such a node is visited instead.
constexpr int kMostOverlapsPerGpu = 8;
// The most a node_key() holds: its kind, two phases, sent_to_all and need of up to g n
// indices each, and up to kMostOverlapsPerGpu * g overlaps. A grid_key() holds less.
size_t most_key_entries(int g) { return 3 + (2 + kMostOverlapsPerGpu) * static_cast<size_t>(g); }
// grid_key() numbers pairs of cells per dimension in a table of at most this many entries.
constexpr size_t kMostCellPairs = size_t{1} << 14;
constexpr int kDimNumberBits = 16;  // of a dim_number() in a grid_key()

}  // namespace

// Node k's figures are sums over its tiles (and maxima over its devices) of products over the
// dimensions of what the tables say of tile coordinates. A side that covers the node fully holds
// its tiles first..first+g-1 (first = k*g - its first device). The tile order puts n outermost,
// so those tiles' coordinates along every other dimension, their n indices less the node's
// first, and the node's boxes depend only on first modulo the sample block: the phase. So the
// figures depend on which sides cover the node fully, the phases, and along the samples on what
// the table says of the n indices the node spans: each producer index's sent_to_all, each
// consumer index's need and the overlap of every such pair (the sums over_i and over_j of the
// node's ranges are sums of these overlaps). That is the key.
bool FactoredEdgeTraffic::node_key(const Frame& f, int k, std::vector<int64_t>& key) {
  const int g = f.gpus_per_node;
  const Cover pc = cover(f.producer, k, g), qc = cover(f.consumer, k, g);
  if (pc == Cover::kPartial || qc == Cover::kPartial) return false;
  const DimTable& t = *f.dim[0];
  const NodeSpan p = pc == Cover::kFull ? span(f.producer, k, g) : NodeSpan{};
  const NodeSpan q = qc == Cover::kFull ? span(f.consumer, k, g) : NodeSpan{};
  const int64_t overlaps = int64_t{p.last_n - p.first_n + 1} * (q.last_n - q.first_n + 1);
  if (overlaps > int64_t{kMostOverlapsPerGpu} * g) return false;
  key.clear();
  key.push_back((pc == Cover::kFull ? 1 : 0) + (qc == Cover::kFull ? 2 : 0));
  key.push_back(p.phase);
  for (int i = p.first_n; i <= p.last_n; ++i) key.push_back(t.sent_to_all[static_cast<size_t>(i)]);
  key.push_back(q.phase);
  for (int j = q.first_n; j <= q.last_n; ++j) key.push_back(t.need(j));
  for (int i = p.first_n; i <= p.last_n; ++i) {
    for (int j = q.first_n; j <= q.last_n; ++j) key.push_back(t.overlap_at(i, j));
  }
  return true;
}

// On a node both grids cover, each side holds one box of its cell's extent, and device i of
// the node holds the i-th tile of each box in tile order. So the figures depend on the extents
// (the same on every such node) and, per dimension, on what the table says of the two cells'
// index ranges: sent_to_all over the producer's, need over the consumer's and the overlap of
// every pair. Those are numbered per dimension once per pair of cells (dim_number()), and the
// key packs the four numbers.
bool FactoredEdgeTraffic::grid_key(const Frame& f, int k, uint64_t& key) {
  const NodeBoxes &pb = f.pb, &qb = f.qb;
  if (k < pb.first_full || k >= pb.first_full + pb.full || k < qb.first_full || k >= qb.first_full + qb.full) {
    return false;
  }
  const auto i_k = static_cast<size_t>(k);
  key = 0;
  for (size_t d = 0; d < kNumDims; ++d) {
    CellClass& known = cell_classes_[d][flat_index(pb.cell[i_k][d], qb.cells.d[d], qb.cell[i_k][d])];
    if (known.stamp != stamp_) {
      const int number = dim_number(f, d, pb.lo[i_k][d], pb.hi[i_k][d], qb.lo[i_k][d], qb.hi[i_k][d]);
      if (number < 0) return false;
      known = {stamp_, number};
    }
    key = key << kDimNumberBits | static_cast<uint64_t>(known.number);
  }
  return true;
}

int FactoredEdgeTraffic::dim_number(const Frame& f, size_t d, int plo, int phi, int qlo, int qhi) {
  const DimTable& t = *f.dim[d];
  dim_key_.clear();
  dim_key_.push_back(static_cast<int64_t>(d));
  if ((phi - plo + 1) * (qhi - qlo + 1) > kMostOverlapsPerGpu * f.gpus_per_node) return -1;
  // Where the required regions translate, every sent_to_all is psize and every need the
  // consumer's tile size: the overlaps say it all. The marker is negative, unlike any sent_to_all.
  if (t.translates) {
    dim_key_.push_back(-1);
  } else {
    for (int i = plo; i <= phi; ++i) dim_key_.push_back(t.sent_to_all[static_cast<size_t>(i)]);
    for (int j = qlo; j <= qhi; ++j) dim_key_.push_back(t.need(j));
  }
  for (int i = plo; i <= phi; ++i) {
    for (int j = qlo; j <= qhi; ++j) dim_key_.push_back(t.overlap_at(i, j));
  }
  bool added = false;
  const int number = dim_classes_.find_or_add(dim_key_.data(), dim_key_.size(), added);
  return number < (1 << kDimNumberBits) ? number : -1;
}

int FactoredEdgeTraffic::one_side_run_end(const Frame& f, int k, bool& producer) {
  const int g = f.gpus_per_node;
  for (const bool p : {true, false}) {
    const NodeBoxes& own = p ? f.pb : f.qb;
    const Configuration& other = p ? f.consumer : f.producer;
    const int other_first = other.devices.front() / g, other_last = (other.devices.front() + other.tiles() - 1) / g;
    if (!own.grid || k < own.first_full || k >= own.first_full + own.full) continue;
    if (k >= other_first && k <= other_last) continue;
    producer = p;
    int end = own.first_full + own.full;
    if (k < other_first) end = std::min(end, other_first);
    return end;
  }
  return k;
}

// A node that one side covers and the other does not moves nothing within itself: its network
// elements are, for the producer, what its tiles send (Π_d Σ sent_to_all over its box) and, for
// the consumer, what its tiles need (Π_d Σ need), which the consumer's also adds to the total.
// Nodes first..end-1 are a run of the side's grid cells: a few boxes of cells, and over a box of
// cells the maximum and sum of such products are products of per-dimension maxima and sums.
void FactoredEdgeTraffic::one_side_nodes(const Frame& f, bool producer, int first, int end, TrafficSummary& out) {
  const NodeBoxes& b = producer ? f.pb : f.qb;
  run_lo_.clear();
  run_hi_.clear();
  append_run_boxes(b.cells, 0, first - b.first_full, end - b.first_full, Coords{}, Coords{}, run_lo_, run_hi_);
  for (size_t box = 0; box < run_lo_.size(); ++box) {
    int64_t most = 1, sum = 1;
    for (size_t d = 0; d < kNumDims; ++d) {
      const std::vector<int64_t>& prefix = producer ? f.dim[d]->sent_prefix : f.dim[d]->size_prefix;
      const int e = b.extent[d];
      auto at = [&](int cell) { return prefix[static_cast<size_t>(cell) * static_cast<size_t>(e)]; };
      int64_t most_d = 0;
      for (int cell = run_lo_[box][d]; cell <= run_hi_[box][d]; ++cell)
        most_d = std::max(most_d, at(cell + 1) - at(cell));
      most *= most_d;
      sum *= at(run_hi_[box][d] + 1) - at(run_lo_[box][d]);
    }
    out.busiest_node = std::max(out.busiest_node, most);
    if (!producer) out.total += sum;
  }
}

int64_t FactoredEdgeTraffic::most_class_bytes(int nodes, int gpus_per_node) {
  const auto n = static_cast<int64_t>(nodes), entries = static_cast<int64_t>(most_key_entries(gpus_per_node));
  constexpr auto kKeySlot = static_cast<int64_t>(KeyTable::kSlotBytes);
  constexpr auto kWordSlot = static_cast<int64_t>(WordTable::kSlotBytes);
  constexpr auto kCellClass = static_cast<int64_t>(sizeof(CellClass));
  auto slots = [](int64_t keys) { return static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(2 * keys + 1))); };
  const int64_t keys =
      (slots(n) + slots(kNumDims * n)) * kKeySlot + (n + kNumDims * n) * entries * 8;  // entries of 8 bytes
  const int64_t scratch = (2 * n + 2 * entries) * 8 + int64_t{4} * kNumDims * static_cast<int64_t>(sizeof(Coords));
  return keys + slots(n) * kWordSlot + scratch + kNumDims * static_cast<int64_t>(kMostCellPairs) * kCellClass;
}

void FactoredEdgeTraffic::prepare_classes() {
  if (node_key_.capacity() > 0) return;
  const auto nodes = static_cast<size_t>(devices_.nodes());
  const int g = devices_.gpus_per_node();
  // Every node adds at most one class and, per dimension, one pair of cells.
  node_classes_.reserve(nodes, nodes * most_key_entries(g));
  dim_classes_.reserve(kNumDims * nodes, kNumDims * nodes * most_key_entries(g));
  grid_classes_.reserve(nodes);
  class_total_.assign(2 * nodes, 0);
  node_key_.reserve(most_key_entries(g));
  dim_key_.reserve(most_key_entries(g));
  run_lo_.reserve(size_t{2} * kNumDims);
  run_hi_.reserve(size_t{2} * kNumDims);
  bytes_ +=
      node_classes_.bytes() + grid_classes_.bytes() + dim_classes_.bytes() +
      static_cast<int64_t>((class_total_.capacity() + node_key_.capacity() + dim_key_.capacity()) * sizeof(int64_t) +
                           (run_lo_.capacity() + run_hi_.capacity()) * sizeof(Coords));
}

// Whether grid_key() applies to this pair; sizes its tables of pairs of cells.
bool FactoredEdgeTraffic::prepare_cell_classes(const Frame& f) {
  if (!f.pb.grid || !f.qb.grid) return false;
  for (size_t d = 0; d < kNumDims; ++d) {
    const size_t pairs = table_size(f.pb.cells.d[d], f.qb.cells.d[d]);
    if (pairs > kMostCellPairs) return false;
    std::vector<CellClass>& cells = cell_classes_[d];
    if (cells.size() < pairs) {
      bytes_ += static_cast<int64_t>((pairs - cells.size()) * sizeof(CellClass));
      cells.resize(pairs);
    }
  }
  return true;
}

template <bool kMoreBoxes>
void FactoredEdgeTraffic::summarize_nodes(const Frame& f, TrafficSummary& out) {
  const int g = f.gpus_per_node;
  prepare_classes();
  ++stamp_;
  node_classes_.clear();
  grid_classes_.clear();
  dim_classes_.clear();
  const bool grids = prepare_cell_classes(f);
  const int pfirst = f.producer.devices.front(), qfirst = f.consumer.devices.front();
  const int first_node = std::min(pfirst, qfirst) / g;
  const int last_node = (std::max(pfirst + f.producer.tiles(), qfirst + f.consumer.tiles()) - 1) / g;
  // Nodes that both sides reach: never one side's alone.
  const int both_first = std::max(pfirst, qfirst) / g;
  const int both_last = (std::min(pfirst + f.producer.tiles(), qfirst + f.consumer.tiles()) - 1) / g;
  Cursor q_at, p_at;
  for (int k = first_node; k <= last_node; ++k) {
    bool producer_side = false;
    if (const int end = k >= both_first && k <= both_last ? k : one_side_run_end(f, k, producer_side); end > k) {
      one_side_nodes(f, producer_side, k, end, out);
      k = end - 1;
      continue;
    }
    // The class total of this node: grid classes after the others.
    int64_t* class_total = nullptr;
    bool added = true;
    uint64_t grid = 0;
    const bool grid_node = grids && grid_key(f, k, grid);
    if (grid_node) {
      const int number = grid_classes_.find_or_add(grid, added);
      if (number >= 0) class_total = &class_total_[static_cast<size_t>(devices_.nodes()) + static_cast<size_t>(number)];
    } else if (node_key(f, k, node_key_)) {
      const int number = node_classes_.find_or_add(node_key_.data(), node_key_.size(), added);
      if (number >= 0) class_total = &class_total_[static_cast<size_t>(number)];
    }
    if (class_total && !added) {
      out.total += *class_total;
      continue;
    }
    if (grid_node) {  // the node's first tiles are its boxes' lowest corners: no tile_coords()
      const auto i_k = static_cast<size_t>(k);
      q_at = {k * g - qfirst, f.qb.lo[i_k], f.pb.lo[i_k]};
      p_at = {k * g - pfirst, f.pb.lo[i_k], f.qb.lo[i_k]};
    }
    int64_t net_in = 0, net_out = 0, total = 0;
    const int qb = std::clamp(k * g - qfirst, 0, f.consumer.tiles());
    const int qe = std::clamp((k + 1) * g - qfirst, 0, f.consumer.tiles());
    receivers<kMoreBoxes>(f, qb, qe, q_at, [&](int, size_t, int64_t intra, int64_t net, int64_t moved) {
      out.busiest_device = std::max(out.busiest_device, intra);
      net_in += net;
      total += moved;
    });
    const int pb = std::clamp(k * g - pfirst, 0, f.producer.tiles());
    const int pe = std::clamp((k + 1) * g - pfirst, 0, f.producer.tiles());
    senders<kMoreBoxes>(f, pb, pe, p_at, [&](int, size_t, int64_t intra, int64_t net) {
      out.busiest_device = std::max(out.busiest_device, intra);
      net_out += net;
    });
    out.busiest_node = std::max({out.busiest_node, net_in, net_out});
    out.total += total;
    if (class_total) *class_total = total;
  }
}

bool FactoredEdgeTraffic::summary(const Configuration& producer, const Configuration& consumer_config,
                                  TrafficSummary& out) {
  if (!on_aligned_block(producer) || !on_aligned_block(consumer_config)) return false;
  DimTables dim{};
  if (!dim_tables(producer.degrees, consumer_config.degrees, dim)) return false;
  const NodeBoxes& pb = node_boxes(producer);
  const NodeBoxes& qb = node_boxes(consumer_config);
  if (!pb.valid || !qb.valid) return false;
  out = {};
  const Frame f{producer, consumer_config, dim, pb, qb, devices_.gpus_per_node()};
  if (pb.one_box && qb.one_box) {
    summarize_nodes<false>(f, out);
  } else {
    summarize_nodes<true>(f, out);
  }
  return true;
}

}  // namespace layerplan
