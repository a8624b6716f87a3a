#pragma once
// What an NCCL collective costs: the latency/bandwidth model NCCL itself uses to pick an
// algorithm and protocol for a call (NVIDIA/nccl, src/graph/tuning.cc; docs/cost-model.md,
// "Collectives"). For each algorithm (ring; tree, which NCCL runs hierarchically: a chain
// inside each node and a double binary tree between nodes) and protocol (LL, LL128,
// Simple) the time is
//   latency(algorithm, protocol, ranks, nodes) + bytes / algorithm bandwidth
// and NCCL runs the fastest enabled pair. NVLS (NVLink SHARP) and CollNet (in-network
// reduction) are not modeled: they need switch support this project does not describe.
#include <string_view>
#include <vector>

namespace layerplan {

enum class Collective { kAllReduce, kReduceScatter, kAllGather };
enum class CollectiveAlgorithm { kRing, kTree };
enum class CollectiveProtocol { kLowLatency, kLowLatency128, kSimple };  // NCCL's LL, LL128, Simple

std::string_view algorithm_name(CollectiveAlgorithm algorithm);
std::string_view protocol_name(CollectiveProtocol protocol);

// What NCCL's model needs to know about the GPUs: their generation (compute capability,
// e.g. 90 for Hopper) and whether the GPUs of a node talk over NVLink or PCIe.
struct CollectiveHardware {
  int compute_capability = 80;
  bool nvlink = true;
  int sms = 108;  // streaming multiprocessors per GPU
};

// NCCL's channels: what it typically builds on NVLink nodes (kNvlinkChannels, as the
// per-channel caps assume) and on PCIe-only nodes, where its rings go through the CPU's
// PCIe switches and it builds 2 channels per ring, 2 rings (kPcieChannels).
inline constexpr int kNvlinkChannels = 16;
inline constexpr int kPcieChannels = 4;

// The share of a GPU's compute a running collective takes: NCCL runs one thread block per
// channel, each holding an SM (docs/cost-model.md, "Overlap and its costs").
double collective_compute_share(const CollectiveHardware& hardware);

// Read from a GPU model name ("H100-SXM5-80GB", "Tesla P100-SXM2-16GB", "NVIDIA A100-PCIE-40GB"):
// P100 60, V100 70, T4 75, A100 80, H100/H200 90, unknown names 80; PCIe-only cards and
// names with "PCIE" use PCIe inside the node. SMs: P100 56, V100 80, T4 40, A100 108, H100
// and H200 132 (the SXM parts; NVIDIA's architecture whitepapers), unknown names 108.
CollectiveHardware collective_hardware(std::string_view gpu_model);

// One communicator: `ranks` GPUs spread evenly over `nodes` nodes.
struct CollectiveGroup {
  int ranks = 1;
  int nodes = 1;
  double intra_bandwidth = 0.0;  // bytes/s one way between two members on one node (the slowest)
  double inter_bandwidth = 0.0;  // bytes/s this group may use of each node's NICs (multi-node only)
};

struct CollectiveEstimate {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  CollectiveProtocol protocol = CollectiveProtocol::kSimple;
  double latency_s = 0.0;
  double bandwidth = 0.0;  // algorithm bandwidth, bytes/s: bytes / (time - latency)
  double time_s = 0.0;
};

// Every algorithm and protocol NCCL would consider for this call (those it disables, such as
// LL128 before Volta or without NVLink and tree for anything but all-reduce, are absent).
// Empty for a group of one rank.
std::vector<CollectiveEstimate> collective_estimates(Collective collective, const CollectiveGroup& group,
                                                     const CollectiveHardware& hardware, double bytes);

// The pair NCCL would run: the fastest estimate (time 0 for a group of one rank).
CollectiveEstimate fastest_collective(Collective collective, const CollectiveGroup& group,
                                      const CollectiveHardware& hardware, double bytes);

}  // namespace layerplan
