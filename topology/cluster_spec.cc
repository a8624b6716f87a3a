#include "topology/cluster_spec.h"

#include <cmath>
#include <utility>

#include "common/error.h"
#include "common/limits.h"
#include "topology/toml_fields.h"

namespace layerplan {

void validate(const ClusterSpec& spec) {
  require(spec.nodes >= 1, "nodes = " + std::to_string(spec.nodes) + ": expected 1 or more");
  require(spec.gpus_per_node >= 1, "gpus per node = " + std::to_string(spec.gpus_per_node) + ": expected 1 or more");
  require(int64_t{spec.nodes} * spec.gpus_per_node <= kMaxDevices,
          std::to_string(spec.nodes) + " nodes x " + std::to_string(spec.gpus_per_node) + " GPUs: expected at most " +
              std::to_string(kMaxDevices) + " GPUs in all");
  find_gpu_model(spec.gpu);
  if (spec.intra_bandwidth_gbytes) require_positive(*spec.intra_bandwidth_gbytes, "intra-node bandwidth");
  require_non_negative(spec.intra_latency_us, "intra-node latency");
  require_positive(spec.inter_bandwidth_gbits, "inter-node bandwidth");
  require_non_negative(spec.inter_latency_us, "inter-node latency");
  require(spec.nics_per_node >= 1, "nics per node = " + std::to_string(spec.nics_per_node) + ": expected 1 or more");
  require_fraction(spec.compute_efficiency, "compute efficiency");
  require_non_negative(spec.kernel_overhead_us, "kernel overhead");
  if (spec.gpu_memory_gib) require_positive(*spec.gpu_memory_gib, "GPU memory");
  require_non_negative(spec.gpu_memory_reserve_gib, "GPU memory reserve");
}

namespace {

ClusterSpec cluster_from_table(const toml::table& root, const std::string& path, ClusterSpec spec) {
  for (const auto& [key, node] : root) {
    if (key.str() != "cluster") {
      throw UsageError(toml_position(path, node.source()) + ": unknown table or key '" + std::string(key.str()) +
                       "' (expected [cluster])");
    }
  }
  const toml::table* cluster = root["cluster"].as_table();
  require(cluster != nullptr, path + ": no [cluster] table");
  for (const auto& entry_pair : *cluster) {
    const toml::key& k = entry_pair.first;
    const toml::node& node = entry_pair.second;
    const std::string key(k.str());
    // Each value is checked where it stands, so the message names its line and column.
    auto at = [&](auto&& read) {
      at_position(node, path, "cluster." + key, [&] {
        read();
        validate(spec);
      });
    };
    if (key == "nodes")
      at([&] { spec.nodes = read_int(node, path, key); });
    else if (key == "gpus_per_node")
      at([&] { spec.gpus_per_node = read_int(node, path, key); });
    else if (key == "gpu")
      at([&] { spec.gpu = read_string(node, path, key); });
    else if (key == "precision")
      at([&] { spec.precision = parse_precision(read_string(node, path, key)); });
    else if (key == "layout")
      at([&] { spec.layout = parse_tensor_layout(read_string(node, path, key)); });
    else if (key == "intra_node_bandwidth_gbytes")
      at([&] { spec.intra_bandwidth_gbytes = read_bandwidth(node, path, key, RateUnit::kGbytes); });
    else if (key == "intra_node_latency_us")
      at([&] { spec.intra_latency_us = read_number(node, path, key); });
    else if (key == "inter_node_bandwidth_gbits")
      at([&] { spec.inter_bandwidth_gbits = read_bandwidth(node, path, key, RateUnit::kGbits); });
    else if (key == "inter_node_latency_us")
      at([&] { spec.inter_latency_us = read_number(node, path, key); });
    else if (key == "fabric")
      at([&] { spec.fabric = parse_fabric(read_string(node, path, key)); });
    else if (key == "nics_per_node")
      at([&] { spec.nics_per_node = read_int(node, path, key); });
    else if (key == "compute_efficiency")
      at([&] { spec.compute_efficiency = read_number(node, path, key); });
    else if (key == "kernel_overhead_us")
      at([&] { spec.kernel_overhead_us = read_number(node, path, key); });
    else if (key == "kernel_shapes")
      at([&] { spec.kernel_shapes = read_bool(node, path, key); });
    else if (key == "gpu_memory_gib")
      at([&] { spec.gpu_memory_gib = read_number(node, path, key); });
    else if (key == "gpu_memory_reserve_gib")
      at([&] { spec.gpu_memory_reserve_gib = read_number(node, path, key); });
    else
      throw UsageError(toml_position(path, node.source()) + ": unknown key 'cluster." + key + "'");
  }
  return spec;
}

}  // namespace

ClusterSpec load_cluster_file(const std::string& path, ClusterSpec base) {
  return cluster_from_table(parse_toml_file(path, "cluster file"), path, std::move(base));
}

ClusterSpec cluster_from_toml(const std::string& text, const std::string& path, ClusterSpec base) {
  return cluster_from_table(parse_toml_text(text, path), path, std::move(base));
}

DeviceGraph build_device_graph(const ClusterSpec& spec) {
  validate(spec);
  const GpuModel& model = find_gpu_model(spec.gpu);
  Device device;
  device.model = model.full_name;
  device.peak_flops = model.flops(spec.precision);
  device.memory_bandwidth = model.memory_bandwidth;
  constexpr double kGiB = double(int64_t{1} << 30);
  device.memory_bytes = spec.gpu_memory_gib ? *spec.gpu_memory_gib * kGiB : model.memory_bytes;
  device.memory_reserve_bytes = spec.gpu_memory_reserve_gib * kGiB;
  device.compute_efficiency = spec.compute_efficiency;
  device.kernel_overhead_s = spec.kernel_overhead_us * 1e-6;
  device.bytes_per_element = precision_element_bytes(spec.precision);
  device.tensor_cores = model.tensor_cores(spec.precision);
  device.layout = spec.layout;
  device.kernel_shape_model = spec.kernel_shapes;
  device.memory_efficiency = spec.kernel_shapes ? kDefaultGpuMemoryEfficiency : 1.0;
  const Link intra{spec.intra_bandwidth_gbytes.value_or(model.nvlink_pair_bandwidth / 1e9) * 1e9,
                   spec.intra_latency_us * 1e-6};
  const Link network{spec.inter_bandwidth_gbits / 8.0 * 1e9 * spec.nics_per_node * fabric_bus_share(spec.fabric),
                     spec.inter_latency_us * 1e-6};
  const auto g = static_cast<size_t>(spec.gpus_per_node);
  return DeviceGraph(spec.nodes, spec.gpus_per_node, device, std::vector<Link>(g * g, intra), network);
}

}  // namespace layerplan
