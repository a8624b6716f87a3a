#include "topology/admin_config_path.h"

#include <filesystem>
#include <system_error>

namespace layerplan {

AdminConfigChoice choose_admin_config(const std::optional<std::string>& flag, const std::string& env_value,
                                      const std::string& default_path) {
  if (flag) {
    if (*flag == kNoAdminConfig) return {"", "--config none"};
    return {*flag, "--config"};
  }
  if (!env_value.empty()) {
    if (env_value == kNoAdminConfig) return {"", "$LAYERPLAN_CONFIG=none"};
    return {env_value, "$LAYERPLAN_CONFIG"};
  }
  // Anything there is read, so that a directory or an unreadable file is named, not skipped.
  std::error_code error;
  const auto status = std::filesystem::symlink_status(default_path, error);
  if (!error && std::filesystem::exists(status)) return {default_path, "the default path"};
  return {"", "no " + default_path};
}

std::string admin_config_line(const AdminConfigChoice& choice) {
  if (choice.path.empty()) return "admin config: none (built-in defaults; " + choice.why + ")";
  return "admin config: " + choice.path + " (" + choice.why + ")";
}

}  // namespace layerplan
