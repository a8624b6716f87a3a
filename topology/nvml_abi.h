#pragma once
// The few NVML types and entry points layerplan uses, declared here so that the build
// needs neither CUDA nor nvml.h; the fake library in tests/ implements the same ABI.
// Layouts and values as documented in NVIDIA's nvml.h (NVML API reference, "Device
// Queries" and "NvLink Methods"); they have been stable since the _v2 entry points:
// - nvmlReturn_t is a C enum (int); NVML_SUCCESS = 0.
// - nvmlDevice_t is an opaque pointer.
// - nvmlEnableState_t: NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1.
// - nvmlPciInfo_t (used by nvmlDeviceGetNvLinkRemotePciInfo_v2): busIdLegacy[16], domain,
//   bus, device, pciDeviceId (device id << 16 | vendor id), pciSubSystemId, busId[32]
//   ("00000000:07:00.0").
// - nvmlMemory_t (v1): total, free, used, in bytes.
// - NVLink versions (nvmlDeviceGetNvLinkVersion): 1 = 1.0, 2 = 2.0, 3 = 2.2, 4 = 3.0,
//   5 = 3.1, 6 = 4.0, 7 = 5.0.
// - A GPU has at most NVML_NVLINK_MAX_LINKS = 18 links.

namespace layerplan::nvml {

using Return = int;
using Device = struct DeviceOpaque*;
constexpr Return kSuccess = 0;
constexpr int kFeatureEnabled = 1;
constexpr unsigned kMaxLinks = 18;
constexpr unsigned kNameBufferSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kUuidBufferSize = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE

struct PciInfo {
  char bus_id_legacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;
  unsigned int pci_subsystem_id;
  char bus_id[32];
};

struct Memory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

// Signatures of the entry points, by their exported names.
using InitFn = Return (*)();                                           // nvmlInit_v2
using ShutdownFn = Return (*)();                                       // nvmlShutdown
using ErrorStringFn = const char* (*)(Return);                         // nvmlErrorString
using HandleByPciBusIdFn = Return (*)(const char*, Device*);           // nvmlDeviceGetHandleByPciBusId_v2
using NvLinkStateFn = Return (*)(Device, unsigned, int*);              // nvmlDeviceGetNvLinkState
using NvLinkRemotePciInfoFn = Return (*)(Device, unsigned, PciInfo*);  // nvmlDeviceGetNvLinkRemotePciInfo_v2
using NvLinkVersionFn = Return (*)(Device, unsigned, unsigned*);       // nvmlDeviceGetNvLinkVersion
using NameFn = Return (*)(Device, char*, unsigned);                    // nvmlDeviceGetName
using UuidFn = Return (*)(Device, char*, unsigned);                    // nvmlDeviceGetUUID
using MemoryInfoFn = Return (*)(Device, Memory*);                      // nvmlDeviceGetMemoryInfo
using ComputeCapabilityFn = Return (*)(Device, int*, int*);            // nvmlDeviceGetCudaComputeCapability

}  // namespace layerplan::nvml
