#pragma once
// The devices of a job and the links between them, as plain values: what the planner
// prices. Devices are numbered node-major (node k holds devices k*G .. k*G+G-1 for G GPUs
// per node); every node has the same GPUs and the same intra-node link matrix, and
// reaches the other nodes through its network interfaces.
#include <cstdint>
#include <string>
#include <vector>

#include "topology/tensor_layout.h"

namespace layerplan {

// The memory a plan leaves free on every GPU unless configured otherwise: the CUDA
// context, library handles and workspaces, communicator buffers, allocator slack.
inline constexpr double kDefaultMemoryReserveGib = 2.0;
// The share of peak HBM bandwidth memory-bound kernels (element-wise, pooling, batch norm,
// copies) reach on a GPU: a STREAM-like triad (BabelStream) reaches about 0.85-0.9 of it on
// V100 and A100 (docs/cost-model.md, "Compute").
inline constexpr double kDefaultGpuMemoryEfficiency = 0.85;

// What the cost model needs to know about one GPU.
struct Device {
  std::string model;
  double peak_flops = 0.0;            // FLOP/s at the precision the plan trains in
  double memory_bandwidth = 0.0;      // bytes/s
  double memory_bytes = 0.0;          // 0: unknown, and no plan is checked against it
  double memory_reserve_bytes = 0.0;  // kept free of the plan's tensors (docs/cost-model.md)
  double compute_efficiency = 1.0;    // fraction of peak reached by large kernels
  double kernel_overhead_s = 0.0;     // fixed cost of launching one kernel
  int64_t bytes_per_element = 4;      // 4 for fp32/tf32 training, 2 for bf16
  double memory_efficiency = 1.0;     // share of memory_bandwidth memory-bound kernels reach
  // Price convolutions and fully-connected layers by their GEMM shape (planner/kernel_efficiency.h);
  // off, a bare roofline at compute_efficiency (synthetic devices of unit tests).
  bool kernel_shape_model = false;
  bool tensor_cores = false;  // the precision's GEMMs run on tensor cores (GpuModel::tensor_cores)
  // Activations in NCHW make every tensor-core convolution transpose its operands (tensor_layout.h).
  TensorLayout layout = TensorLayout::kChannelsLast;
};

// A one-directional path between two devices.
struct Link {
  double bandwidth = 0.0;  // bytes/s
  double latency = 0.0;    // s
};

class DeviceGraph {
 public:
  // `intra` is the gpus_per_node × gpus_per_node matrix of links inside a node (the
  // diagonal is ignored); `network` is what one node can send (and, at the same time,
  // receive) to other nodes: the sum over the NICs it uses.
  DeviceGraph(int nodes, int gpus_per_node, Device device, std::vector<Link> intra, Link network);

  int nodes() const { return nodes_; }
  int gpus_per_node() const { return gpus_per_node_; }
  int device_count() const { return nodes_ * gpus_per_node_; }
  int node_of(int device) const { return device / gpus_per_node_; }
  int local_index(int device) const { return device % gpus_per_node_; }
  bool same_node(int a, int b) const { return node_of(a) == node_of(b); }

  const Device& device() const { return device_; }  // every device is this model
  const Link& intra_link(int a, int b) const;       // a, b on the same node
  const Link& network() const { return network_; }
  // The link a transfer from a to b uses: the intra-node link, or the network.
  const Link& link(int a, int b) const { return same_node(a, b) ? intra_link(a, b) : network_; }

  std::string describe() const;  // one line, e.g. "4 nodes x 4 P100 (...)"

 private:
  int nodes_;
  int gpus_per_node_;
  Device device_;
  std::vector<Link> intra_;
  Link network_;
};

}  // namespace layerplan
