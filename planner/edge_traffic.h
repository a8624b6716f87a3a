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
#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "common/index.h"
#include "model/geometry.h"
#include "topology/device_graph.h"

namespace layerplan {

struct EdgeTraffic {
  std::vector<int64_t> intra_send, intra_recv;  // elements per device, to / from its own node
  std::vector<int64_t> net_out, net_in;         // elements per node, to / from other nodes
  int64_t total = 0;                            // elements moved between different devices

  void reset(int devices, int nodes);
};

// Fills `out` by enumerating overlapping tile pairs.
void edge_traffic_by_pairs(const ModelGraph& graph, const Layer& consumer, int slot, const Configuration& producer,
                           const Configuration& consumer_config, const DeviceGraph& devices, EdgeTraffic& out);

// Computes EdgeTraffic by per-dimension products for one edge (consumer layer, input
// slot), for any number of configuration pairs. It caches the per-dimension overlap
// tables, which depend only on the degrees along that dimension.
class FactoredEdgeTraffic {
 public:
  FactoredEdgeTraffic(const ModelGraph& graph, const Layer& consumer, int slot, const DeviceGraph& devices);

  // Fills `out`; returns false (leaving `out` unspecified) when a configuration is not on
  // an aligned block of consecutive devices, or a degree does not divide the device count.
  bool compute(const Configuration& producer, const Configuration& consumer_config, EdgeTraffic& out);

 private:
  // Along one dimension, for producer degree P and consumer degree Q:
  // overlap[i*Q + j] = elements producer index i shares with the region consumer index j
  // requires; need[j] = that region's extent; prefix sums over i and over j.
  struct DimTable {
    std::vector<int64_t> overlap, need, sum_i, sum_j;
    int q = 0;
    int64_t overlap_at(int i, int j) const { return overlap[flat_index(i, q, j)]; }
    // Σ_{i=lo..hi} overlap(i, j) and Σ_{j=lo..hi} overlap(i, j).
    int64_t over_i(int lo, int hi, int j) const {
      return sum_i[flat_index(hi + 1, q, j)] - sum_i[flat_index(lo, q, j)];
    }
    int64_t over_j(int i, int lo, int hi) const {
      return sum_j[flat_index(i, q + 1, hi + 1)] - sum_j[flat_index(i, q + 1, lo)];
    }
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
  };
  const NodeBoxes& node_boxes(const Configuration& config);  // cached by degrees and block

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
  template <bool kMoreBoxes>
  void add_receivers(const Frame& f, EdgeTraffic& out) const;
  // Senders: each producer tile sends its overlap with every consumer region, minus its
  // own device's; to its node's consumer tiles over intra-node links, the rest over the network.
  template <bool kMoreBoxes>
  void add_senders(const Frame& f, EdgeTraffic& out) const;
  // What node k's further producer boxes share with consumer tile q's region, and what
  // producer tile p shares with the regions of node k's further consumer boxes.
  static int64_t more_boxes_received(const Frame& f, size_t k, const Coords& q);
  static int64_t more_boxes_sent(const Frame& f, size_t k, const Coords& p);

  const ModelGraph& graph_;
  const Layer& consumer_;
  int slot_;
  const DeviceGraph& devices_;
  // Degrees are divisors of the device count; tables are indexed by a divisor's rank.
  std::vector<int> rank_of_;      // [degree] -> rank among the divisors, or -1
  int divisors_ = 0;              // how many divisors the device count has
  std::vector<DimTable> tables_;  // [dim][rank P][rank Q], built on first use
  std::vector<char> built_;
  std::unordered_map<uint64_t, NodeBoxes> node_boxes_;
};

}  // namespace layerplan
