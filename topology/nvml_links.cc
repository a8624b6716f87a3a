#include "topology/nvml_links.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "topology/nvlink_counts.h"
#include "topology/nvml_abi.h"

namespace layerplan {

namespace {

constexpr unsigned kNvidiaVendor = 0x10de;

// Owns a dlopen handle.
class Library {
 public:
  explicit Library(const std::string& path) : handle_(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {}
  ~Library() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  bool loaded() const { return handle_ != nullptr; }

  template <typename Fn>
  Fn symbol(const char* name) const {
    void* address = dlsym(handle_, name);
    Fn fn = nullptr;
    // POSIX guarantees a data pointer from dlsym can hold a function's address.
    static_assert(sizeof fn == sizeof address);
    std::memcpy(&fn, &address, sizeof fn);
    return fn;
  }

 private:
  void* handle_;
};

// The entry points add_nvml_links() needs (required) or uses when present (optional).
struct Api {
  nvml::InitFn init = nullptr;
  nvml::ShutdownFn shutdown = nullptr;
  nvml::HandleByPciBusIdFn handle_by_bus_id = nullptr;
  nvml::NvLinkStateFn link_state = nullptr;
  nvml::NvLinkRemotePciInfoFn link_remote = nullptr;
  // Optional.
  nvml::ErrorStringFn error_string = nullptr;
  nvml::NvLinkVersionFn link_version = nullptr;
  nvml::NameFn name = nullptr;
  nvml::UuidFn uuid = nullptr;
  nvml::MemoryInfoFn memory = nullptr;
  nvml::ComputeCapabilityFn compute_capability = nullptr;

  // The first required entry point missing, or "" when all are there.
  std::string load(const Library& lib) {
    init = lib.symbol<nvml::InitFn>("nvmlInit_v2");
    shutdown = lib.symbol<nvml::ShutdownFn>("nvmlShutdown");
    handle_by_bus_id = lib.symbol<nvml::HandleByPciBusIdFn>("nvmlDeviceGetHandleByPciBusId_v2");
    link_state = lib.symbol<nvml::NvLinkStateFn>("nvmlDeviceGetNvLinkState");
    link_remote = lib.symbol<nvml::NvLinkRemotePciInfoFn>("nvmlDeviceGetNvLinkRemotePciInfo_v2");
    error_string = lib.symbol<nvml::ErrorStringFn>("nvmlErrorString");
    link_version = lib.symbol<nvml::NvLinkVersionFn>("nvmlDeviceGetNvLinkVersion");
    name = lib.symbol<nvml::NameFn>("nvmlDeviceGetName");
    uuid = lib.symbol<nvml::UuidFn>("nvmlDeviceGetUUID");
    memory = lib.symbol<nvml::MemoryInfoFn>("nvmlDeviceGetMemoryInfo");
    compute_capability = lib.symbol<nvml::ComputeCapabilityFn>("nvmlDeviceGetCudaComputeCapability");
    if (init == nullptr) return "nvmlInit_v2";
    if (shutdown == nullptr) return "nvmlShutdown";
    if (handle_by_bus_id == nullptr) return "nvmlDeviceGetHandleByPciBusId_v2";
    if (link_state == nullptr) return "nvmlDeviceGetNvLinkState";
    if (link_remote == nullptr) return "nvmlDeviceGetNvLinkRemotePciInfo_v2";
    return "";
  }

