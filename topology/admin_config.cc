#include "topology/admin_config.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/error.h"
#include "common/input_file.h"
#include "common/text.h"
#include "topology/toml_fields.h"

namespace layerplan {

namespace {

constexpr double kTera = 1e12;
constexpr double kGiga = 1e9;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

const toml::table& as_table(const toml::node& node, const std::string& path, const std::string& name) {
  const toml::table* table = node.as_table();
  if (!table) throw UsageError(toml_position(path, node.source()) + ": " + name + " must be a table ([" + name + "])");
  return *table;
}

[[noreturn]] void unknown_key(const toml::node& node, const std::string& path, const std::string& key) {
  throw UsageError(toml_position(path, node.source()) + ": unknown key '" + key + "'");
}

GpuFigures read_gpu_entry(const toml::table& entry, const std::string& path, int index) {
  GpuFigures gpu;
  const std::string where = "gpu[" + std::to_string(index) + "]";
  bool has_fp32 = false, has_memory_bw = false, has_memory = false;
  for (const auto& entry_pair : entry) {
    const toml::key& k = entry_pair.first;
    const toml::node& node = entry_pair.second;
    const std::string key(k.str());
    const std::string qualified = where + "." + key;
    at_position(node, path, qualified, [&] {
      if (key == "name")
        gpu.model.name = ascii_lower(read_string(node, path, key));
      else if (key == "match") {
        gpu.match = node.is_string() ? std::vector<std::string>{read_string(node, path, key)}
                                     : read_string_array(node, path, key);
        for (const std::string& m : gpu.match) require(!m.empty(), "match entries must not be empty");
      } else if (key == "full_name")
        gpu.model.full_name = read_string(node, path, key);
      else if (key == "fp32_tflops") {
        gpu.model.fp32_flops = read_number(node, path, key) * kTera;
        require_positive(gpu.model.fp32_flops / kTera, key);
        has_fp32 = true;
      } else if (key == "tf32_tflops") {
        gpu.model.tf32_flops = read_number(node, path, key) * kTera;
        require_non_negative(gpu.model.tf32_flops / kTera, key);
      } else if (key == "bf16_tflops") {
        gpu.model.bf16_flops = read_number(node, path, key) * kTera;
        require_non_negative(gpu.model.bf16_flops / kTera, key);
      } else if (key == "fp16_tflops") {
        gpu.model.fp16_flops = read_number(node, path, key) * kTera;
        require_non_negative(gpu.model.fp16_flops / kTera, key);
      } else if (key == "memory_gbytes_per_s") {
        gpu.model.memory_bandwidth = read_bandwidth(node, path, key, RateUnit::kGbytes) * kGiga;
        require_positive(gpu.model.memory_bandwidth / kGiga, key);
        has_memory_bw = true;
      } else if (key == "memory_gib") {
        gpu.model.memory_bytes = read_number(node, path, key) * kGiB;
        require_positive(gpu.model.memory_bytes / kGiB, key);
        has_memory = true;
      } else if (key == "nvlink_gbytes") {
        gpu.model.nvlink_pair_bandwidth = read_bandwidth(node, path, key, RateUnit::kGbytes) * kGiga;
        require_non_negative(gpu.model.nvlink_pair_bandwidth / kGiga, key);
        gpu.model.nvlink_note = "from " + path;
      } else {
        unknown_key(node, path, qualified);
      }
    });
  }
  const std::string at = toml_position(path, entry.source()) + ": " + where;
  require(!gpu.model.name.empty(), at + " needs a name (e.g. name = \"h100\")");
  require(!gpu.match.empty(), at + " (" + gpu.model.name + ") needs match, a part of the GPU's model name");
  require(has_fp32, at + " (" + gpu.model.name + ") needs fp32_tflops");
  require(has_memory_bw, at + " (" + gpu.model.name + ") needs memory_gbytes_per_s");
  require(has_memory, at + " (" + gpu.model.name + ") needs memory_gib");
  if (gpu.model.full_name.empty()) gpu.model.full_name = gpu.match.front();
  return gpu;
}

void read_fabric(const toml::table& table, const std::string& path, FabricConfig& fabric) {
  for (const auto& entry_pair : table) {
    const toml::key& k = entry_pair.first;
    const toml::node& node = entry_pair.second;
    const std::string key(k.str());
    at_position(node, path, "fabric." + key, [&] {
      if (key == "nic_gbits") {
        fabric.nic_gbits = read_bandwidth(node, path, key, RateUnit::kGbits);
        require_positive(*fabric.nic_gbits, key);
      } else if (key == "latency_us") {
        fabric.latency_us = read_number(node, path, key);
        require_non_negative(fabric.latency_us, key);
      } else if (key == "nics_per_node") {
        fabric.nics_per_node = read_int(node, path, key);
      } else if (key == "transport") {
        fabric.transport = parse_fabric(read_string(node, path, key));
      } else {
        unknown_key(node, path, "fabric." + key);
      }
    });
  }
}

void read_node(const toml::table& table, const std::string& path, NodeLinkConfig& cfg) {
  for (const auto& entry_pair : table) {
    const toml::key& k = entry_pair.first;
    const toml::node& node = entry_pair.second;
    const std::string key(k.str());
    at_position(node, path, "node." + key, [&] {
      if (key == "intra_latency_us") {
        cfg.intra_latency_us = read_number(node, path, key);
        require_non_negative(cfg.intra_latency_us, key);
      } else if (key == "pcie_efficiency") {
        cfg.pcie_efficiency = read_number(node, path, key);
        require_fraction(cfg.pcie_efficiency, key);
      } else if (key == "inter_socket_gbytes") {
        cfg.inter_socket_gbytes = read_bandwidth(node, path, key, RateUnit::kGbytes);
        require_positive(cfg.inter_socket_gbytes, key);
      } else if (key == "compute_efficiency") {
        cfg.compute_efficiency = read_number(node, path, key);
        require_fraction(cfg.compute_efficiency, key);
      } else if (key == "kernel_overhead_us") {
        cfg.kernel_overhead_us = read_number(node, path, key);
        require_non_negative(cfg.kernel_overhead_us, key);
      } else if (key == "precision") {
        cfg.precision = parse_precision(read_string(node, path, key));
      } else if (key == "layout") {
        cfg.layout = parse_tensor_layout(read_string(node, path, key));
      } else if (key == "gpu_memory_reserve_gib") {
        cfg.gpu_memory_reserve_gib = read_number(node, path, key);
        require_non_negative(cfg.gpu_memory_reserve_gib, key);
      } else if (key == "profile_db") {
        cfg.profile_db = read_string(node, path, key);
        require(cfg.profile_db.empty() || cfg.profile_db.front() == '/',
                "profile_db = \"" + clipped(cfg.profile_db) + "\": expected an absolute path, or \"\" for none");
      } else {
        unknown_key(node, path, "node." + key);
      }
    });
  }
}

void read_overrides(const toml::table& table, const std::string& path, TopologyOverrides& out) {
  for (const auto& entry_pair : table) {
    const toml::key& k = entry_pair.first;
    const toml::node& node = entry_pair.second;
    const std::string key(k.str());
    at_position(node, path, "overrides." + key, [&] {
      if (key == "gpu_model") {
        out.gpu_model = ascii_lower(read_string(node, path, key));
      } else if (key == "nvlink_gbytes") {
        out.nvlink_gbytes = read_bandwidth(node, path, key, RateUnit::kGbytes);
        require_positive(*out.nvlink_gbytes, key);
      } else if (key == "gpu_memory_gib") {
        out.gpu_memory_gib = read_number(node, path, key);
        require_positive(*out.gpu_memory_gib, key);
      } else {
        unknown_key(node, path, "overrides." + key);
      }
    });
  }
}

}  // namespace

const std::vector<std::string>& plugin_mode_names() {
  static const std::vector<std::string> names = {"auto", "layerwise", "data", "model", "owt", "off"};
  return names;
}

void require_plugin_mode(const std::string& mode, const std::string& name) {
  const auto& names = plugin_mode_names();
  if (std::find(names.begin(), names.end(), mode) != names.end()) return;
  throw UsageError(name + " '" + mode + "': expected auto, layerwise, data, model, owt or off");
}

void validate(const SlurmDefaults& slurm) {
  require_plugin_mode(slurm.default_mode, "default_mode");
  require(!slurm.allowed_modes.empty(), "allowed_modes is empty: expected at least one mode");
  for (const std::string& mode : slurm.allowed_modes) require_plugin_mode(mode, "allowed_modes entry");
  require(slurm.default_mode == "off" || std::find(slurm.allowed_modes.begin(), slurm.allowed_modes.end(),
                                                   slurm.default_mode) != slurm.allowed_modes.end(),
          "default_mode '" + slurm.default_mode + "' is not among allowed_modes");
  require(!slurm.default_model.empty(), "default_model is empty: expected a model name");
  if (slurm.default_batch) {
    require(*slurm.default_batch >= 1,
            "default_batch = " + std::to_string(*slurm.default_batch) + ": expected 1 or more");
  }
  require_positive(slurm.time_budget_s, "time_budget_s");
  require_min_gain(slurm.min_gain, "min_gain");
}

void require_min_gain(double value, const std::string& name) {
  std::ostringstream text;
  text << value;
  require(std::isfinite(value) && value >= 0,
          name + " = " + text.str() + ": expected a share of data parallelism's step of 0 or more, e.g. 0.03 for 3%");
}

double parse_min_gain(const std::string& text, const std::string& name) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  require(used == text.size() && !text.empty() && std::isfinite(value) && value >= 0,
          name + " '" + text + "': expected a share of data parallelism's step of 0 or more, e.g. 0.03 for 3%");
  return value;
}

