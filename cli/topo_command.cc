#include "cli/topo_command.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <map>

#include "cli/node_options.h"
#include "cli/text_format.h"
#include "common/safe_write.h"
#include "topology/discovery.h"
#include "topology/topology_device_graph.h"

namespace layerplan {

void add_topo_command(CLI::App& cmd, TopoCommandArgs& args) {
  cmd.add_option("--topology-xml", args.topology_xml,
                 "hwloc XML export of the node (default: $LAYERPLAN_TOPOLOGY_XML, else this machine)");
  cmd.add_option("--gpus", args.gpu_ids,
                 "Only these GPUs, as indices in PCI bus-id order, e.g. 0,2 (default: the job's GPUs from "
                 "SLURM_STEP_GPUS, SLURM_JOB_GPUS or CUDA_VISIBLE_DEVICES, else all)");
  cmd.add_option("--config", args.config,
                 "Admin TOML, or none for the built-in figures (default: $LAYERPLAN_CONFIG, else "
                 "/etc/slurm/layerplan.toml when present, as the Slurm plugin reads it)");
  cmd.add_option("--json", args.json_file, "Also write what is shown as JSON to this file");
  cmd.add_flag("--no-nvml", args.no_nvml, "Do not ask NVML for NVLink links (live discovery only)");
}

namespace {

double gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

// nvidia-smi topo -m style: NV<links>, NVS, PIX, PHB, SYS.
std::string short_path(const GpuLink& link) {
  switch (link.kind) {
    case PathKind::kSelf:
      return "X";
    case PathKind::kNvlink:
      return link.nvlinks > 0 ? "NV" + std::to_string(link.nvlinks) : "NV";
    case PathKind::kNvswitch:
      return "NVS";
    case PathKind::kPcieSwitch:
      return "PIX";
    case PathKind::kHostBridge:
      return "PHB";
    case PathKind::kCrossSocket:
      return "SYS";
  }
  return "?";
}

std::string memory_text(const GpuInfo& gpu) {
  return gpu.memory_bytes > 0 ? format("%.1f GiB", gib(gpu.memory_bytes)) : std::string("?");
}

// hwloc gives network devices (ib0, eth0) no port state: only OpenFabrics ones say.
const char* state_text(const NicInfo& nic) {
  if (nic.kind != "OpenFabrics") return "-";
  return nic.active ? "active" : "down";
}

void print_gpus(std::ostream& out, const NodeTopology& node) {
  out << node.gpu_count() << " NVIDIA GPU" << (node.gpu_count() == 1 ? "" : "s") << " (indices in PCI bus-id order)\n";
  if (node.gpu_count() > 0) {
    out << format("  %-3s %-13s %-28s %-10s %-9s %4s %6s %10s  %s\n", "#", "bus id", "model", "memory", "(from)",
                  "NUMA", "socket", "PCIe GB/s", "UUID");
  }
  for (int i = 0; i < node.gpu_count(); ++i) {
    const GpuInfo& gpu = node.gpus[static_cast<size_t>(i)];
    out << format("  %-3d %-13s %-28s %-10s %-9s %4d %6d %10.1f  %s\n", i, gpu.pci_bus_id.c_str(), gpu.model.c_str(),
                  memory_text(gpu).c_str(), source_name(gpu.memory_source), gpu.numa_node, gpu.package, gpu.pcie_gbytes,
                  gpu.uuid.empty() ? "-" : gpu.uuid.c_str());
  }
}

// A GPU x GPU table under `title`: cell(a, b) for every pair.
template <typename Cell>
void print_gpu_matrix(std::ostream& out, const NodeTopology& node, const std::string& title, Cell cell) {
  out << title << "\n     ";
  for (int b = 0; b < node.gpu_count(); ++b) out << format("%7d", b);
  out << "\n";
  for (int a = 0; a < node.gpu_count(); ++a) {
    out << format("  %-3d", a);
    for (int b = 0; b < node.gpu_count(); ++b) out << cell(a, b);
    out << "\n";
  }
}

// The bandwidth and path of every GPU pair, and where the figures came from.
void print_links(std::ostream& out, const NodeTopology& node) {
  print_gpu_matrix(out, node, "\nGPU to GPU, GB/s one way (as priced)", [&node](int a, int b) {
    return a == b ? format("%7s", "-") : format("%7.1f", node.link(a, b).gbytes);
  });
  print_gpu_matrix(out, node,
                   "\nPath (NV<n> NVLink with n links, NVS NVSwitch, PIX PCIe switch, PHB host bridge, SYS across "
                   "sockets)",
                   [&node](int a, int b) { return format("%7s", short_path(node.link(a, b)).c_str()); });
  std::map<std::string, int> sources;
  for (int a = 0; a < node.gpu_count(); ++a) {
    for (int b = 0; b < node.gpu_count(); ++b) {
      const GpuLink& link = node.link(a, b);
      if (a != b) ++sources[std::string(path_kind_name(link.kind)) + " from " + source_name(link.source)];
    }
  }
  out << "\nWhere the link figures came from (GPU pairs, both directions counted):\n";
  for (const auto& [what, count] : sources) out << "  " << what << ": " << count << "\n";
}

std::string rate_text(const NicInfo& nic) {
  return nic.rate_gbits > 0 ? format("%g Gb/s (%s)", nic.rate_gbits, nic.rate_from.c_str()) : std::string("-");
}

void print_nics(std::ostream& out, const NodeTopology& node) {
  out << "\nNetwork interfaces (state: a port ACTIVE; '-': hwloc gives no state; rate: from sysfs on a live node)\n";
  if (node.nics.empty()) out << "  none found\n";
  for (const NicInfo& nic : node.nics) {
    out << format("  %-12s %-12s %-7s %-13s NUMA %-3d PCIe %5.1f GB/s  %s  rate %s\n", nic.name.c_str(),
                  nic.kind.c_str(), state_text(nic), nic.pci_bus_id.empty() ? "-" : nic.pci_bus_id.c_str(),
                  nic.numa_node, nic.pcie_gbytes, nic.device.c_str(), rate_text(nic).c_str());
  }
}

void print_text(std::ostream& out, const NodeTopology& node, const NetworkEstimate& network,
                const AdminConfigChoice& config) {
  out << "node: " << node.origin << "\n" << admin_config_line(config) << "\n";
  print_gpus(out, node);
  if (node.gpu_count() > 1) print_links(out, node);
  if (!node.nvswitches.empty()) {
    out << "\n" << node.nvswitches.size() << " NVSwitch" << (node.nvswitches.size() == 1 ? "" : "es") << "\n";
  }
  print_nics(out, node);
  out << format("\nTo other nodes: %.1f GB/s one way (%s)\n", network.gbytes, network.how.c_str());
  if (!node.notes.empty()) {
    out << "\nNotes\n";
    for (const std::string& note : node.notes) out << "  " << note << "\n";
  }
}

nlohmann::json to_json(const NodeTopology& node, const NetworkEstimate& network, const AdminConfigChoice& config) {
  using nlohmann::json;
  json gpus = json::array();
  for (const GpuInfo& gpu : node.gpus) {
    gpus.push_back({{"pci_bus_id", gpu.pci_bus_id},
                    {"model", gpu.model},
                    {"model_source", source_name(gpu.model_source)},
                    {"memory_bytes", gpu.memory_bytes},
                    {"memory_source", source_name(gpu.memory_source)},
                    {"uuid", gpu.uuid},
                    {"pcie_gbytes", gpu.pcie_gbytes},
                    {"numa_node", gpu.numa_node},
                    {"package", gpu.package},
                    {"os_devices", gpu.os_devices}});
  }
  json links = json::array();
  for (int a = 0; a < node.gpu_count(); ++a) {
    for (int b = 0; b < node.gpu_count(); ++b) {
      if (a == b) continue;
      const GpuLink& l = node.link(a, b);
      links.push_back({{"from", a},
                       {"to", b},
                       {"path", path_kind_name(l.kind)},
                       {"gbytes", l.gbytes},
                       {"source", source_name(l.source)},
                       {"nvlinks", l.nvlinks}});
    }
  }
  json nics = json::array();
  for (const NicInfo& nic : node.nics) {
    nics.push_back({{"name", nic.name},
                    {"kind", nic.kind},
                    {"active", nic.active},
                    {"pci_bus_id", nic.pci_bus_id},
                    {"device", nic.device},
                    {"numa_node", nic.numa_node},
                    {"package", nic.package},
                    {"pcie_gbytes", nic.pcie_gbytes},
                    {"rate_gbits", nic.rate_gbits},
                    {"rate_from", nic.rate_from}});
  }
  json ports = json::array();
  for (const NetworkPort& p : network.ports) ports.push_back({{"nic", p.nic}, {"gbits", p.gbits}, {"from", p.from}});
  json switches = json::array();
  for (const NvSwitchInfo& s : node.nvswitches) switches.push_back({{"pci_bus_id", s.pci_bus_id}, {"name", s.name}});
  return {{"origin", node.origin},
          {"admin_config", {{"path", config.path}, {"why", config.why}}},
          {"gpus", gpus},
          {"links", links},
          {"nvswitches", switches},
          {"nics", nics},
          {"network", {{"nics", network.nics}, {"gbytes", network.gbytes}, {"ports", ports}, {"how", network.how}}},
          {"notes", node.notes}};
}

}  // namespace

int run_topo_command(const TopoCommandArgs& args) {
  const ChosenAdminConfig chosen = admin_config_from(args.config);
  const AdminConfig& config = chosen.config;
  DiscoveryOptions options;
  options.topology_xml = topology_xml_from(args.topology_xml, config);
  options.sysfs_root = sysfs_root_from_env();
  if (args.gpu_ids) options.gpu_indices = parse_gpu_ids(*args.gpu_ids, "--gpus");
  options.env = GpuEnvironment::from_process();
  options.use_nvml = !args.no_nvml;
  const NodeTopology found = discover_node(options);
  // An empty node is worth showing; pricing needs GPUs.
  const NodeTopology shown = found.gpu_count() > 0 ? price_links(found, config) : found;
  const NetworkEstimate network = estimate_network(shown, config.fabric);
  print_text(std::cout, shown, network, chosen.choice);
  if (args.json_file) {
    write_file_safely(*args.json_file, to_json(shown, network, chosen.choice).dump(2) + "\n", "--json");
    std::cout << "topology written to " << *args.json_file << "\n";
  }
  return 0;
}

}  // namespace layerplan
