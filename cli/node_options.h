#pragma once
// What `layerplan topo` and `layerplan plan --topology-xml` share: the admin config named
// by a flag or $LAYERPLAN_CONFIG, the GPU list flag, and writing files atomically.
#include <optional>
#include <string>
#include <vector>

#include "topology/admin_config.h"

namespace layerplan {

// The admin config from `flag_value`, else $LAYERPLAN_CONFIG, else the built-in defaults.
AdminConfig admin_config_from(const std::optional<std::string>& flag_value);

// The hwloc XML to read: the flag, else "" when $LAYERPLAN_TOPOLOGY_XML is set (discovery
// reads it), else the admin config's slurm.topology_xml ("" = this machine).
std::string topology_xml_from(const std::optional<std::string>& flag_value, const AdminConfig& config);

// "0,2,3" → {0, 2, 3}; throws UsageError naming `flag` and the value otherwise.
std::vector<int> parse_gpu_ids(const std::string& text, const std::string& flag);

}  // namespace layerplan
