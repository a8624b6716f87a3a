#pragma once
// hwloc -> NodeTopology: the only file of the project that includes hwloc. Reads an hwloc
// XML export or the live machine and returns what hwloc alone knows: the NVIDIA GPUs in
// PCI bus-id order, NVSwitches, NICs, and the GPU pairs that the NVLinkBandwidth matrix
// joins. Pairs the matrix does not cover are left with Source::kNone for
// complete_links() (topology/pcie_rules.h), which runs after NVML had its turn.
#include <string>

#include "topology/node_topology.h"

namespace layerplan {

struct HwlocNode {
  NodeTopology topology;
  bool nvlink_matrix = false;  // an NVLinkBandwidth matrix linked at least one GPU
};

// Reads an hwloc XML export (format 2.x or 1.x). Throws UsageError naming the file when
// it is missing or unreadable, not hwloc XML, malformed, or an hwloc 3 export (which hwloc
// 2.9 cannot import; `lstopo --of v2xml` on hwloc 3 writes a readable one).
HwlocNode read_hwloc_xml(const std::string& path);
// The same for an export's text; `path` names it in errors.
HwlocNode hwloc_from_xml_text(const std::string& text, const std::string& path);

// Discovers this machine through hwloc. Throws UsageError when hwloc fails.
HwlocNode read_hwloc_live();

}  // namespace layerplan
