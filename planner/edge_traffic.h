#pragma once
// The traffic of one edge summed per device and per node: what the cost model's
// transfer term needs. Two ways to compute the same numbers:
//  - by pairs: every (producer tile, consumer tile) overlap from for_each_transfer;
//  - factored: required regions and tile boxes are products of per-dimension intervals,
//    and on an aligned block of devices the tiles of one node are a run of consecutive
//    tile indices, which is a union of a few boxes of tile coordinates (one box when the
//    degrees and GPUs per node are powers of two). So every per-device and per-node sum is
//    a sum over those boxes of products of per-dimension sums. This costs
//    O(tiles x boxes x dims) instead of O(overlapping tile pairs), and is what makes cost
//    tables for 64-256 GPUs affordable. It applies when both configurations sit on aligned
//    blocks of consecutive devices and their degrees divide the device count (every
//    configuration the search enumerates).
#include <algorithm>
#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "common/index.h"
#include "model/geometry.h"
#include "planner/key_table.h"
#include "topology/device_graph.h"

namespace layerplan {

struct EdgeTraffic {
  std::vector<int64_t> intra_send, intra_recv;  // elements per device, to / from its own node
  std::vector<int64_t> net_out, net_in;         // elements per node, to / from other nodes
  int64_t total = 0;                            // elements moved between different devices

  void reset(int devices, int nodes);
};

// What pricing an edge needs of its traffic: the busiest device's intra-node elements (sent
// or received), the busiest node's network elements (out or in) and the total moved.
struct TrafficSummary {
  int64_t busiest_device = 0;
  int64_t busiest_node = 0;
  int64_t total = 0;

  bool operator==(const TrafficSummary&) const = default;
};
TrafficSummary summarize(const EdgeTraffic& traffic);

// Fills `out` by enumerating overlapping tile pairs.
void edge_traffic_by_pairs(const ModelGraph& graph, const Layer& consumer, int slot, const Configuration& producer,
                           const Configuration& consumer_config, const DeviceGraph& devices, EdgeTraffic& out);

// Computes EdgeTraffic by per-dimension products for one edge (consumer layer, input
// slot), for any number of configuration pairs. It caches the per-dimension overlap
// tables, which depend only on the degrees along that dimension.
class FactoredEdgeTraffic {
 public:
  // Per-dimension tables of up to `dense_entries` entries keep dense prefix sums (faster);
  // larger ones, and all of them with 0, search the regions' prefix sums instead.
  static constexpr int64_t kDenseEntries = int64_t{1} << 17;  // 1 MiB a table
  FactoredEdgeTraffic(const ModelGraph& graph, const Layer& consumer, int slot, const DeviceGraph& devices,
                      int64_t dense_entries = kDenseEntries);

  // Dense prefix sums take at most this many bytes per edge; further tables search instead.
  static constexpr int64_t kDenseBudgetBytes = int64_t{8} << 20;
  // Bytes this edge's tables, node boxes and scratch hold now (they only grow).
  int64_t bytes() const { return bytes_; }
  // At most what summary()'s tables of node classes take on `nodes` nodes of `gpus_per_node`.
  static int64_t most_class_bytes(int nodes, int gpus_per_node);

  int consumer_id() const { return consumer_.id; }
  int slot() const { return slot_; }

  // Fills `out`; returns false (leaving `out` unspecified) when a configuration is not on
  // an aligned block of consecutive devices, or a degree does not divide the device count.
  bool compute(const Configuration& producer, const Configuration& consumer_config, EdgeTraffic& out);
  // summarize() of what compute() fills, without per-device arrays, and visiting one node of
  // each class of nodes whose traffic is the same (see node_key()); false where compute() is.
  bool summary(const Configuration& producer, const Configuration& consumer_config, TrafficSummary& out);

