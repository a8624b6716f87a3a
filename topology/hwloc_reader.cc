#include "topology/hwloc_reader.h"

#include <hwloc.h>
#include <strings.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "common/error.h"
#include "common/index.h"
#include "topology/hwloc_xml_file.h"
#include "topology/nvlink_counts.h"

namespace layerplan {

namespace {

constexpr unsigned kNvidiaVendor = 0x10de;
constexpr double kMegaPerGiga = 1000.0;
constexpr double kKiB = 1024.0;
// hwloc's matrix stores MB/s; NVLink 2-4 run at 25 GB/s per link and direction.
constexpr double kMbytesPerNvlink = 25000.0;

// Owns an hwloc topology; destroys it on every path.
class Topology {
 public:
  Topology() {
    if (hwloc_topology_init(&t_) != 0) throw UsageError("hwloc: cannot initialise a topology");
  }
  ~Topology() { hwloc_topology_destroy(t_); }
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;
  hwloc_topology_t get() const { return t_; }

 private:
  hwloc_topology_t t_ = nullptr;
};

// Owns the distance matrices hwloc_distances_get_by_name returned.
class Distances {
 public:
  Distances(hwloc_topology_t topology, const char* name) : topology_(topology) {
    unsigned count = 0;
    if (hwloc_distances_get_by_name(topology, name, &count, nullptr, 0) != 0 || count == 0) return;
    matrices_.resize(count, nullptr);
    unsigned got = count;
    if (hwloc_distances_get_by_name(topology, name, &got, matrices_.data(), 0) != 0) got = 0;
    matrices_.resize(std::min(got, count));
  }
  ~Distances() {
    for (hwloc_distances_s* m : matrices_) {
      if (m != nullptr) hwloc_distances_release(topology_, m);
    }
  }
  Distances(const Distances&) = delete;
  Distances& operator=(const Distances&) = delete;
  const std::vector<hwloc_distances_s*>& matrices() const { return matrices_; }