void set_slurm_key(SlurmDefaults& slurm, const std::string& key, const std::string& value) {
  if (key == "default_mode")
    slurm.default_mode = value;
  else if (key == "default_model")
    slurm.default_model = value;
  else if (key == "plan_dir")
    slurm.plan_dir = value;
  else if (key == "topology_xml")
    slurm.topology_xml = value;
  else if (key == "min_gain")
    slurm.min_gain = parse_min_gain(value, key);
  else if (key == "allowed_modes" || key == "model_path") {
    std::vector<std::string> items;
    for (const std::string& item : split_commas(value)) {
      if (!item.empty()) items.push_back(item);
    }
    (key == "allowed_modes" ? slurm.allowed_modes : slurm.model_path) = items;
  } else if (key == "default_batch" || key == "time_budget_s") {
    size_t used = 0;
    double number = 0;
    try {
      number = std::stod(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    require(used == value.size() && !value.empty(), key + " '" + value + "': expected a number");
    if (key == "time_budget_s") {
      slurm.time_budget_s = number;
    } else {
      require(number == static_cast<double>(static_cast<long long>(number)),
              key + " '" + value + "': expected a whole number");
      slurm.default_batch = static_cast<long long>(number);
    }
  } else {
    throw UsageError("unknown key '" + key +
                     "': expected default_mode, allowed_modes, default_model, default_batch, model_path, "
                     "time_budget_s, min_gain, plan_dir or topology_xml");
  }
}

namespace {

void read_slurm(const toml::table& table, const std::string& path, SlurmDefaults& slurm) {
  for (const auto& entry_pair : table) {
    const toml::key& k = entry_pair.first;
    const toml::node& node = entry_pair.second;
    const std::string key(k.str());
    at_position(node, path, "slurm." + key, [&] {
      if (key == "allowed_modes" || key == "model_path") {
        (key == "allowed_modes" ? slurm.allowed_modes : slurm.model_path) = read_string_array(node, path, key);
      } else if (key == "default_batch") {
        slurm.default_batch = read_int(node, path, key);
      } else if (key == "time_budget_s") {
        slurm.time_budget_s = read_number(node, path, key);
      } else if (key == "min_gain") {
        slurm.min_gain = read_number(node, path, key);
      } else if (key == "default_mode" || key == "default_model" || key == "plan_dir" || key == "topology_xml") {
        set_slurm_key(slurm, key, read_string(node, path, key));
      } else {
        unknown_key(node, path, "slurm." + key);
      }
      validate(slurm);
    });
  }
}

AdminConfig admin_config_from_table(const toml::table& root, const std::string& path) {
  AdminConfig config;
  config.path = path;
  for (const auto& entry_pair : root) {
    const toml::key& k = entry_pair.first;
    const toml::node& node = entry_pair.second;
    const std::string key(k.str());
    if (key == "gpu") {
      const toml::array* entries = node.as_array();
      if (!entries) throw UsageError(toml_position(path, node.source()) + ": gpu must be an array of tables ([[gpu]])");
      int index = 0;
      for (const toml::node& entry : *entries) {
        config.gpus.push_back(read_gpu_entry(as_table(entry, path, "gpu"), path, index++));
      }
    } else if (key == "fabric") {
      read_fabric(as_table(node, path, key), path, config.fabric);
    } else if (key == "node") {
      read_node(as_table(node, path, key), path, config.node);
    } else if (key == "overrides") {
      read_overrides(as_table(node, path, key), path, config.overrides);
    } else if (key == "slurm") {
      read_slurm(as_table(node, path, key), path, config.slurm);
    } else {
      throw UsageError(toml_position(path, node.source()) + ": unknown table or key '" + key +
                       "' (expected [[gpu]], [fabric], [node], [overrides] or [slurm])");
    }
  }
  // Checked once every [[gpu]] entry is known, wherever [overrides] stands in the file.
  if (const toml::node* at = root["overrides"]["gpu_model"].node()) {
    at_position(*at, path, "overrides.gpu_model", [&] { find_figures_by_name(config, *config.overrides.gpu_model); });
  }
  return config;
}

}  // namespace

AdminConfig load_admin_config(const std::string& path) {
  return admin_config_from_toml(read_input_file(path, "admin config '" + path + "'", kMaxTextInputBytes), path);
}

AdminConfig admin_config_from_toml(const std::string& text, const std::string& path) {
  AdminConfig config = admin_config_from_table(parse_toml_text(text, path), path);
  config.text = text;
  return config;
}

const GpuModel& find_figures_by_name(const AdminConfig& config, const std::string& name) {
  const std::string key = ascii_lower(name);
  for (const GpuFigures& gpu : config.gpus) {
    if (gpu.model.name == key) return gpu.model;
  }
  std::string known;
  for (const GpuFigures& gpu : config.gpus) known += gpu.model.name + ", ";
  for (const GpuModel& m : gpu_catalog()) {
    if (m.name == key) return m;
    known += m.name + ", ";
  }
  throw UsageError("unknown GPU '" + name + "': expected one of " + known.substr(0, known.size() - 2));
}

GpuModel figures_for_gpu(const AdminConfig& config, const std::string& discovered_model) {
  if (config.overrides.gpu_model) return find_figures_by_name(config, *config.overrides.gpu_model);
  const std::string name = ascii_lower(discovered_model);
  for (const GpuFigures& gpu : config.gpus) {
    for (const std::string& part : gpu.match) {
      if (name.find(ascii_lower(part)) != std::string::npos) return gpu.model;
    }
  }
  for (const GpuModel& m : gpu_catalog()) {
    if (name.find(m.name) != std::string::npos) return m;
  }
  throw UsageError("no figures for GPU '" + discovered_model +
                   "': add a [[gpu]] entry whose match is part of that name to the admin config, or set "
                   "[overrides] gpu_model");
}

}  // namespace layerplan
