#include "planner/edge_traffic.h"

#include <algorithm>
#include <array>
#include <cstdint>
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

// Tiles on devices first..first+p-1 with first a multiple of p.
bool on_aligned_block(const Configuration& c) {
  const int first = c.devices.front();
  if (first % c.tiles() != 0) return false;
  for (int t = 0; t < c.tiles(); ++t) {
    if (c.devices[static_cast<size_t>(t)] != first + t) return false;
  }
  return true;
}

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
  tables_.resize(static_cast<size_t>(kNumDims) * table_size(divisors_, divisors_));
  built_.assign(tables_.size(), 0);
  bytes_ = static_cast<int64_t>(rank_of_.capacity() * sizeof(int) + tables_.capacity() * sizeof(DimTable) +
                                built_.capacity());
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
  for (int i = 0; i < pdeg; ++i) t.sent_to_all[static_cast<size_t>(i)] = t.over_j(i, 0, qdeg - 1);
  dense_bytes_ += held(t.sum_j);
  bytes_ += held(t.sum_j) + held(t.sent_to_all);
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
  constexpr int64_t kHashNode = 64;  // the map's node and bucket, about
  bytes_ += kHashNode + static_cast<int64_t>(sizeof(NodeBoxes) + b.has.capacity() +
                                             (b.lo.capacity() + b.hi.capacity()) * sizeof(Coords) +
                                             b.more.capacity() * sizeof(int) +
                                             (b.more_lo.capacity() + b.more_hi.capacity()) * sizeof(Coords));
  return b;
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
  if (producer.devices.back() >= count || consumer_config.devices.back() >= count) return false;
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

}  // namespace

// Nodes whose tiles are those of another node moved along the samples by the same number of
// elements on both sides hold the same figures: along the samples every region is the
// output's own range (DimTable::translates), and a shift of the tile index by a multiple
// of a configuration's tiles per sample block (tiles / n degree) leaves every other
// coordinate as it was. Both configurations start at device 0 (the default first-block
// placement); a shift of s tiles moves a configuration's samples by s * batch / tiles
// elements, the same on both sides when both have equal tile counts, or when only one
// side is on the node. So the class of a node is which sides fully cover it and its first
// tile modulo the period; a node covered in part is a class of its own.
FactoredEdgeTraffic::Periods FactoredEdgeTraffic::node_periods(const Frame& f) {
  if (f.producer.devices.front() != 0 || f.consumer.devices.front() != 0 || !f.dim[0]->translates) return {};
  const int g = f.gpus_per_node;
  const int p_block = f.producer.tiles() / f.producer.degrees[0];
  const int q_block = f.consumer.tiles() / f.consumer.degrees[0];
  const int both = f.producer.tiles() == f.consumer.tiles() ? std::lcm(g, std::lcm(p_block, q_block)) : 0;
  return {both, std::lcm(g, p_block), std::lcm(g, q_block)};
}

int FactoredEdgeTraffic::node_class(const Frame& f, const Periods& periods, int k) const {
  const int g = f.gpus_per_node;
  const Cover pc = cover(f.producer, k, g), qc = cover(f.consumer, k, g);
  if (pc == Cover::kPartial || qc == Cover::kPartial) return -1;
  const int kind = pc == Cover::kFull ? (qc == Cover::kFull ? 0 : 1) : 2;
  const int period = periods[static_cast<size_t>(kind)];
  if (period == 0) return -1;
  return kind * devices_.nodes() + (k * g % period) / g;
}

template <bool kMoreBoxes>
void FactoredEdgeTraffic::summarize_nodes(const Frame& f, TrafficSummary& out) {
  const int g = f.gpus_per_node;
  const size_t classes = size_t{3} * static_cast<size_t>(devices_.nodes());
  if (class_stamp_.size() != classes) {
    class_stamp_.assign(classes, -1);
    class_total_.assign(classes, 0);
    bytes_ += static_cast<int64_t>(2 * classes * sizeof(int64_t));
  }
  ++stamp_;
  const int pfirst = f.producer.devices.front(), qfirst = f.consumer.devices.front();
  const int first_node = std::min(pfirst, qfirst) / g;
  const int last_node = (std::max(pfirst + f.producer.tiles(), qfirst + f.consumer.tiles()) - 1) / g;
  const Periods periods = node_periods(f);
  Cursor q_at, p_at;
  for (int k = first_node; k <= last_node; ++k) {
    const int c = node_class(f, periods, k);
    if (c >= 0 && class_stamp_[static_cast<size_t>(c)] == stamp_) {
      out.total += class_total_[static_cast<size_t>(c)];
      continue;
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
    if (c >= 0) class_stamp_[static_cast<size_t>(c)] = stamp_, class_total_[static_cast<size_t>(c)] = total;
  }
}

bool FactoredEdgeTraffic::summary(const Configuration& producer, const Configuration& consumer_config,
                                  TrafficSummary& out) {
  if (!on_aligned_block(producer) || !on_aligned_block(consumer_config)) return false;
  const int count = devices_.device_count();
  if (producer.devices.back() >= count || consumer_config.devices.back() >= count) return false;
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
