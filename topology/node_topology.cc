#include "topology/node_topology.h"

#include <stdexcept>
#include <string>

#include "common/index.h"

namespace layerplan {

const char* source_name(Source source) {
  switch (source) {
    case Source::kNone:
      return "unknown";
    case Source::kHwloc:
      return "hwloc";
    case Source::kHwlocMatrix:
      return "hwloc matrix";
    case Source::kNvml:
      return "NVML";
    case Source::kPcieRule:
      return "PCIe rule";
    case Source::kCatalog:
      return "GPU table";
    case Source::kConfig:
      return "config";
  }
  return "unknown";
}

const char* path_kind_name(PathKind kind) {
  switch (kind) {
    case PathKind::kSelf:
      return "self";
    case PathKind::kNvlink:
      return "NVLink";
    case PathKind::kNvswitch:
      return "NVSwitch";
    case PathKind::kPcieSwitch:
      return "PCIe switch";
    case PathKind::kHostBridge:
      return "PCIe host bridge";
    case PathKind::kCrossSocket:
      return "across sockets";
  }
  return "unknown";
}

NodeTopology restrict_gpus(const NodeTopology& topology, const std::vector<int>& indices) {
  const int n = topology.gpu_count();
  for (int i : indices) {
    if (i < 0 || i >= n) {
      throw std::out_of_range("restrict_gpus: GPU position " + std::to_string(i) + " outside 0.." +
                              std::to_string(n - 1));
    }
  }
  NodeTopology out;
  out.origin = topology.origin;
  out.nvswitches = topology.nvswitches;
  out.nics = topology.nics;
  out.notes = topology.notes;
  for (int i : indices) out.gpus.push_back(topology.gpus[static_cast<size_t>(i)]);
  const int k = static_cast<int>(indices.size());
  out.links.resize(table_size(k, k));
  for (int a = 0; a < k; ++a) {
    for (int b = 0; b < k; ++b) {
      out.link(a, b) = topology.link(indices[static_cast<size_t>(a)], indices[static_cast<size_t>(b)]);
    }
  }
  return out;
}

}  // namespace layerplan
