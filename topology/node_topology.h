#pragma once
// What one node holds, as discovered: its NVIDIA GPUs, NVSwitches and network interfaces,
// and how every pair of GPUs is connected. It is filled from hwloc (live or an XML
// export) and, on a live node, from NVML; nothing downstream calls hwloc. Every figure
// records where it came from, so `layerplan topo` can say so.
#include <cstdint>
#include <string>
#include <vector>

#include "common/index.h"

namespace layerplan {

// Where a discovered value came from.
enum class Source {
  kNone,         // unknown
  kHwloc,        // an hwloc object or attribute (PCI device, OS device info)
  kHwlocMatrix,  // hwloc's NVLinkBandwidth distances matrix
  kNvml,         // NVML, queried at run time
  kPcieRule,     // derived from the PCIe tree (docs/topology.md gives the rules)
  kCatalog,      // the GPU table (built-in or the admin's TOML)
  kConfig,       // an override in the admin's TOML
};
const char* source_name(Source source);  // "hwloc", "hwloc matrix", "NVML", ...

// How two GPUs of a node reach each other, best first (NCCL's path types).
enum class PathKind {
  kSelf,         // the same GPU
  kNvlink,       // direct NVLink
  kNvswitch,     // NVLink through NVSwitches
  kPcieSwitch,   // PCIe, below a common PCIe switch (NCCL's PIX/PXB)
  kHostBridge,   // PCIe through the CPU's root complex of one socket (PHB)
  kCrossSocket,  // PCIe across the link between sockets (SYS)
};
const char* path_kind_name(PathKind kind);  // "NVLink", "NVSwitch", "PCIe switch", ...

struct GpuInfo {
  std::string pci_bus_id;  // "0000:07:00.0"; GPUs are ordered by it (CUDA_DEVICE_ORDER=PCI_BUS_ID)
  std::string model;       // "Tesla V100-SXM3-32GB-H", or the PCI device name where no OS device says
  Source model_source = Source::kNone;
  double memory_bytes = 0.0;  // 0 when unknown
  Source memory_source = Source::kNone;
  std::string uuid;                     // "GPU-…" where an NVML device gives it, else empty
  double pcie_gbytes = 0.0;             // the GPU's own PCIe link, GB/s (0 = unknown)
  int numa_node = -1;                   // OS index of the nearest NUMA node, -1 when unknown
  int package = -1;                     // OS index of the socket, -1 when unknown
  std::vector<std::string> os_devices;  // "cuda0", "nvml0", "opencl0d0" found below the GPU
  // hwloc's global indices of the PCIe bridges from the host bridge down to the GPU;
  // the PCIe rules compare these paths.
  std::vector<uint64_t> pcie_path;
};

struct NvSwitchInfo {
  std::string pci_bus_id;
  std::string name;  // PCI device name, e.g. "GA100 [A100 NVSwitch]"
};

// An InfiniBand, RoCE, EFA or Ethernet interface.
struct NicInfo {
  std::string name;        // "mlx5_0", "rdmap197s0", "ib0"
  std::string kind;        // "OpenFabrics" or "network"
  std::string pci_bus_id;  // empty when not on PCI
  std::string device;      // PCI device name, e.g. "MT28908 Family [ConnectX-6]"
  bool active = false;     // a port is ACTIVE (Port<N>State = 4); network devices: always false
                           // (hwloc reports no state for them; they are listed, not counted)
  int numa_node = -1;
  int package = -1;
  double pcie_gbytes = 0.0;  // the NIC's PCIe link, GB/s (0 = unknown); caps its rate
  // The port's line rate, Gb/s one way, read from sysfs on a live node (topology/nic_rates.h);
  // 0 = unknown (XML input, or sysfs said nothing usable).
  double rate_gbits = 0.0;
  std::string rate_from;  // where: "sysfs: mlx5_0 port 1", "sysfs: eth0 speed"; empty when unknown
};

// The link between two GPUs of the node, one way.
struct GpuLink {
  PathKind kind = PathKind::kCrossSocket;
  double gbytes = 0.0;  // GB/s one way
  Source source = Source::kNone;
  int nvlinks = 0;  // NVLink links counted, where known
};

struct NodeTopology {
  std::string origin;         // "hwloc XML FILE" or "this machine (hwloc live)"
  std::vector<GpuInfo> gpus;  // in PCI bus-id order
  std::vector<NvSwitchInfo> nvswitches;
  std::vector<NicInfo> nics;
  // gpus.size()² links, row-major; the diagonal is kSelf.
  std::vector<GpuLink> links;
  // Things the user should know about how the links were found, e.g. "no NVLink
  // information (no NVLinkBandwidth matrix, NVML not loaded): PCIe rules used".
  std::vector<std::string> notes;

  int gpu_count() const { return static_cast<int>(gpus.size()); }
  const GpuLink& link(int a, int b) const { return links[flat_index(a, gpu_count(), b)]; }
  GpuLink& link(int a, int b) { return links[flat_index(a, gpu_count(), b)]; }
};

// The same node with only the GPUs at `indices` (positions in `gpus`, in the order
// given); NICs, switches, notes and the links between kept GPUs stay. Throws
// std::out_of_range for a position outside `gpus` (select_gpus() returns valid ones).
NodeTopology restrict_gpus(const NodeTopology& topology, const std::vector<int>& indices);

}  // namespace layerplan
