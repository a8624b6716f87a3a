#pragma once
// Prices the parts of one training step (docs/cost-model.md):
//  - compute: roofline of the slowest tile, forward and backward: max(FLOPs / (peak ×
//    efficiency), bytes / memory bandwidth) + kernel launch overhead per pass;
//  - transfer: the exact per-pair volumes of geometry.h. Devices send and receive in
//    parallel; each device's send (and receive) time is the sum of its pairs' bytes over
//    their intra-node links, each node's network time its cross-node bytes over its NICs;
//    the edge takes the largest of these plus the largest latency used, once forward and
//    once backward (gradients move the same volumes back);
//  - sync: every weight shard is all-reduced among its replicas as NCCL would run it
//    (collective_model.h), in the runtime's gradient buckets (model/gradient_buckets.h);
//    or, as in the paper's model, through a parameter server per shard (the replica
//    group's first device) that receives every replica's gradient and sends the shard back.
// The search adds these up per layer (sync() is then each layer's share of the buckets it
// fills); step_timeline.h lays the same parts out in time, the bucket all-reduces
// overlapping the backward pass.
#include <cstdint>
#include <memory>
#include <vector>

#include "model/geometry.h"
#include "model/gradient_buckets.h"
#include "model/model_graph.h"
#include "model/profile_db.h"
#include "planner/collective_model.h"
#include "planner/edge_traffic.h"
#include "planner/kernel_efficiency.h"
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

// How weight gradients are synchronized, and whether that overlaps the backward pass.
struct SyncOptions {
  // kRingAllReduce: NCCL's all-reduce (ring or tree, whichever NCCL's model picks), in
  // buckets; kParameterServer: the paper's scheme, per layer.
  SyncScheme scheme = SyncScheme::kRingAllReduce;
  // On: a bucket's all-reduce runs while the backward pass goes on (as PyTorch DDP and
  // NCCL on a separate stream do); off: it blocks the backward until done, as the
  // executor does today (docs/runtime.md).
  bool overlap = true;
  // The runtime's bucket size; gradients are all-reduced in buckets of this many bytes.
  int64_t bucket_bytes = kDefaultGradientBucketBytes;
};

// Forward and backward time of one layer's slowest tile.
struct PassTimes {
  double forward_s = 0.0;
  double backward_s = 0.0;
};

// The share of the large-GEMM rate a layer's forward and backward kernels reach (1 for
// kernels that are not GEMMs, and on devices without the shape model).
struct PassEfficiency {
  double forward = 1.0;
  double backward = 1.0;
};

class CostModel {
 public:
  // `profile`: measured kernel times of this device model at the plan's precision
  // (model/profile_db.h); a layer whose slowest tile it holds is priced by them.
  CostModel(const ModelGraph& graph, const DeviceGraph& devices, SyncOptions sync_options,
            std::shared_ptr<const DeviceProfile> profile = nullptr);
  CostModel(const ModelGraph& graph, const DeviceGraph& devices, SyncScheme sync_scheme = SyncScheme::kRingAllReduce)
      : CostModel(graph, devices, SyncOptions{sync_scheme}) {}

  double compute_time(const Layer& layer, const Configuration& config) const;  // forward + backward
  PassTimes pass_times(const Layer& layer, const Configuration& config) const;
  // The search's additive price of the layer's weight sync. With all-reduce, each group's
  // share of the buckets it fills: a shard of S bytes below the bucket size B costs
  // S/B of a full bucket's all-reduce; a larger shard fills a bucket of its own. With
  // parameter servers, the layer's own sync.
  SyncCost sync(const Layer& layer, const Configuration& config) const;
  // One all-reduce of `bytes` among `devices` (sorted) as NCCL would run it, where
  // `network_users[k]` groups share node k's NICs at the same time (see network_users()).
  CollectiveEstimate all_reduce(const std::vector<int>& devices, double bytes,
                                const std::vector<int>& network_users) const;
  // How many of `groups` (each sorted) span nodes and have a member on each node.
  std::vector<int> network_users(const std::vector<std::vector<int>>& groups) const;
  // The weight sync of a layer by parameter servers (SyncScheme::kParameterServer).
  double parameter_server_sync_time(const Layer& layer, const Configuration& config) const;

  const SyncOptions& sync_options() const { return sync_options_; }
  const CollectiveHardware& collective_hardware() const { return hardware_; }
  // The share of a GPU's compute a running all-reduce takes (collective_compute_share()).
  double collective_compute_share() const { return layerplan::collective_compute_share(hardware_); }
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

  // Time to all-reduce `bytes` by a flat ring among each group of devices (sorted), the
  // rings in parallel, each paying the links' own latency per step: how Gloo runs the CPU
  // runtime's buckets (`layerplan predict`), not how NCCL runs a GPU's.
  double ring_all_reduce_time(const std::vector<std::vector<int>>& groups, double bytes) const;

 private:
  double roofline(double flops, double bytes, int kernels, double shape_efficiency) const;
  PassEfficiency gemm_efficiency(const Layer& layer, const Configuration& config) const;
  PassTimes layout_transposes(const Layer& layer, double input_elements, double output_elements,
                              double weight_elements) const;
  TransferCost price_traffic(const TrafficSummary& traffic) const;
  double direct_all_reduce_time(const std::vector<std::vector<int>>& groups, double bytes) const;
  double parameter_server_time(const std::vector<std::vector<int>>& groups, double bytes) const;
  CollectiveGroup collective_group(const std::vector<int>& devices, const std::vector<int>& network_users) const;
  TransferCost transfer_over_pair_links(const Layer& consumer, int slot, const Configuration& producer,
                                        const Configuration& consumer_config) const;

  const ModelGraph& graph_;
  const DeviceGraph& devices_;
  int64_t element_bytes_;  // of activations, weights and gradients at the training precision
  SyncOptions sync_options_;
  CollectiveHardware hardware_;
  GemmHardware gemm_hardware_;
  double bucket_bytes_;  // the bucket size in whole gradients
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
  GraphProfile profile_;  // measured pass times, where the profile holds them
};

}  // namespace layerplan
