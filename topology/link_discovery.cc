#include "topology/link_discovery.h"

#include <string>
#include <utility>

#include "topology/nvml_links.h"
#include "topology/pcie_rules.h"

namespace layerplan {

NodeTopology find_links(HwlocNode found, bool from_xml, bool use_nvml) {
  NodeTopology node = std::move(found.topology);
  bool nvlink_known = found.nvlink_matrix;
  std::string why_unknown;
  if (!nvlink_known) {
    if (from_xml) {
      why_unknown = "no NVLinkBandwidth matrix in the export; NVML is not queried for XML input";
    } else if (!use_nvml) {
      why_unknown = "no NVLinkBandwidth matrix; NVML not queried (disabled)";
    } else if (node.gpu_count() > 0) {
      const NvmlReport nvml = add_nvml_links(node);
      if (nvml.loaded) {
        nvlink_known = true;
        if (nvml.nvlinks == 0 && node.gpu_count() > 1) {
          node.notes.push_back("NVML reports no active NVLink: PCIe rules used");
        }
      } else {
        why_unknown = "no NVLinkBandwidth matrix; NVML not available: " + nvml.why;
      }
    }
  }
  complete_links(node, nvlink_known, why_unknown);
  return node;
}

}  // namespace layerplan
