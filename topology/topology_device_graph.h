#pragma once
// From a discovered node to what the planner prices: each GPU pair's one-way bandwidth
// and latency (NVLink figures as found, NVSwitch boards without a matrix from the GPU
// table, PCIe paths by the rules of docs/topology.md), the GPU's figures from the GPU
// table, and the network from the admin's fabric.
#include <string>
#include <vector>

#include "topology/admin_config.h"
#include "topology/device_graph.h"
#include "topology/node_topology.h"

namespace layerplan {

// The node with every link priced: `gbytes` and `source` final, overrides applied.
// Throws UsageError when the GPUs are of different models or have no figures.
NodeTopology price_links(const NodeTopology& node, const AdminConfig& config);

// What one node can send to the others: `fabric.nics_per_node` ports when the admin says,
// else every active InfiniBand/RoCE/EFA interface (each capped by its PCIe link), else the
// fastest Ethernet interface with a known speed, else one port. Each port's rate is
// `fabric.nic_gbits` when the admin config sets it, else the NIC's sysfs rate
// (NicInfo::rate_gbits), else kDefaultNicGbits (docs/topology.md, "Network").
struct NetworkPort {
  std::string nic;     // "mlx5_0"; empty for a port assumed or counted by fabric.nics_per_node
  double gbits = 0.0;  // line rate, one way
  std::string from;    // "admin config", "sysfs: mlx5_0 port 1", "default"
};
struct NetworkEstimate {
  int nics = 0;
  double gbytes = 0.0;  // GB/s one way, all NICs together
  std::vector<NetworkPort> ports;
  std::string how;  // "1 active NIC: mlx5_0 400 Gb/s (sysfs: mlx5_0 port 1), capped by its PCIe link"
};
NetworkEstimate estimate_network(const NodeTopology& node, const FabricConfig& fabric);

// `nodes` identical copies of the priced node, joined by the fabric.
DeviceGraph build_device_graph(const NodeTopology& priced_node, int nodes, const AdminConfig& config);

}  // namespace layerplan