 private:
  // Along one dimension, for producer degree P and consumer degree Q: the region consumer
  // index j requires, [lo[j], hi[j]), and the producer tiles [i*psize, (i+1)*psize). Sums of
  // overlaps come from prefix sums over j, so a table takes O(P + Q) memory rather than the
  // P x Q of a dense overlap matrix (1024 x 1024 per edge at 1024 devices). The prefix sums
  // need lo and hi non-decreasing in j, which every kind's required regions are; `valid`
  // says so, and compute() falls back to the pair enumeration otherwise.
  struct DimTable {
    int64_t psize = 0;
    std::vector<int64_t> lo, hi;       // [j], hi >= lo
    std::vector<int64_t> size_prefix;  // [j + 1]: Σ_{j' < j} (hi - lo)
    std::vector<int64_t> lo_prefix;    // [j + 1]: Σ_{j' < j} lo
    std::vector<int64_t> sent_to_all;  // [i]: Σ_j overlap(i, j)
    std::vector<int64_t> sent_prefix;  // [i + 1]: Σ_{i' < i} sent_to_all[i']
    // [i * (Q + 1) + j]: Σ_{j' < j} overlap(i, j'), kept only while P x (Q + 1) is at most
    // the dense limit (every table up to 256 devices), where it is faster than below().
    std::vector<int64_t> sum_j;
    int q = 0;
    bool valid = true;
    // Region j is exactly [j * extent / Q, (j + 1) * extent / Q) of an input as long as the
    // output: moving both sides' indices by the same number of elements changes nothing.
    bool translates = false;
    int64_t need(int j) const { return hi[static_cast<size_t>(j)] - lo[static_cast<size_t>(j)]; }
    // Elements of region j inside [from, to).
    int64_t inside(int j, int64_t from, int64_t to) const {
      const int64_t a = std::max(lo[static_cast<size_t>(j)], from), b = std::min(hi[static_cast<size_t>(j)], to);
      return b > a ? b - a : 0;
    }
    int64_t overlap_at(int i, int j) const { return inside(j, i * psize, (i + 1) * psize); }
    // Σ_{i=ilo..ihi} overlap(i, j): producer tiles ilo..ihi are one interval.
    int64_t over_i(int ilo, int ihi, int j) const { return inside(j, ilo * psize, (ihi + 1) * psize); }
    // Σ_{j=jlo..jhi} overlap(i, j).
    int64_t over_j(int i, int jlo, int jhi) const {
      if (!sum_j.empty()) return sum_j[flat_index(i, q + 1, jhi + 1)] - sum_j[flat_index(i, q + 1, jlo)];
      return below((i + 1) * psize, jlo, jhi) - below(i * psize, jlo, jhi);
    }
    // Σ_{j=jlo..jhi} |region j ∩ [0, x)|.
    int64_t below(int64_t x, int jlo, int jhi) const;
  };
  const DimTable& table(int dim, int producer_degree, int consumer_degree);

  // Per node, the tiles of a configuration that it holds, as disjoint boxes of tile
  // coordinates (inclusive bounds): a first box per node, and for node k further boxes
  // more_lo/more_hi[more[k] .. more[k+1]-1] (none when degrees and G are powers of two).
  struct NodeBoxes {
    bool valid = false;                                       // the boxes hold exactly the tiles on each node
    bool one_box = true;                                      // no node needs further boxes
    std::vector<char> has;                                    // [node]: holds any tiles
    std::vector<std::array<int, kNumDims>> lo, hi;            // [node]: its first box
    std::vector<int> more;                                    // [node + 1]
    std::vector<std::array<int, kNumDims>> more_lo, more_hi;  // further boxes
    // Whether the nodes it covers fully form a grid: `full` nodes from node first_full on, the
    // i-th of them holding one box of `extent` tiles per dimension at the digits of i in
    // `cells` (boxes per dimension, in tile order) times `extent`. Always so for powers of two
    // when the tiles fill whole nodes.
    bool grid = false;
    int first_full = 0, full = 0;
    Degrees cells;
    std::array<int, kNumDims> extent{};
    std::vector<std::array<int, kNumDims>> cell;  // [node]: its cell, where grid
  };
  // Tiles on devices first..first+p-1 of this graph, with first a multiple of p.
  bool on_aligned_block(const Configuration& c) const;
  const NodeBoxes& node_boxes(const Configuration& config);  // cached by degrees and block
  void find_grid(const Configuration& config, NodeBoxes& b) const;

