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

  static GpuEnvironment from_process();  // getenv of the three variables
};

// Positions in `topology.gpus` (PCI bus-id order) of the job's GPUs. Precedence:
// SLURM_STEP_GPUS, then SLURM_JOB_GPUS, then CUDA_VISIBLE_DEVICES, else every GPU.
// Throws UsageError naming the variable and value for a malformed list, a GPU that is
// not present, a MIG device or a duplicate.
std::vector<int> select_gpus(const NodeTopology& topology, const GpuEnvironment& env);

struct DiscoveryOptions {
  // An hwloc XML export; empty means $LAYERPLAN_TOPOLOGY_XML, and if that is unset too,
  // the live machine.
  std::string topology_xml;
  // Explicit GPU indices (`layerplan topo --gpus 0,2`); when set, the environment is not read.
  std::optional<std::vector<int>> gpu_indices;
  GpuEnvironment env;
  bool use_nvml = true;  // live discovery only
};

// Loads, fills NVLink links, restricts to the job's GPUs. Throws UsageError for a missing,
// malformed or hwloc-3 XML file, and for a bad GPU selection.
NodeTopology discover_node(const DiscoveryOptions& options);

}  // namespace layerplan
