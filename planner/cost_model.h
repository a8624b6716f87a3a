#pragma once
// Prices one training step under the paper's objective (docs/cost-model.md):
//   step = Σ_layers [compute(layer, c) + sync(layer, c)] + Σ_edges transfer(edge, c_src, c_dst)
// with no overlap between layers, or between computation and communication.
//  - compute: roofline of the slowest tile, forward and backward: max(FLOPs / (peak ×
//    efficiency), bytes / memory bandwidth) + kernel launch overhead per pass;
//  - transfer: the exact per-pair volumes of geometry.h. Devices send and receive in
//    parallel; each device's send (and receive) time is the sum of its pairs' bytes over
//    their intra-node links, each node's network time its cross-node bytes over its NICs;
//    the edge takes the largest of these plus the largest latency used, once forward and
//    once backward (gradients move the same volumes back);
//  - sync: every weight shard is all-reduced among its replicas by a ring:
//    2(r-1)/r · bytes / bottleneck bandwidth + 2(r-1) · latency, rings in parallel, with a
//    node's network shared by the rings that leave it; or, as in the paper's model, through
//    a parameter server per shard (the replica group's first device) that receives every
//    replica's gradient and sends the shard back.
#include <cstdint>
#include <memory>
#include <vector>

#include "model/geometry.h"
#include "model/model_graph.h"
#include "planner/edge_traffic.h"
#include "topology/device_graph.h"

namespace layerplan {

struct TransferCost {
  double time_s = 0.0;  // forward + backward
  int64_t bytes = 0;    // forward + backward, summed over device pairs
};

struct SyncCost {
  double time_s = 0.0;
  int64_t bytes = 0;  // sent by all replicas together
};

enum class SyncScheme { kRingAllReduce, kParameterServer };

class CostModel {
 public:
  CostModel(const ModelGraph& graph, const DeviceGraph& devices, SyncScheme sync_scheme = SyncScheme::kRingAllReduce);

  double compute_time(const Layer& layer, const Configuration& config) const;
  SyncCost sync(const Layer& layer, const Configuration& config) const;
  TransferCost transfer(const Layer& consumer, int slot, const Configuration& producer,
                        const Configuration& consumer_config) const;

  // The most bytes the per-edge pricing tables have held at once (docs/planner.md §8).
  int64_t pricing_bytes_peak() const;

  const ModelGraph& graph() const { return graph_; }
  const DeviceGraph& devices() const { return devices_; }

  // What the runtime also reduces and the planner's objective leaves out (docs/cost-model.md,
  // "What is not modeled"); `layerplan predict` adds them. A batch norm split over n, h or w
  // all-reduces its statistics among the tiles that share channels, forward (sum and sum of
  // squares) and backward (the two gradient sums), 2 doubles per channel each; every step
  // all-reduces the loss (1 double) over the devices the plan uses (sorted; a device the
  // plan leaves idle takes no part, and one device sends nothing). The runtime reduces these small
  // buffers by a direct exchange (runtime/executor/transport.h): each member sends its
  // buffer to every other, (p-1)·bytes over its links plus one latency.
  double batch_norm_statistics_time(const Layer& layer, const Configuration& config) const;
  double loss_reduction_time(const std::vector<int>& used_devices) const;

  // Time to all-reduce `bytes` by a ring among each group of devices (sorted), the rings in
  // parallel: the price of sync() for one layer, and of one bucket of the runtime's
  // gradients (runtime/executor/gradient_buckets.h).
  double ring_all_reduce_time(const std::vector<std::vector<int>>& groups, double bytes) const;

 private:
  double roofline(double flops, double bytes, int kernels) const;
  TransferCost price_traffic(const TrafficSummary& traffic) const;
  double direct_all_reduce_time(const std::vector<std::vector<int>>& groups, double bytes) const;
  double parameter_server_time(const std::vector<std::vector<int>>& groups, double bytes) const;
  TransferCost transfer_over_pair_links(const Layer& consumer, int slot, const Configuration& producer,
                                        const Configuration& consumer_config) const;

  const ModelGraph& graph_;
  const DeviceGraph& devices_;
  int64_t element_bytes_;  // of activations, weights and gradients at the training precision
  SyncScheme sync_scheme_;
  // Every intra-node link has the same bandwidth and latency, so per-device element counts
  // (EdgeTraffic) price a transfer; otherwise each pair is priced over its own link.
  bool uniform_intra_ = true;
  // Scratch space for transfer(), one entry per device / node.
  mutable EdgeTraffic traffic_;
  // The factored traffic of the edge priced last: cost tables price one edge's pairs in a
  // row, and keeping one edge's per-dimension tables bounds their memory.
  mutable std::unique_ptr<FactoredEdgeTraffic> factored_;
  mutable int64_t pricing_bytes_peak_ = 0;  // of the edges priced before the current one
  mutable std::vector<double> send_s_, recv_s_, net_out_, net_in_;
};

}  // namespace layerplan
