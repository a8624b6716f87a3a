#include "topology/cluster_spec.h"

#include <toml++/toml.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "common/error.h"

namespace layerplan {

namespace {

std::string format_number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

void require_positive(double value, const char* name) {
  require(std::isfinite(value) && value > 0,
          std::string(name) + " = " + format_number(value) + ": expected a positive number");
}

void require_non_negative(double value, const char* name) {
  require(std::isfinite(value) && value >= 0,
          std::string(name) + " = " + format_number(value) + ": expected zero or more");
}

std::string where(const std::string& path, const toml::source_region& at) {
  return path + ":" + std::to_string(at.begin.line) + ":" + std::to_string(at.begin.column);
}

double read_number(const toml::node& node, const std::string& path, const std::string& key) {
  if (auto v = node.value<double>(); v && (node.is_integer() || node.is_floating_point())) return *v;
  throw UsageError(where(path, node.source()) + ": " + key + " must be a number");
}

int read_int(const toml::node& node, const std::string& path, const std::string& key) {
  const auto* v = node.as_integer();
  if (!v) throw UsageError(where(path, node.source()) + ": " + key + " must be an integer");
  const int64_t value = v->get();
  if (value < 0 || value > (1 << 20)) {
    throw UsageError(where(path, node.source()) + ": " + key + " = " + std::to_string(value) +
                     " is out of range");
  }
  return static_cast<int>(value);
}

std::string read_string(const toml::node& node, const std::string& path, const std::string& key) {
  const auto* v = node.as_string();
  if (!v) throw UsageError(where(path, node.source()) + ": " + key + " must be a string");
  return v->get();
}

}  // namespace

void validate(const ClusterSpec& spec) {
  require(spec.nodes >= 1, "nodes = " + std::to_string(spec.nodes) + ": expected 1 or more");
  require(spec.gpus_per_node >= 1,
          "gpus per node = " + std::to_string(spec.gpus_per_node) + ": expected 1 or more");
  find_gpu_model(spec.gpu);
  if (spec.intra_bandwidth_gbytes) require_positive(*spec.intra_bandwidth_gbytes, "intra-node bandwidth");
  require_non_negative(spec.intra_latency_us, "intra-node latency");
  require_positive(spec.inter_bandwidth_gbits, "inter-node bandwidth");
  require_non_negative(spec.inter_latency_us, "inter-node latency");
  require(spec.nics_per_node >= 1,
          "nics per node = " + std::to_string(spec.nics_per_node) + ": expected 1 or more");
  require(spec.compute_efficiency > 0 && spec.compute_efficiency <= 1,
          "compute efficiency = " + format_number(spec.compute_efficiency) +
              ": expected a fraction in (0, 1]");
  require_non_negative(spec.kernel_overhead_us, "kernel overhead");
}

ClusterSpec load_cluster_file(const std::string& path, ClusterSpec spec) {
  std::ifstream file(path);
  require(file.good(), "cannot read cluster file '" + path + "'");
  toml::table root;
  try {
    root = toml::parse(file, path);
  } catch (const toml::parse_error& err) {
    throw UsageError(where(path, err.source()) + ": " + std::string(err.description()));
  }
  for (const auto& [key, node] : root) {
    if (key.str() != "cluster") {
      throw UsageError(where(path, node.source()) + ": unknown table or key '" +
                       std::string(key.str()) + "' (expected [cluster])");
    }
  }
  const toml::table* cluster = root["cluster"].as_table();
  require(cluster != nullptr, path + ": no [cluster] table");
  for (const auto& [k, node] : *cluster) {
    const std::string key(k.str());
    // Each value is checked where it stands, so the message names its line and column.
    auto at = [&](auto&& read) {
      try {
        read();
        validate(spec);
      } catch (const UsageError& err) {
        const std::string text = err.what();
        if (text.rfind(path + ":", 0) == 0) throw;
        throw UsageError(where(path, node.source()) + ": cluster." + key + ": " + text);
      }
    };
    if (key == "nodes") at([&] { spec.nodes = read_int(node, path, key); });
    else if (key == "gpus_per_node") at([&] { spec.gpus_per_node = read_int(node, path, key); });
    else if (key == "gpu") at([&] { spec.gpu = read_string(node, path, key); });
    else if (key == "precision") at([&] { spec.precision = parse_precision(read_string(node, path, key)); });
    else if (key == "intra_node_bandwidth_gbytes") at([&] { spec.intra_bandwidth_gbytes = read_number(node, path, key); });
    else if (key == "intra_node_latency_us") at([&] { spec.intra_latency_us = read_number(node, path, key); });
    else if (key == "inter_node_bandwidth_gbits") at([&] { spec.inter_bandwidth_gbits = read_number(node, path, key); });
    else if (key == "inter_node_latency_us") at([&] { spec.inter_latency_us = read_number(node, path, key); });
    else if (key == "nics_per_node") at([&] { spec.nics_per_node = read_int(node, path, key); });
    else if (key == "compute_efficiency") at([&] { spec.compute_efficiency = read_number(node, path, key); });
    else if (key == "kernel_overhead_us") at([&] { spec.kernel_overhead_us = read_number(node, path, key); });
    else throw UsageError(where(path, node.source()) + ": unknown key 'cluster." + key + "'");
  }
  return spec;
}

DeviceGraph build_device_graph(const ClusterSpec& spec) {
  validate(spec);
  const GpuModel& model = find_gpu_model(spec.gpu);
  Device device;
  device.model = model.full_name;
  device.peak_flops = model.flops(spec.precision);
  device.memory_bandwidth = model.memory_bandwidth;
  device.memory_bytes = model.memory_bytes;
  device.compute_efficiency = spec.compute_efficiency;
  device.kernel_overhead_s = spec.kernel_overhead_us * 1e-6;
  device.bytes_per_element = spec.precision == Precision::kBf16 ? 2 : 4;
  const Link intra{spec.intra_bandwidth_gbytes.value_or(model.nvlink_pair_bandwidth / 1e9) * 1e9,
                   spec.intra_latency_us * 1e-6};
  const Link network{spec.inter_bandwidth_gbits / 8.0 * 1e9 * spec.nics_per_node,
                     spec.inter_latency_us * 1e-6};
  const auto g = static_cast<size_t>(spec.gpus_per_node);
  return DeviceGraph(spec.nodes, spec.gpus_per_node, device, std::vector<Link>(g * g, intra), network);
}

}  // namespace layerplan
