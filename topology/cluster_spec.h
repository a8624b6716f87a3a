#pragma once
// A cluster described by numbers rather than discovered: nodes × GPUs per node, a GPU
// model from the catalog, and the bandwidth and latency of the links inside and between
// nodes. It comes from `layerplan plan` flags or a small TOML file, and describes real
// or hypothetical clusters alike.
#include <optional>
#include <string>

#include "topology/device_graph.h"
#include "topology/fabric.h"
#include "topology/gpu_catalog.h"
#include "topology/tensor_layout.h"

namespace layerplan {

struct ClusterSpec {
  int nodes = 4;
  int gpus_per_node = 4;
  std::string gpu = "p100";
  Precision precision = Precision::kFp32;
  TensorLayout layout = TensorLayout::kChannelsLast;  // how the framework stores activations
  // One-way GB/s between two GPUs of a node; unset means the GPU model's NVLink figure.
  std::optional<double> intra_bandwidth_gbytes;
  double intra_latency_us = 5.0;
  double inter_bandwidth_gbits = 100.0;  // per NIC, one way
  double inter_latency_us = 5.0;
  int nics_per_node = 1;
  // How the NICs carry collectives; the network's bandwidth is the line rate times the
  // share this fabric reaches (fabric_bus_share()).
  Fabric fabric = Fabric::kRdma;
  double compute_efficiency = 0.85;  // fraction of peak FLOP/s the largest GEMMs reach
  double kernel_overhead_us = 5.0;   // per kernel launch
  // Price GEMM layers by their shape and memory-bound kernels at the achieved share of HBM
  // bandwidth (Device::kernel_shape_model); false: a bare roofline, for devices that stand
  // for something other than a GPU's kernels (bench/cpu_like_4_devices.toml).
  bool kernel_shapes = true;
  // Each GPU's memory, GiB; unset means the GPU model's figure.
  std::optional<double> gpu_memory_gib;
  // Memory a plan leaves free on each GPU (CUDA context, libraries, communicator buffers).
  double gpu_memory_reserve_gib = kDefaultMemoryReserveGib;

  // The paper's cluster: 4 nodes × 4 P100, NVLink inside a node, 100 Gb/s EDR
  // InfiniBand between nodes.
  static ClusterSpec paper_cluster() { return {}; }
};

// Throws UsageError naming the first out-of-range value.
void validate(const ClusterSpec& spec);

// Reads a [cluster] table (keys as in ClusterSpec, see docs/cluster-file.md) on top of
// `base`. Unknown keys, wrong types and bad values are errors that name the file, line
// and column; throws UsageError.
ClusterSpec load_cluster_file(const std::string& path, ClusterSpec base = {});
// The same for the file's text; `path` names it in errors.
ClusterSpec cluster_from_toml(const std::string& text, const std::string& path, ClusterSpec base = {});

DeviceGraph build_device_graph(const ClusterSpec& spec);

}  // namespace layerplan
