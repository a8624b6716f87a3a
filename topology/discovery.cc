// discover_node(): hwloc, then NVML and the PCIe rules (find_links), NIC rates from sysfs,
// then the job's GPUs.
#include "topology/discovery.h"

#include <cstdlib>
#include <string>
#include <utility>

#include "topology/hwloc_reader.h"
#include "topology/link_discovery.h"
#include "topology/nic_rates.h"

namespace layerplan {

NodeTopology discover_node(const DiscoveryOptions& options) {
  std::string xml = options.topology_xml;
  if (xml.empty()) {
    const char* from_env = std::getenv("LAYERPLAN_TOPOLOGY_XML");
    if (from_env != nullptr) xml = from_env;
  }
  const bool from_xml = !xml.empty();
  HwlocNode found = from_xml ? read_hwloc_xml(xml) : read_hwloc_live();
  NodeTopology node = find_links(std::move(found), from_xml, options.use_nvml);
  if (!from_xml || options.sysfs_root) add_sysfs_nic_rates(node, options.sysfs_root.value_or(kDefaultSysfsRoot));
  const std::vector<int> chosen =
      options.gpu_indices ? check_gpu_indices(node, *options.gpu_indices) : select_gpus(node, options.env);
  return restrict_gpus(node, chosen);
}

}  // namespace layerplan
