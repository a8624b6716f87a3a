#include "spank_plugin/plugstack_args.h"

#include <cstdlib>

#include "common/error.h"

namespace layerplan::spank {

PlugstackArgs parse_plugstack_args(int argc, const char* const* argv) {
  PlugstackArgs args;
  SlurmDefaults scratch;  // checks each override's key and syntax once, here
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i] ? argv[i] : "";
    const size_t eq = arg.find('=');
    require(eq != std::string::npos && eq > 0,
            "plugstack.conf argument '" + arg + "': expected key=value (config=PATH or a [slurm] key)");
    const std::string key = arg.substr(0, eq);
    const std::string value = arg.substr(eq + 1);
    if (key == "config") {
      require(!value.empty(), "plugstack.conf argument 'config=': expected the path of the admin TOML");
      args.config_path = value;
      continue;
    }
    if (key == "planning_memory_mb") {
      char* end = nullptr;
      const unsigned long long mb = std::strtoull(value.c_str(), &end, 10);
      require(!value.empty() && value[0] != '-' && *end == '\0' && mb >= 256 && mb <= (1ULL << 30),
              "plugstack.conf argument '" + arg + "': expected a whole number of MiB from 256 to 1073741824");
      args.planning_memory_mb = static_cast<size_t>(mb);
      continue;
    }
    if (key == "planning_margin_s") {
      char* end = nullptr;
      const double margin = std::strtod(value.c_str(), &end);
      require(!value.empty() && *end == '\0' && margin >= 1.0 && margin <= 3600.0,
              "plugstack.conf argument '" + arg + "': expected a number of seconds from 1 to 3600");
      args.planning_margin_s = margin;
      continue;
    }
    if (key == "plan_once") {
      require(value == "auto" || value == "off", "plugstack.conf argument '" + arg +
                                                     "': expected auto (plan once where the nodes share the plan " +
                                                     "folder) or off (every node plans)");
      args.plan_once = value == "auto";
      continue;
    }
    try {
      set_slurm_key(scratch, key, value);
    } catch (const UsageError& e) {
      throw UsageError("plugstack.conf argument '" + arg + "': " + e.what());
    }
    args.overrides.emplace_back(key, value);
  }
  return args;
}

AdminConfig load_plugin_config(const PlugstackArgs& args) {
  AdminConfig config = args.config_path.empty() ? AdminConfig{} : load_admin_config(args.config_path);
  for (const auto& [key, value] : args.overrides) set_slurm_key(config.slurm, key, value);
  if (!args.overrides.empty()) {
    try {
      validate(config.slurm);
    } catch (const UsageError& e) {
      throw UsageError(std::string("plugstack.conf arguments with ") +
                       (args.config_path.empty() ? "the built-in defaults" : "'" + args.config_path + "'") + ": " +
                       e.what());
    }
  }
  return config;
}

}  // namespace layerplan::spank
