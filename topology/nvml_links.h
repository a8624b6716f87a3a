#pragma once
// NVML at run time: NVLink links and GPU facts that Debian's hwloc (built without its
// NVML plugin) cannot see. libnvidia-ml.so.1 is opened with dlopen, never linked, so
// everything that links layerplan_topology (the SPANK plugin included) loads on nodes
// without an NVIDIA driver; there, this reports why NVML is unavailable and changes
// nothing.
#include <string>

#include "topology/node_topology.h"

namespace layerplan {

// What add_nvml_links() did.
struct NvmlReport {
  bool loaded = false;  // the library opened and nvmlInit_v2 succeeded
  std::string why;      // when not loaded: "libnvidia-ml.so.1 not found (...)", "nvmlInit_v2 failed with code 9 (...)"
  int gpus_opened = 0;  // GPUs of the node NVML returned a handle for
  int nvlinks = 0;      // active NVLink links counted over all opened GPUs
};

// The library add_nvml_links() opens: $LAYERPLAN_NVML_LIBRARY when set (tests point it at
// a fake), else "libnvidia-ml.so.1".
std::string nvml_library_path();

// Looks up each GPU of `node` in NVML by PCI bus id, counts its active NVLink links per
// remote PCI device and sets the links they make (Source::kNvml, rules of
// apply_nvlink_counts()): a remote that is a GPU of the node is a direct NVLink; any other
// NVIDIA remote is an NVSwitch; other remotes (POWER9 CPUs) are not GPU paths. Per link,
// 20 GB/s for NVLink 1, 25 for NVLink 2-4 and 50 for NVLink 5, one way, from
// nvmlDeviceGetNvLinkVersion. Also fills UUID, memory and (where hwloc had only the PCI
// device name) the model from NVML. Adds a note when some GPUs could not be opened.
NvmlReport add_nvml_links(NodeTopology& node);

}  // namespace layerplan
