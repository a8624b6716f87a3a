#include "topology/device_graph.h"

#include <cstdio>
#include <stdexcept>

#include "common/error.h"
#include "common/index.h"
#include "common/limits.h"

namespace layerplan {

DeviceGraph::DeviceGraph(int nodes, int gpus_per_node, Device device, std::vector<Link> intra, Link network)
    : nodes_(nodes),
      gpus_per_node_(gpus_per_node),
      device_(std::move(device)),
      intra_(std::move(intra)),
      network_(network) {
  if (nodes_ < 1 || gpus_per_node_ < 1) throw std::invalid_argument("a device graph needs devices");
  if (int64_t{nodes_} * gpus_per_node_ > kMaxDevices) {
    throw UsageError(std::to_string(nodes_) + " nodes x " + std::to_string(gpus_per_node_) +
                     " GPUs: expected at most " + std::to_string(kMaxDevices) + " GPUs in all");
  }
  if (intra_.size() != table_size(gpus_per_node_, gpus_per_node_)) {
    throw std::invalid_argument("intra-node link matrix must be gpus_per_node squared");
  }
}

const Link& DeviceGraph::intra_link(int a, int b) const {
  return intra_[flat_index(local_index(a), gpus_per_node_, local_index(b))];
}

std::string DeviceGraph::describe() const {
  char line[256];
  const Link& l = intra_.size() > 1 ? intra_[1] : intra_[0];
  std::snprintf(line, sizeof line,
                "%d node%s x %d %s (%.1f TFLOP/s, %.0f GB/s memory); intra-node %.0f GB/s, "
                "inter-node %.1f GB/s per node",
                nodes_, nodes_ == 1 ? "" : "s", gpus_per_node_, device_.model.c_str(), device_.peak_flops / 1e12,
                device_.memory_bandwidth / 1e9, l.bandwidth / 1e9, network_.bandwidth / 1e9);
  return line;
}

}  // namespace layerplan
