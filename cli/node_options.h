#pragma once
// What `layerplan topo` and `layerplan plan --topology-xml` share: the admin config named
// by a flag, $LAYERPLAN_CONFIG or the plugin's default path, the sysfs NIC rates are read
// from, and the GPU list flag.
#include <optional>
#include <string>
#include <vector>

#include "topology/admin_config.h"
#include "topology/admin_config_path.h"

namespace layerplan {

// The admin config choose_admin_config() picks from `flag_value` (--config), $LAYERPLAN_CONFIG
// and kDefaultAdminConfigPath, loaded (or the built-in defaults), with the choice, whose
// admin_config_line() the commands print. Throws UsageError naming the file it cannot read.
struct ChosenAdminConfig {
  AdminConfig config;
  AdminConfigChoice choice;
};
ChosenAdminConfig admin_config_from(const std::optional<std::string>& flag_value);

// The sysfs tree NIC rates are read from: $LAYERPLAN_SYSFS_ROOT when set and non-empty (also
// for XML input, for tests), else unset (discovery reads /sys on a live node only).
std::optional<std::string> sysfs_root_from_env();

// The hwloc XML to read: the flag, else "" when $LAYERPLAN_TOPOLOGY_XML is set (discovery
// reads it), else the admin config's slurm.topology_xml ("" = this machine).
std::string topology_xml_from(const std::optional<std::string>& flag_value, const AdminConfig& config);

// "0,2,3" → {0, 2, 3}; throws UsageError naming `flag` and the value otherwise.
std::vector<int> parse_gpu_ids(const std::string& text, const std::string& flag);

}  // namespace layerplan
