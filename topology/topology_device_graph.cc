#include "topology/topology_device_graph.h"

#include <algorithm>

#include "common/error.h"
#include "common/index.h"
#include "topology/pcie_rules.h"
#include "topology/toml_fields.h"

namespace layerplan {

namespace {

constexpr double kGiga = 1e9;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// NCCL takes a PCIe link of unknown speed to be Gen3 x16.
constexpr double kUnknownPcieGbytes = 15.75;

// A PCIe path's one-way GB/s for GPU copies: the wire rate times the efficiency, capped by
// the sockets' link when the path crosses it.
double pcie_gbytes(PathKind kind, double raw_gbytes, const NodeLinkConfig& cfg) {
  const double wire = raw_gbytes > 0 ? raw_gbytes : kUnknownPcieGbytes;
  double effective = wire * cfg.pcie_efficiency;
  if (kind == PathKind::kCrossSocket) effective = std::min(effective, cfg.inter_socket_gbytes);
  return effective;
}

std::string format_gbits(double gbits) { return format_number(gbits) + " Gb/s"; }

// The GPU's memory: the admin's override, else what discovery found, else the GPU table's.
void price_memory(const GpuModel& figures, const AdminConfig& config, GpuInfo& gpu) {
  if (config.overrides.gpu_memory_gib) {
    gpu.memory_bytes = *config.overrides.gpu_memory_gib * kGiB;
    gpu.memory_source = Source::kConfig;
  } else if (gpu.memory_bytes <= 0) {
    gpu.memory_bytes = figures.memory_bytes;
    gpu.memory_source = Source::kCatalog;
  }
}

// The one-way rate of the link from GPU `from` to GPU `to`.
void price_link(const GpuInfo& from, const GpuInfo& to, const GpuModel& figures, const AdminConfig& config,
                GpuLink& link) {
  if (config.overrides.nvlink_gbytes) {
    link = GpuLink{PathKind::kNvlink, *config.overrides.nvlink_gbytes, Source::kConfig, link.nvlinks};
    return;
  }
  if (link.kind != PathKind::kNvlink && link.kind != PathKind::kNvswitch) {
    link.gbytes = pcie_gbytes(link.kind, link.gbytes, config.node);
    link.source = Source::kPcieRule;
    return;
  }
  if (link.gbytes > 0) return;  // as hwloc's matrix or NVML gave it
  // NVSwitches seen on PCI, no figure: the GPU table's per-pair NVLink rate.
  if (figures.nvlink_pair_bandwidth > 0) {
    link.gbytes = figures.nvlink_pair_bandwidth / kGiga;
    link.source = Source::kCatalog;
  } else {  // a table entry without NVLink: price the pair as PCIe through the host
    const double raw = pcie_pair_gbytes(from, to);
    link = GpuLink{PathKind::kHostBridge, pcie_gbytes(PathKind::kHostBridge, raw, config.node), Source::kPcieRule, 0};
  }
}

// A port's rate and where it came from: the admin's, else the NIC's sysfs rate, else the default.
NetworkPort port_of(const NicInfo* nic, const FabricConfig& fabric) {
  const std::string name = nic ? nic->name : "";
  if (fabric.nic_gbits) return NetworkPort{name, *fabric.nic_gbits, "admin config"};
  if (nic && nic->rate_gbits > 0) return NetworkPort{name, nic->rate_gbits, nic->rate_from};
  return NetworkPort{name, kDefaultNicGbits, "default"};
}

// The fastest Ethernet interface whose speed sysfs gave; nullptr when none did.
const NicInfo* fastest_ethernet(const NodeTopology& node) {
  const NicInfo* best = nullptr;
  for (const NicInfo& nic : node.nics) {
    if (nic.kind == "network" && nic.rate_gbits > 0 && (!best || nic.rate_gbits > best->rate_gbits)) best = &nic;
  }
  return best;
}

// "2 active NICs x 100 Gb/s (default)" when every port has one rate from one source that is
// not a NIC's own, else each NIC with its rate and source.
std::string active_ports_text(const std::vector<NetworkPort>& ports) {
  const NetworkPort& first = ports.front();
  const bool same = std::all_of(ports.begin(), ports.end(), [&first](const NetworkPort& p) {
    return p.gbits == first.gbits && p.from == first.from && p.from.rfind("sysfs", 0) != 0;
  });
  std::string text = std::to_string(ports.size()) + " active NIC" + (ports.size() == 1 ? "" : "s");
  if (same) return text + " x " + format_gbits(first.gbits) + " (" + first.from + ")";
  for (size_t i = 0; i < ports.size(); ++i) {
    text += (i == 0 ? ": " : ", ") + ports[i].nic + " " + format_gbits(ports[i].gbits) + " (" + ports[i].from + ")";
  }
  return text;
}

}  // namespace

NodeTopology price_links(const NodeTopology& node, const AdminConfig& config) {
  require(node.gpu_count() > 0, "no NVIDIA GPU in " + node.origin + ": nothing to plan for");
  const GpuModel figures = figures_for_gpu(config, node.gpus[0].model);
  for (const GpuInfo& gpu : node.gpus) {
    const GpuModel other = figures_for_gpu(config, gpu.model);
    require(other.name == figures.name, "the node mixes GPU models ('" + node.gpus[0].model + "' at " +
                                            node.gpus[0].pci_bus_id + ", '" + gpu.model + "' at " + gpu.pci_bus_id +
                                            "): expected one model per node");
  }
  NodeTopology priced = node;
  for (GpuInfo& gpu : priced.gpus) price_memory(figures, config, gpu);
  const int g = priced.gpu_count();
  for (int a = 0; a < g; ++a) {
    for (int b = 0; b < g; ++b) {
      if (a != b)
        price_link(node.gpus[static_cast<size_t>(a)], node.gpus[static_cast<size_t>(b)], figures, config,
                   priced.link(a, b));
    }
  }
  return priced;
}

NetworkEstimate estimate_network(const NodeTopology& node, const FabricConfig& fabric) {
  std::vector<const NicInfo*> active;
  for (const NicInfo& nic : node.nics) {
    if (nic.kind == "OpenFabrics" && nic.active) active.push_back(&nic);
  }
  const NicInfo* ethernet = fastest_ethernet(node);
  NetworkEstimate out;
  if (fabric.nics_per_node > 0) {
    const NetworkPort port = port_of(!active.empty() ? active.front() : ethernet, fabric);
    out.nics = fabric.nics_per_node;
    out.gbytes = port.gbits / 8.0 * out.nics;
    out.ports.assign(static_cast<size_t>(out.nics), NetworkPort{"", port.gbits, port.from});
    out.how =
        std::to_string(out.nics) + " x " + format_gbits(port.gbits) + " (" + port.from + ") (fabric.nics_per_node)";
    return out;
  }
  if (active.empty()) {
    const NetworkPort port = port_of(ethernet, fabric);
    out.nics = 1;
    out.gbytes = port.gbits / 8.0;
    out.ports = {port};
    out.how = "no active InfiniBand/RoCE/EFA interface found: 1 x " + format_gbits(port.gbits) + " (" + port.from +
              ")" + (ethernet ? ", the fastest Ethernet interface" : " assumed");
    return out;
  }
  for (const NicInfo* nic : active) {
    const NetworkPort port = port_of(nic, fabric);
    // A port cannot send faster than the NIC's PCIe link.
    out.gbytes += nic->pcie_gbytes > 0 ? std::min(port.gbits / 8.0, nic->pcie_gbytes) : port.gbits / 8.0;
    out.ports.push_back(port);
  }
  out.nics = static_cast<int>(out.ports.size());
  out.how =
      active_ports_text(out.ports) + (out.nics == 1 ? ", capped by its PCIe link" : ", capped by each NIC's PCIe link");
  return out;
}

DeviceGraph build_device_graph(const NodeTopology& priced_node, int nodes, const AdminConfig& config) {
  require(priced_node.gpu_count() > 0, "no NVIDIA GPU in " + priced_node.origin + ": nothing to plan for");
  require(nodes >= 1, "nodes = " + std::to_string(nodes) + ": expected 1 or more");
  const GpuModel figures = figures_for_gpu(config, priced_node.gpus[0].model);
  Device device;
  device.model = priced_node.gpus[0].model;
  device.peak_flops = figures.flops(config.node.precision);
  device.memory_bandwidth = figures.memory_bandwidth;
  device.memory_bytes = priced_node.gpus[0].memory_bytes > 0 ? priced_node.gpus[0].memory_bytes : figures.memory_bytes;
  device.memory_reserve_bytes = config.node.gpu_memory_reserve_gib * kGiB;
  device.compute_efficiency = config.node.compute_efficiency;
  device.kernel_overhead_s = config.node.kernel_overhead_us * 1e-6;
  device.bytes_per_element = precision_element_bytes(config.node.precision);
  device.tensor_cores = figures.tensor_cores(config.node.precision);
  device.layout = config.node.layout;
  device.kernel_shape_model = true;
  device.memory_efficiency = kDefaultGpuMemoryEfficiency;
  const int g = priced_node.gpu_count();
  std::vector<Link> intra(static_cast<size_t>(g * g));
  for (int a = 0; a < g; ++a) {
    for (int b = 0; b < g; ++b) {
      const double gbytes = a == b ? 0.0 : priced_node.link(a, b).gbytes;
      intra[flat_index(a, g, b)] = Link{gbytes * kGiga, config.node.intra_latency_us * 1e-6};
    }
  }
  const NetworkEstimate network = estimate_network(priced_node, config.fabric);
  return DeviceGraph(
      nodes, g, device, std::move(intra),
      Link{network.gbytes * kGiga * fabric_bus_share(config.fabric.transport), config.fabric.latency_us * 1e-6});
}

}  // namespace layerplan