 private:
  hwloc_topology_t topology_;
  std::vector<hwloc_distances_s*> matrices_;
};

std::string info(hwloc_obj_t obj, const char* name) {
  const char* value = hwloc_obj_get_info_by_name(obj, name);
  return value != nullptr ? value : "";
}

bool starts_with(const char* text, const char* prefix) {
  return text != nullptr && std::strncmp(text, prefix, std::strlen(prefix)) == 0;
}

bool equals_ignoring_case(const char* a, const char* b) { return a != nullptr && strcasecmp(a, b) == 0; }

std::string bus_id(hwloc_obj_t pci) {
  char text[32];
  std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", static_cast<unsigned>(pci->attr->pcidev.domain),
                static_cast<unsigned>(pci->attr->pcidev.bus), static_cast<unsigned>(pci->attr->pcidev.dev),
                static_cast<unsigned>(pci->attr->pcidev.func));
  return text;
}

bool is_nvidia_gpu(hwloc_obj_t pci) {
  const auto& a = pci->attr->pcidev;
  return a.vendor_id == kNvidiaVendor && (a.class_id == 0x0302 || a.class_id == 0x0300);
}

// NVSwitch: tagged by hwloc's NVML backend, or (without NVML) recognised by class and name.
bool is_nvswitch(hwloc_obj_t pci) {
  if (equals_ignoring_case(pci->subtype, "NVSwitch")) return true;
  const auto& a = pci->attr->pcidev;
  return a.vendor_id == kNvidiaVendor && a.class_id == 0x0680 &&
         info(pci, "PCIDevice").find("NVSwitch") != std::string::npos;
}

// The kinds of GPU OS device, by subtype or (older exports) by name prefix.
enum class GpuOsDevice { kOther, kCuda, kNvml, kOpencl };

GpuOsDevice gpu_os_device_kind(hwloc_obj_t osdev) {
  if (equals_ignoring_case(osdev->subtype, "CUDA") || starts_with(osdev->name, "cuda")) return GpuOsDevice::kCuda;
  if (equals_ignoring_case(osdev->subtype, "NVML") || starts_with(osdev->name, "nvml")) return GpuOsDevice::kNvml;
  if (equals_ignoring_case(osdev->subtype, "OpenCL") || starts_with(osdev->name, "opencl")) {
    return GpuOsDevice::kOpencl;
  }
  return GpuOsDevice::kOther;  // DRM card*/renderD* and anything else
}

struct Locality {
  int numa_node = -1;
  int package = -1;
};

Locality locality_of(hwloc_topology_t topology, hwloc_obj_t obj) {
  Locality out;
  hwloc_obj_t anchor = hwloc_get_non_io_ancestor_obj(topology, obj);
  if (anchor == nullptr) return out;
  if (anchor->nodeset != nullptr) {
    const int first = hwloc_bitmap_first(anchor->nodeset);
    if (first >= 0) out.numa_node = first;
  }
  for (hwloc_obj_t up = anchor; up != nullptr; up = up->parent) {
    if (up->type == HWLOC_OBJ_PACKAGE) {
      out.package = static_cast<int>(up->os_index);
      break;
    }
  }
  return out;
}

// The GPU model names its OS devices report, by the library that reported them.
struct ReportedModels {
  std::string cuda, nvml, opencl;
};

// Memory from the CUDA OS device's attribute, if any.
void read_cuda_device(hwloc_obj_t child, GpuInfo& gpu) {
  const std::string kib = info(child, "CUDAGlobalMemorySize");
  if (!kib.empty() && gpu.memory_bytes <= 0) {
    gpu.memory_bytes = std::strtod(kib.c_str(), nullptr) * kKiB;
    gpu.memory_source = Source::kHwloc;
  }
}

// The GPU's OS devices (CUDA, NVML, OpenCL): their names, the first model each reports,
// the CUDA memory size and the NVML UUID.
ReportedModels read_os_devices(hwloc_obj_t pci, GpuInfo& gpu) {
  ReportedModels models;
  for (hwloc_obj_t child = pci->io_first_child; child != nullptr; child = child->next_sibling) {
    if (child->type != HWLOC_OBJ_OS_DEVICE) continue;
    const GpuOsDevice kind = gpu_os_device_kind(child);
    if (kind == GpuOsDevice::kOther) continue;
    gpu.os_devices.push_back(child->name != nullptr ? child->name : "");
    const std::string model = info(child, "GPUModel");
    std::string& first = kind == GpuOsDevice::kCuda   ? models.cuda
                         : kind == GpuOsDevice::kNvml ? models.nvml
                                                      : models.opencl;
    if (first.empty()) first = model;
    if (kind == GpuOsDevice::kCuda) read_cuda_device(child, gpu);
    if (kind == GpuOsDevice::kNvml && gpu.uuid.empty()) gpu.uuid = info(child, "NVIDIAUUID");
  }
  return models;
}

// OpenCL's memory size, used only where CUDA gave none.
void read_opencl_memory(hwloc_obj_t pci, GpuInfo& gpu) {
  if (gpu.memory_bytes > 0) return;
  for (hwloc_obj_t child = pci->io_first_child; child != nullptr; child = child->next_sibling) {
    if (child->type != HWLOC_OBJ_OS_DEVICE || gpu_os_device_kind(child) != GpuOsDevice::kOpencl) continue;
    const std::string kib = info(child, "OpenCLGlobalMemorySize");
    if (!kib.empty()) {
      gpu.memory_bytes = std::strtod(kib.c_str(), nullptr) * kKiB;
      gpu.memory_source = Source::kHwloc;
      return;
    }
  }
}

// The model name: CUDA's, else NVML's, else OpenCL's, else the PCI device name, else the PCI id.
void choose_model(hwloc_obj_t pci, const ReportedModels& models, GpuInfo& gpu) {
  for (const std::string* model : {&models.cuda, &models.nvml, &models.opencl}) {
    if (!model->empty()) {
      gpu.model = *model;
      gpu.model_source = Source::kHwloc;
      return;
    }
  }
  gpu.model = info(pci, "PCIDevice");
  if (!gpu.model.empty()) {
    gpu.model_source = Source::kHwloc;
    return;
  }
  char id[32];
  std::snprintf(id, sizeof id, "NVIDIA GPU [10de:%04x]", static_cast<unsigned>(pci->attr->pcidev.device_id));
  gpu.model = id;
}

GpuInfo read_gpu(hwloc_topology_t topology, hwloc_obj_t pci) {
  GpuInfo gpu;
  gpu.pci_bus_id = bus_id(pci);
  gpu.pcie_gbytes = pci->attr->pcidev.linkspeed > 0 ? static_cast<double>(pci->attr->pcidev.linkspeed) : 0.0;
  const ReportedModels models = read_os_devices(pci, gpu);
  read_opencl_memory(pci, gpu);
  choose_model(pci, models, gpu);

  const Locality where = locality_of(topology, pci);
  gpu.numa_node = where.numa_node;
  gpu.package = where.package;

  // Bridges from the host bridge down.
  for (hwloc_obj_t up = pci->parent; up != nullptr && up->type == HWLOC_OBJ_BRIDGE; up = up->parent) {
    gpu.pcie_path.push_back(up->gp_index);
  }
  std::reverse(gpu.pcie_path.begin(), gpu.pcie_path.end());
  return gpu;
}

// An OS device's type as a number: hwloc keeps whatever osdev_type an XML export gives, and
// loading a value outside the enum as the enum is undefined behaviour (found by fuzz_hwloc_xml).
unsigned osdev_type_of(hwloc_obj_t osdev) {
  unsigned type = 0;
  static_assert(sizeof(type) == sizeof(osdev->attr->osdev.type));
  std::memcpy(&type, &osdev->attr->osdev.type, sizeof type);
  return type;
}

NicInfo read_nic(hwloc_topology_t topology, hwloc_obj_t osdev) {
  NicInfo nic;
  nic.name = osdev->name != nullptr ? osdev->name : "";
  const bool openfabrics = osdev_type_of(osdev) == HWLOC_OBJ_OSDEV_OPENFABRICS;
  nic.kind = openfabrics ? "OpenFabrics" : "network";
  if (openfabrics) {
    // Port<N>State = 4 is IB_PORT_ACTIVE; EFA devices report it too.
    for (unsigned i = 0; i < osdev->infos_count; ++i) {
      const char* name = osdev->infos[i].name;
      const char* value = osdev->infos[i].value;
      const size_t len = name != nullptr ? std::strlen(name) : 0;
      if (starts_with(name, "Port") && len > 9 && std::strcmp(name + len - 5, "State") == 0 && value != nullptr &&
          std::strcmp(value, "4") == 0) {
        nic.active = true;
      }
    }
  }
  for (hwloc_obj_t up = osdev->parent; up != nullptr; up = up->parent) {
    if (up->type == HWLOC_OBJ_PCI_DEVICE) {
      nic.pci_bus_id = bus_id(up);
      nic.device = info(up, "PCIDevice");
      nic.pcie_gbytes = up->attr->pcidev.linkspeed > 0 ? static_cast<double>(up->attr->pcidev.linkspeed) : 0.0;
      break;
    }
    if (up->type != HWLOC_OBJ_OS_DEVICE) break;
  }
  const Locality where = locality_of(topology, osdev);
  nic.numa_node = where.numa_node;
  nic.package = where.package;
  return nic;
}

// The PCI device an object of the NVLink matrix stands for: itself, or an OS device's
// PCI parent.
hwloc_obj_t pci_of(hwloc_obj_t obj) {
  for (hwloc_obj_t up = obj; up != nullptr; up = up->parent) {
    if (up->type == HWLOC_OBJ_PCI_DEVICE) return up;
    if (up->type != HWLOC_OBJ_OS_DEVICE) return nullptr;
  }
  return nullptr;
}

int nvlinks_for(double mbytes) {
  const double links = mbytes / kMbytesPerNvlink;
  const double rounded = std::round(links);
  return (rounded >= 1 && std::fabs(links - rounded) <= 0.01 * rounded) ? static_cast<int>(rounded) : 0;
}

// Adds the NVLinkBandwidth matrices' GPU<->GPU and GPU<->NVSwitch entries to `counts`.
// Per object of an NVLink bandwidth matrix: a GPU position, -2 for an NVSwitch, -1 for anything else.
std::vector<int> matrix_roles(const hwloc_distances_s* m, const std::map<std::string, int>& gpu_of_bus) {
  std::vector<int> role(m->nbobjs, -1);
  for (unsigned i = 0; i < m->nbobjs; ++i) {
    hwloc_obj_t pci = pci_of(m->objs[i]);
    if (pci == nullptr) continue;
    const auto gpu = gpu_of_bus.find(bus_id(pci));
    if (gpu != gpu_of_bus.end()) {
      role[i] = gpu->second;
    } else if (is_nvswitch(pci)) {
      role[i] = -2;
    }
  }
  return role;
}

// The matrices hold MB/s, and no link between two devices comes near 100 TB/s: a larger entry
// (a negative number in an XML export, which hwloc reads as a huge unsigned one) is refused
// rather than turned into a link count that does not fit an int (found by fuzz_hwloc_xml).
constexpr hwloc_uint64_t kMaxNvlinkMbytes = 100'000'000;

// GPU `i`'s row of the matrix: its links to other GPUs and to NVSwitches.
void add_matrix_row(const hwloc_distances_s* m, const std::vector<int>& role, unsigned i, NvlinkCounts& counts,
                    const std::string& origin) {
  const unsigned n = m->nbobjs;
  auto value = [m, n, &origin](unsigned a, unsigned b) {
    const hwloc_uint64_t mb = m->values[a * n + b];
    if (mb > kMaxNvlinkMbytes) {
      throw UsageError(origin + ": an NVLinkBandwidth value of " + std::to_string(mb) +
                       " MB/s is beyond 100 TB/s (expected the MB/s of one link between two devices)");
    }
    return static_cast<double>(mb);
  };
  for (unsigned j = 0; j < n; ++j) {
    if (i == j) continue;  // the diagonal is artificial (0 or 1000000)
    if (role[j] >= 0 && role[j] != role[i]) {
      const double mb = value(i, j);
      counts.direct(role[i], role[j]) = mb / kMegaPerGiga;
      counts.links(role[i], role[j]) = nvlinks_for(mb);
    } else if (role[j] == -2) {
      // GPU -> switch; either direction of the entry counts.
      const double mb = std::max(value(i, j), value(j, i));
      counts.switch_gbytes[static_cast<size_t>(role[i])] += mb / kMegaPerGiga;
      counts.switch_links[static_cast<size_t>(role[i])] += nvlinks_for(mb);
    }
  }
}

void read_nvlink_matrix(hwloc_topology_t topology, const std::map<std::string, int>& gpu_of_bus, NvlinkCounts& counts,
                        const std::string& origin) {
  const Distances distances(topology, "NVLinkBandwidth");
  for (const hwloc_distances_s* m : distances.matrices()) {
    const std::vector<int> role = matrix_roles(m, gpu_of_bus);
    for (unsigned i = 0; i < m->nbobjs; ++i) {
      if (role[i] >= 0) add_matrix_row(m, role, i, counts, origin);
    }
  }
}

HwlocNode read_loaded(hwloc_topology_t topology, const std::string& origin) {
  HwlocNode out;
  NodeTopology& node = out.topology;
  node.origin = origin;

  std::vector<hwloc_obj_t> gpu_objects;
  for (hwloc_obj_t pci = hwloc_get_next_pcidev(topology, nullptr); pci != nullptr;
       pci = hwloc_get_next_pcidev(topology, pci)) {
    if (is_nvidia_gpu(pci)) {
      gpu_objects.push_back(pci);
    } else if (is_nvswitch(pci)) {
      node.nvswitches.push_back(NvSwitchInfo{bus_id(pci), info(pci, "PCIDevice")});
    }
  }
  // CUDA_DEVICE_ORDER=PCI_BUS_ID: domain, bus, device, function.
  auto key = [](hwloc_obj_t p) {
    const auto& a = p->attr->pcidev;
    return std::make_tuple(a.domain, a.bus, a.dev, a.func);
  };
  std::sort(gpu_objects.begin(), gpu_objects.end(), [&key](hwloc_obj_t x, hwloc_obj_t y) { return key(x) < key(y); });
  std::sort(node.nvswitches.begin(), node.nvswitches.end(),
            [](const NvSwitchInfo& x, const NvSwitchInfo& y) { return x.pci_bus_id < y.pci_bus_id; });

  std::map<std::string, int> gpu_of_bus;
  for (hwloc_obj_t pci : gpu_objects) {
    gpu_of_bus[bus_id(pci)] = node.gpu_count();
    node.gpus.push_back(read_gpu(topology, pci));
  }
  const int g = node.gpu_count();
  node.links.assign(table_size(g, g), GpuLink{});

  for (hwloc_obj_t osdev = hwloc_get_next_osdev(topology, nullptr); osdev != nullptr;
       osdev = hwloc_get_next_osdev(topology, osdev)) {
    const unsigned type = osdev_type_of(osdev);
    if (type == HWLOC_OBJ_OSDEV_OPENFABRICS || type == HWLOC_OBJ_OSDEV_NETWORK) {
      node.nics.push_back(read_nic(topology, osdev));
    }
  }

  NvlinkCounts counts(g);
  read_nvlink_matrix(topology, gpu_of_bus, counts, origin);
  out.nvlink_matrix = counts.any();
  apply_nvlink_counts(counts, Source::kHwlocMatrix, node);
  return out;
}

// I/O objects are filtered out by default, and then the XML import drops PCI devices,
// OS devices and the NVLink matrix. KEEP_IMPORTANT keeps GPUs, NICs and their OS devices;
// every PCI device is kept so that NVSwitches without hwloc's NVSwitch subtype (class
// 0x0680, which KEEP_IMPORTANT drops) stay visible.
void set_filters(hwloc_topology_t topology) {
  hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  hwloc_topology_set_type_filter(topology, HWLOC_OBJ_PCI_DEVICE, HWLOC_TYPE_FILTER_KEEP_ALL);
}

// hwloc's import of checked text.
HwlocNode load_xml_text(const std::string& text, const std::string& path) {
  Topology topology;
  set_filters(topology.get());
  if (hwloc_topology_set_xmlbuffer(topology.get(), text.c_str(), static_cast<int>(text.size() + 1)) != 0 ||
      hwloc_topology_load(topology.get()) != 0) {
    throw UsageError("'" + path + "' is malformed hwloc XML: hwloc 2.9 could not import it");
  }
  return read_loaded(topology.get(), "hwloc XML " + path);
}

}  // namespace

HwlocNode read_hwloc_xml(const std::string& path) {
  const std::string text = read_hwloc_xml_file(path);
  return load_xml_text(text, path);
}

HwlocNode hwloc_from_xml_text(const std::string& text, const std::string& path) {
  check_hwloc_xml_text(text, path);
  return load_xml_text(text, path);
}

HwlocNode read_hwloc_live() {
  Topology topology;
  set_filters(topology.get());
  if (hwloc_topology_load(topology.get()) != 0) {
    throw UsageError(std::string("hwloc could not discover this machine: ") + std::strerror(errno));
  }
  return read_loaded(topology.get(), "this machine (hwloc live)");
}

}  // namespace layerplan
