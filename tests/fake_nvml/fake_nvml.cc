// A stand-in for libnvidia-ml.so.1 with the entry points topology/nvml_links.cc resolves,
// so that NVML discovery is tested without a GPU. Tests load it through
// LAYERPLAN_NVML_LIBRARY and describe the machine in environment variables, read at
// nvmlInit_v2:
//   LAYERPLAN_FAKE_NVML_INIT_ERROR  nvmlInit_v2 returns this code instead of success
//   LAYERPLAN_FAKE_NVML_GPUS        the GPUs' PCI bus ids, "0000:18:00.0,0000:19:00.0"
//   LAYERPLAN_FAKE_NVML_SWITCHES    NVSwitch bus ids; each GPU then has 2 links to each
//                                   switch (as on HGX A100); unset: the GPUs are fully
//                                   meshed with LAYERPLAN_FAKE_NVML_LINKS_PER_PAIR links
//                                   (default 6) per pair
//   LAYERPLAN_FAKE_NVML_VERSION     nvmlDeviceGetNvLinkVersion's value (default 4 = NVLink 3.0)
//   LAYERPLAN_FAKE_NVML_HIDDEN      bus ids nvmlDeviceGetHandleByPciBusId_v2 refuses (a cgroup)
// fake_nvml_shutdowns() counts nvmlShutdown calls.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "topology/nvml_abi.h"

namespace {

using layerplan::nvml::Device;
using layerplan::nvml::Memory;
using layerplan::nvml::PciInfo;
using layerplan::nvml::Return;

constexpr Return kSuccess = 0;
constexpr Return kInvalidArgument = 2;
constexpr Return kNotFound = 6;
constexpr Return kUninitialized = 1;

struct Bus {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  bool operator==(const Bus& other) const {
    return domain == other.domain && bus == other.bus && device == other.device && function == other.function;
  }
};

struct Remote {
  Bus bus;
  bool is_switch = false;
};

struct FakeDevice {
  Bus bus;
  bool hidden = false;
  std::vector<Remote> links;
};

struct Machine {
  bool initialised = false;
  unsigned version = 4;
  std::vector<FakeDevice> gpus;
};

Machine machine;
int shutdowns = 0;

bool parse_bus(const char* text, Bus& out) {
  return std::sscanf(text, "%x:%x:%x.%x", &out.domain, &out.bus, &out.device, &out.function) == 4;
}

std::vector<Bus> bus_list(const char* variable) {
  std::vector<Bus> out;
  const char* value = std::getenv(variable);
  if (value == nullptr) return out;
  std::string text = value;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    Bus bus;
    if (parse_bus(item.c_str(), bus)) out.push_back(bus);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

int int_variable(const char* variable, int fallback) {
  const char* value = std::getenv(variable);
  return value != nullptr ? std::atoi(value) : fallback;
}

FakeDevice* device_of(Device handle) { return reinterpret_cast<FakeDevice*>(handle); }

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int fake_nvml_shutdowns() { return shutdowns; }

__attribute__((visibility("default"))) Return nvmlInit_v2() {
  const int error = int_variable("LAYERPLAN_FAKE_NVML_INIT_ERROR", 0);
  if (error != 0) return error;
  machine = Machine{};
  machine.version = static_cast<unsigned>(int_variable("LAYERPLAN_FAKE_NVML_VERSION", 4));
  const std::vector<Bus> gpus = bus_list("LAYERPLAN_FAKE_NVML_GPUS");
  const std::vector<Bus> switches = bus_list("LAYERPLAN_FAKE_NVML_SWITCHES");
  const std::vector<Bus> hidden = bus_list("LAYERPLAN_FAKE_NVML_HIDDEN");
  const int per_pair = int_variable("LAYERPLAN_FAKE_NVML_LINKS_PER_PAIR", 6);
  for (const Bus& bus : gpus) {
    FakeDevice gpu;
    gpu.bus = bus;
    for (const Bus& h : hidden) gpu.hidden = gpu.hidden || h == bus;
    if (!switches.empty()) {
      for (int round = 0; round < 2; ++round) {
        for (const Bus& sw : switches) gpu.links.push_back(Remote{sw, true});
      }
    } else {
      for (const Bus& peer : gpus) {
        if (peer == bus) continue;
        for (int i = 0; i < per_pair; ++i) gpu.links.push_back(Remote{peer, false});
      }
    }
    machine.gpus.push_back(gpu);
  }
  machine.initialised = true;
  return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlShutdown() {
  ++shutdowns;
  machine.initialised = false;
  return kSuccess;
}

__attribute__((visibility("default"))) const char* nvmlErrorString(Return rc) {
  return rc == 9 ? "Driver Not Loaded" : "fake error";
}

__attribute__((visibility("default"))) Return nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, Device* device) {
  if (!machine.initialised) return kUninitialized;
  Bus bus;
  if (bus_id == nullptr || device == nullptr || !parse_bus(bus_id, bus)) return kInvalidArgument;
  for (FakeDevice& gpu : machine.gpus) {
    if (gpu.bus == bus && !gpu.hidden) {
      *device = reinterpret_cast<Device>(&gpu);
      return kSuccess;
    }
  }
  return kNotFound;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetNvLinkState(Device device, unsigned link, int* active) {
  if (device == nullptr || active == nullptr || link >= layerplan::nvml::kMaxLinks) return kInvalidArgument;
  *active = link < device_of(device)->links.size() ? 1 : 0;
  return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetNvLinkRemotePciInfo_v2(Device device, unsigned link,
                                                                                  PciInfo* pci) {
  if (device == nullptr || pci == nullptr || link >= device_of(device)->links.size()) return kInvalidArgument;
  const Remote& remote = device_of(device)->links[link];
  std::memset(pci, 0, sizeof *pci);
  pci->domain = remote.bus.domain;
  pci->bus = remote.bus.bus;
  pci->device = remote.bus.device;
  pci->pci_device_id = remote.is_switch ? 0x1af110deu : 0x20b010deu;
  // As NVML writes it: an 8-digit domain, upper-case hex.
  std::snprintf(pci->bus_id, sizeof pci->bus_id, "%08X:%02X:%02X.%X", remote.bus.domain, remote.bus.bus,
                remote.bus.device, remote.bus.function);
  return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetNvLinkVersion(Device device, unsigned link,
                                                                         unsigned* version) {
  if (device == nullptr || version == nullptr || link >= device_of(device)->links.size()) return kInvalidArgument;
  *version = machine.version;
  return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetName(Device device, char* name, unsigned length) {
  if (device == nullptr || name == nullptr) return kInvalidArgument;
  std::snprintf(name, length, "NVIDIA A100-SXM4-40GB");
  return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetUUID(Device device, char* uuid, unsigned length) {
  if (device == nullptr || uuid == nullptr) return kInvalidArgument;
  std::snprintf(uuid, length, "GPU-fake0000-0000-0000-0000-0000000000%02x", device_of(device)->bus.bus);
  return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetMemoryInfo(Device device, Memory* memory) {
  if (device == nullptr || memory == nullptr) return kInvalidArgument;
  memory->total = 40ull << 30;
  memory->free = memory->total;
  memory->used = 0;
  return kSuccess;
}

}  // extern "C"
