// discover_node(): hwloc, then NVML on a live node, then the PCIe rules, then the job's GPUs.
#include "topology/discovery.h"

#include <cstdlib>
#include <string>
#include <utility>

#include "topology/hwloc_reader.h"
#include "topology/nvml_links.h"
#include "topology/pcie_rules.h"

namespace layerplan {

NodeTopology discover_node(const DiscoveryOptions& options) {
  std::string xml = options.topology_xml;
  if (xml.empty()) {
    const char* from_env = std::getenv("LAYERPLAN_TOPOLOGY_XML");
    if (from_env != nullptr) xml = from_env;
  }
  HwlocNode found = xml.empty() ? read_hwloc_live() : read_hwloc_xml(xml);
  NodeTopology node = std::move(found.topology);

  bool nvlink_known = found.nvlink_matrix;
  std::string why_unknown;
  if (!nvlink_known) {
    if (!xml.empty()) {
      why_unknown = "no NVLinkBandwidth matrix in the export; NVML is not queried for XML input";
    } else if (!options.use_nvml) {
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

  const std::vector<int> chosen =
      options.gpu_indices ? check_gpu_indices(node, *options.gpu_indices) : select_gpus(node, options.env);
  return restrict_gpus(node, chosen);
}

}  // namespace layerplan
