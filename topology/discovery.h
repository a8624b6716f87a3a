#pragma once
// Finds the node's topology the way a job sees it: hwloc (an XML export, or the live
// machine with NVML filling the NVLink links when libnvidia-ml.so.1 loads), then only the
// GPUs the job was given. docs/topology.md describes every rule.
#include <optional>
#include <string>
#include <vector>

#include "topology/node_topology.h"

namespace layerplan {

// The variables that name a job's GPUs, as read from the environment (empty = unset).
struct GpuEnvironment {
  std::string cuda_visible_devices;  // indices, GPU-<uuid> (prefixes allowed); MIG-… rejected
  std::string slurm_step_gpus;       // global indices, "0,2" or ranges "0-3"
  std::string slurm_job_gpus;
  // CUDA_VISIBLE_DEVICES is set, even if empty: an empty value hides every GPU (an error
  // here), which an empty `cuda_visible_devices` alone cannot tell from "unset".
  bool cuda_visible_devices_set = false;

  static GpuEnvironment from_process();  // getenv of the three variables
};

// Positions in `topology.gpus` (PCI bus-id order) of the job's GPUs, in the order the
// variable lists them. Precedence: SLURM_STEP_GPUS, then SLURM_JOB_GPUS (both global
// indices "0,2", "0-3", "0-1,3", assumed numbered in PCI bus-id order as Slurm's NVML
// autodetection does), then CUDA_VISIBLE_DEVICES (indices, or GPU-<uuid> and unique
// prefixes of it), else every GPU. Throws UsageError naming the variable and value for a
// malformed list, a GPU that is not present (with the node's GPU count), an empty
// CUDA_VISIBLE_DEVICES, a MIG device, a UUID prefix that matches several GPUs, or a
// duplicate.
std::vector<int> select_gpus(const NodeTopology& topology, const GpuEnvironment& env);

// Explicit positions (`layerplan topo --gpus 0,2`), checked like select_gpus() checks the
// environment: each must be present and listed once. Returns them unchanged.
std::vector<int> check_gpu_indices(const NodeTopology& topology, const std::vector<int>& indices);

struct DiscoveryOptions {
  // An hwloc XML export; empty means $LAYERPLAN_TOPOLOGY_XML, and if that is unset too,
  // the live machine.
  std::string topology_xml;
  // Explicit GPU indices (`layerplan topo --gpus 0,2`); when set, the environment is not read.
  std::optional<std::vector<int>> gpu_indices;
  GpuEnvironment env;
  bool use_nvml = true;  // live discovery only
  // Where NIC rates are read (topology/nic_rates.h): live discovery reads this, else
  // kDefaultSysfsRoot; XML input reads it only when it is set (an export's node is not
  // this machine).
  std::optional<std::string> sysfs_root;
};

// Loads, fills NVLink links and NIC rates, restricts to the job's GPUs. Throws UsageError for a missing,
// malformed or hwloc-3 XML file, and for a bad GPU selection.
NodeTopology discover_node(const DiscoveryOptions& options);

}  // namespace layerplan