  std::string describe(nvml::Return rc) const {
    std::string text = "code " + std::to_string(rc);
    if (error_string != nullptr) {
      const char* message = error_string(rc);
      if (message != nullptr) text += " (" + std::string(message) + ")";
    }
    return text;
  }
};

// Calls nvmlShutdown once nvmlInit succeeded, on every path.
class Session {
 public:
  explicit Session(const Api& api) : api_(api) {}
  ~Session() { api_.shutdown(); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

 private:
  const Api& api_;
};

// NVML writes "00000000:07:00.0" in upper or lower case; hwloc "0000:07:00.0".
std::string normalize_bus_id(const char* text) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  if (std::sscanf(text, "%x:%x:%x.%x", &domain, &bus, &device, &function) != 4) return text;
  char out[32];
  std::snprintf(out, sizeof out, "%04x:%02x:%02x.%x", domain, bus, device, function);
  return out;
}

// One way, per link.
double gbytes_per_link(const Api& api, nvml::Device device, unsigned link) {
  unsigned version = 0;
  if (api.link_version == nullptr || api.link_version(device, link, &version) != nvml::kSuccess) return 25.0;
  if (version == 1) return 20.0;
  if (version == 7) {
    // Some drivers report 5.0 for Hopper's NVLink 4; NVLink 5 needs compute capability 10+.
    int major = 0, minor = 0;
    if (api.compute_capability != nullptr && api.compute_capability(device, &major, &minor) == nvml::kSuccess &&
        major > 0 && major < 10) {
      return 25.0;
    }
    return 50.0;
  }
  return 25.0;  // 2.0-4.0, and versions this code does not know
}

void fill_gpu_facts(const Api& api, nvml::Device device, GpuInfo& gpu) {
  if (gpu.uuid.empty() && api.uuid != nullptr) {
    char text[nvml::kUuidBufferSize] = {};
    if (api.uuid(device, text, sizeof text) == nvml::kSuccess) gpu.uuid = text;
  }
  // hwloc without GPU OS devices only knows the PCI device name ("GA100 [A100 SXM4 40GB]").
  if (gpu.os_devices.empty() && api.name != nullptr) {
    char text[nvml::kNameBufferSize] = {};
    if (api.name(device, text, sizeof text) == nvml::kSuccess && text[0] != '\0') {
      gpu.model = text;
      gpu.model_source = Source::kNvml;
    }
  }
  if (gpu.memory_bytes <= 0 && api.memory != nullptr) {
    nvml::Memory memory{};
    if (api.memory(device, &memory) == nvml::kSuccess && memory.total > 0) {
      gpu.memory_bytes = static_cast<double>(memory.total);
      gpu.memory_source = Source::kNvml;
    }
  }
}

// GPU `a`'s active NVLinks, counted towards its peer GPU or to an NVSwitch; returns how
// many it counted (links to anything else, e.g. a POWER9 CPU, are no path between GPUs).
int count_device_links(const Api& api, nvml::Device device, int a, const std::map<std::string, int>& gpu_of_bus,
                       NvlinkCounts& counts) {
  int counted = 0;
  for (unsigned link = 0; link < nvml::kMaxLinks; ++link) {
    int state = 0;
    if (api.link_state(device, link, &state) != nvml::kSuccess || state != nvml::kFeatureEnabled) continue;
    nvml::PciInfo remote{};
    if (api.link_remote(device, link, &remote) != nvml::kSuccess) continue;
    remote.bus_id[sizeof remote.bus_id - 1] = '\0';
    const double rate = gbytes_per_link(api, device, link);
    const auto peer = gpu_of_bus.find(normalize_bus_id(remote.bus_id));
    if (peer != gpu_of_bus.end() && peer->second != a) {
      counts.direct(a, peer->second) += rate;
      counts.links(a, peer->second) += 1;
    } else if ((remote.pci_device_id & 0xffffu) == kNvidiaVendor) {
      counts.switch_gbytes[static_cast<size_t>(a)] += rate;
      counts.switch_links[static_cast<size_t>(a)] += 1;
    } else {
      continue;
    }
    ++counted;
  }
  return counted;
}

}  // namespace

std::string nvml_library_path() {
  const char* path = std::getenv("LAYERPLAN_NVML_LIBRARY");
  return (path != nullptr && path[0] != '\0') ? path : "libnvidia-ml.so.1";
}

NvmlReport add_nvml_links(NodeTopology& node) {
  NvmlReport report;
  const std::string path = nvml_library_path();
  const Library lib(path);
  if (!lib.loaded()) {
    const char* error = dlerror();
    report.why = path + " not loaded (" + (error != nullptr ? error : "unknown error") + ")";
    return report;
  }
  Api api;
  const std::string missing = api.load(lib);
  if (!missing.empty()) {
    report.why = path + " lacks " + missing;
    return report;
  }
  const nvml::Return init = api.init();
  if (init != nvml::kSuccess) {
    report.why = "nvmlInit_v2 failed with " + api.describe(init);
    return report;
  }
  const Session session(api);
  report.loaded = true;

  const int g = node.gpu_count();
  std::map<std::string, int> gpu_of_bus;
  for (int i = 0; i < g; ++i) gpu_of_bus[node.gpus[static_cast<size_t>(i)].pci_bus_id] = i;

  NvlinkCounts counts(g);
  std::vector<std::string> unopened;
  for (int a = 0; a < g; ++a) {
    GpuInfo& gpu = node.gpus[static_cast<size_t>(a)];
    nvml::Device device = nullptr;
    if (api.handle_by_bus_id(gpu.pci_bus_id.c_str(), &device) != nvml::kSuccess || device == nullptr) {
      unopened.push_back(gpu.pci_bus_id);
      continue;
    }
    ++report.gpus_opened;
    fill_gpu_facts(api, device, gpu);
    report.nvlinks += count_device_links(api, device, a, gpu_of_bus, counts);
  }
  apply_nvlink_counts(counts, Source::kNvml, node);
  if (!unopened.empty()) {
    std::string list;
    for (const std::string& id : unopened) list += (list.empty() ? "" : ", ") + id;
    node.notes.push_back("NVML could not open " + std::to_string(unopened.size()) + " of " + std::to_string(g) +
                         " GPUs (" + list + "): their NVLinks are known only from their peers' side");
  }
  return report;
}

}  // namespace layerplan
