#pragma once
// Which admin config a command reads: the one the Slurm plugin reads, unless the user says
// otherwise (docs/admin-config.md, "Which file is read").
#include <optional>
#include <string>

namespace layerplan {

// Where the admin config lives: the path the plugstack.conf example passes the plugin
// (`config=`), where the Debian package and `cmake --install` put etc/layerplan.toml.
inline constexpr const char* kDefaultAdminConfigPath = "/etc/slurm/layerplan.toml";

// The word --config and $LAYERPLAN_CONFIG take for "no file: the built-in defaults".
inline constexpr const char* kNoAdminConfig = "none";

struct AdminConfigChoice {
  std::string path;  // the file to read; empty: none, the built-in defaults
  std::string why;   // "--config", "$LAYERPLAN_CONFIG", "the default path", "--config none", ...
};

// `flag` (--config), else `env_value` ($LAYERPLAN_CONFIG, "" when unset or empty), else
// `default_path` when something is there, else none. "none" in the flag or the variable
// means none. A file named none is ./none.
AdminConfigChoice choose_admin_config(const std::optional<std::string>& flag, const std::string& env_value,
                                      const std::string& default_path = kDefaultAdminConfigPath);

// What the commands print: "admin config: /etc/slurm/layerplan.toml (the default path)" or
// "admin config: none (built-in defaults; --config none)".
std::string admin_config_line(const AdminConfigChoice& choice);

}  // namespace layerplan