  using Coords = std::array<int, kNumDims>;
  using DimTables = std::array<const DimTable*, kNumDims>;
  // What one compute() reads: both configurations, their per-dimension tables and boxes.
  struct Frame {
    const Configuration& producer;
    const Configuration& consumer;
    DimTables dim;
    const NodeBoxes& pb;
    const NodeBoxes& qb;
    int gpus_per_node;
  };
  // The tables of the degree pair along every dimension; false if a degree is not a divisor.
  bool dim_tables(const Degrees& pd, const Degrees& qd, DimTables& dim);
  // Receivers: each consumer tile needs its region, minus what its own device holds; what
  // its node's producer tiles hold comes over intra-node links, the rest over the network.
  // kMoreBoxes: some node holds its tiles as more than one box. Compiled separately so that
  // the common case (always so for powers of two) runs the single-box loop alone.
  // Where a visit of one side's tiles stopped: the next tile, its coordinates and those of
  // the other side's tile on the same device, so that a visit of the next tiles goes on
  // without recomputing them.
  struct Cursor {
    int tile = -1;
    Coords own{}, other{};
  };
  // Both visit tiles [begin, end) of their side and hand each tile's figures to `sink`.
  template <bool kMoreBoxes, class Sink>
  void receivers(const Frame& f, int begin, int end, Cursor& at, Sink&& sink) const;
  template <bool kMoreBoxes, class Sink>
  void senders(const Frame& f, int begin, int end, Cursor& at, Sink&& sink) const;
  template <bool kMoreBoxes>
  void add_receivers(const Frame& f, EdgeTraffic& out) const;
  // Senders: each producer tile sends its overlap with every consumer region, minus its
  // own device's; to its node's consumer tiles over intra-node links, the rest over the network.
  template <bool kMoreBoxes>
  void add_senders(const Frame& f, EdgeTraffic& out) const;
  // What node k's further producer boxes share with consumer tile q's region, and what
  // producer tile p shares with the regions of node k's further consumer boxes.
  template <bool kMoreBoxes>
  void summarize_nodes(const Frame& f, TrafficSummary& out);
  // Writes to `key` what node k's figures depend on, so that nodes with equal keys have equal
  // figures; false (a class of its own) when a side covers the node in part.
  static bool node_key(const Frame& f, int k, std::vector<int64_t>& key);
  // The same for a node both sides cover fully, where both sides' full nodes form grids: per
  // dimension, the number of what the table says of the node's two cells, packed in one word;
  // false for other nodes or where the numbers take too much room.
  bool grid_key(const Frame& f, int k, uint64_t& key);
  // The number of what dimension d's table says of producer indices plo..phi and consumer
  // indices qlo..qhi among this pair's; -1 when out of room.
  int dim_number(const Frame& f, size_t d, int plo, int phi, int qlo, int qhi);
  // Nodes first..end-1, fully covered by one side (`producer` or not) and not at all by the
  // other, from the side's grid: each node's network elements are a product of per-dimension
  // sums, and so are their maximum and sum over a box of cells.
  void one_side_nodes(const Frame& f, bool producer, int first, int end, TrafficSummary& out);
  // The node after k up to which every node is like k fully covered by one side and not by
  // the other, that side's full nodes forming a grid; k itself when k is not such a node.
  // `producer` says which side.
  static int one_side_run_end(const Frame& f, int k, bool& producer);
  static int64_t more_boxes_received(const Frame& f, size_t k, const Coords& q);
  static int64_t more_boxes_sent(const Frame& f, size_t k, const Coords& p);

  const ModelGraph& graph_;
  const Layer& consumer_;
  int slot_;
  const DeviceGraph& devices_;
  int64_t dense_entries_;
  // Degrees are divisors of the device count; tables are indexed by a divisor's rank.
  std::vector<int> consecutive_;  // 0, 1, ..., device count - 1
  std::vector<int> rank_of_;      // [degree] -> rank among the divisors, or -1
  int divisors_ = 0;              // how many divisors the device count has
  std::vector<DimTable> tables_;  // [dim][rank P][rank Q], built on first use
  std::vector<char> built_;
  std::unordered_map<uint64_t, NodeBoxes> node_boxes_;
  // summary(): this pair's node classes (their keys, totals), the numbers of what the
  // tables say of a pair of cells per dimension, and those numbers per dimension and cells
  // (stamped with the pair they were set for).
  void prepare_classes();  // sizes these on first use
  bool prepare_cell_classes(const Frame& f);
  KeyTable node_classes_, dim_classes_;
  WordTable grid_classes_;
  std::vector<int64_t> class_total_, node_key_, dim_key_;
  std::vector<Coords> run_lo_, run_hi_;  // one_side_nodes(): boxes of cells
  struct CellClass {
    int64_t stamp = -1;
    int number = 0;
  };
  std::array<std::vector<CellClass>, kNumDims> cell_classes_;
  int64_t stamp_ = 0;
  int64_t dense_bytes_ = 0;  // of the tables' sum_j
  int64_t bytes_ = 0;        // see bytes()
};

}  // namespace layerplan
