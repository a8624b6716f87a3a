#include "cli/node_options.h"

#include <cstdlib>

#include "common/error.h"
#include "common/text.h"

namespace layerplan {

ChosenAdminConfig admin_config_from(const std::optional<std::string>& flag_value) {
  const char* env = std::getenv("LAYERPLAN_CONFIG");
  const AdminConfigChoice choice = choose_admin_config(flag_value, env ? env : "");
  return {choice.path.empty() ? AdminConfig{} : load_admin_config(choice.path), choice};
}

std::optional<std::string> sysfs_root_from_env() {
  if (const char* env = std::getenv("LAYERPLAN_SYSFS_ROOT"); env && *env) return std::string(env);
  return std::nullopt;
}

std::string topology_xml_from(const std::optional<std::string>& flag_value, const AdminConfig& config) {
  if (flag_value) return *flag_value;
  if (const char* env = std::getenv("LAYERPLAN_TOPOLOGY_XML"); env && *env) return "";
  return config.slurm.topology_xml;
}

std::vector<int> parse_gpu_ids(const std::string& text, const std::string& flag) {
  std::vector<int> ids;
  const std::string bad = flag + " '" + text + "': expected GPU indices separated by commas, e.g. 0,2";
  for (const std::string& item : split_commas(text)) {
    const bool digits = !item.empty() && item.size() < 6 && item.find_first_not_of("0123456789") == std::string::npos;
    require(digits, bad);
    ids.push_back(std::stoi(item));
  }
  return ids;
}

}  // namespace layerplan
