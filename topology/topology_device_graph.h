#pragma once
// From a discovered node to what the planner prices: each GPU pair's one-way bandwidth
// and latency (NVLink figures as found, NVSwitch boards without a matrix from the GPU
// table, PCIe paths by the rules of docs/topology.md), the GPU's figures from the GPU
// table, and the network from the admin's fabric.
#include <string>

#include "topology/admin_config.h"
#include "topology/device_graph.h"
#include "topology/node_topology.h"

namespace layerplan {

// The node with every link priced: `gbytes` and `source` final, overrides applied.
// Throws UsageError when the GPUs are of different models or have no figures.
NodeTopology price_links(const NodeTopology& node, const AdminConfig& config);

// What one node can send to the others: `fabric.nics_per_node` ports when the admin says,
// else every active InfiniBand/RoCE/EFA interface (each capped by its PCIe link), else
// one port; each port at `fabric.nic_gbits`.
struct NetworkEstimate {
  int nics = 0;
  double gbytes = 0.0;  // GB/s one way, all NICs together
  std::string how;      // "4 active NICs x 200 Gb/s (fabric.nic_gbits), ..."
};
NetworkEstimate estimate_network(const NodeTopology& node, const FabricConfig& fabric);

// `nodes` identical copies of the priced node, joined by the fabric.
DeviceGraph build_device_graph(const NodeTopology& priced_node, int nodes, const AdminConfig& config);

}  // namespace layerplan
