#pragma once
// The admin's cluster defaults: one TOML file (etc/layerplan.toml is the commented
// example, docs/admin-config.md the reference). Topology reads the GPU table, the fabric
// and the overrides; the SPANK plugin reads [slurm]. Unknown tables and keys are errors
// that name the file, line and column.
#include <optional>
#include <string>
#include <vector>

#include "topology/device_graph.h"
#include "topology/fabric.h"
#include "topology/gpu_catalog.h"
#include "topology/tensor_layout.h"

namespace layerplan {

// One [[gpu]] entry: figures for every GPU whose model name contains one of `match`.
struct GpuFigures {
  // Case-insensitive parts of the discovered model name: NVML and CUDA say
  // "A100-SXM4-40GB", hwloc's PCI name table "GA100 [A100 SXM4 40GB]".
  std::vector<std::string> match;
  GpuModel model;  // name = the entry's key, full_name = the first match where not given
};

// A port's rate when neither the admin config nor sysfs gives one (EDR InfiniBand).
inline constexpr double kDefaultNicGbits = 100.0;

// The network between nodes. hwloc cannot read port rates: they come from here, else from
// sysfs on a live node (topology/nic_rates.h), else kDefaultNicGbits.
struct FabricConfig {
  std::optional<double> nic_gbits;  // per port, one way; unset: as above
  double latency_us = 5.0;
  // NICs a node uses; 0 counts the node's active InfiniBand/RoCE/EFA interfaces.
  int nics_per_node = 0;
  // rdma (InfiniBand, RoCE) or tcp: the network's bandwidth is the NICs' rate times the share
  // this transport reaches (fabric_bus_share()).
  Fabric transport = Fabric::kRdma;
};

// How links inside a node are priced where no NVLink figure exists.
struct NodeLinkConfig {
  double intra_latency_us = 5.0;
  double pcie_efficiency = 0.76;      // share of the PCIe link speed a GPU copy reaches (NCCL: 12/15.75)
  double inter_socket_gbytes = 10.0;  // one way across the sockets' link (NCCL's UPI figure)
  double compute_efficiency = 0.85;
  double kernel_overhead_us = 5.0;
  Precision precision = Precision::kFp32;
  TensorLayout layout = TensorLayout::kChannelsLast;  // how the framework stores activations
  // Memory a plan leaves free on each GPU (CUDA context, libraries, communicator buffers).
  double gpu_memory_reserve_gib = kDefaultMemoryReserveGib;
  // A measured profile (docs/cost-model.md, "Measured profiles"), an absolute path; "" = none.
  std::string profile_db;
};

// Values that replace what discovery found (for machines whose export lies or lacks them).
struct TopologyOverrides {
  std::optional<std::string> gpu_model;  // a [[gpu]] or catalog key, e.g. "h100"
  std::optional<double> nvlink_gbytes;   // every GPU pair, one way
  std::optional<double> gpu_memory_gib;
};

// [slurm]: what the SPANK plugin does when a job does not say.
struct SlurmDefaults {
  std::string default_mode = "off";  // auto | layerwise | data | model | owt | off
  std::vector<std::string> allowed_modes = {"auto", "layerwise", "data", "model", "owt", "off"};
  std::string default_model = "resnet50";
  std::optional<long long> default_batch;  // global batch; unset = 32 images per GPU
  std::vector<std::string> model_path;     // folders searched for model files
  double time_budget_s = 10.0;
  // The simplicity margin: data parallelism stays unless another plan's step is shorter by
  // more than this share of its own (PlanOptions::min_gain; the same default, kDefaultMinGain).
  double min_gain = 0.03;
  std::string plan_dir;      // empty = the job's working directory
  std::string topology_xml;  // empty = discover the live node through hwloc
};

struct AdminConfig {
  std::string path;              // the file it came from, empty for the built-in defaults
  std::string text;              // its bytes as read (a plan file records their SHA-256)
  std::vector<GpuFigures> gpus;  // searched before the built-in catalog
  FabricConfig fabric;
  NodeLinkConfig node;
  TopologyOverrides overrides;
  SlurmDefaults slurm;
};

// The modes a job or the admin may name: auto, layerwise, data, model, owt, off.
const std::vector<std::string>& plugin_mode_names();
// Throws UsageError "NAME 'MODE': expected auto, …" unless `mode` is one of them.
void require_plugin_mode(const std::string& mode, const std::string& name);
// Checks the [slurm] values together (modes known, default mode allowed, batch ≥ 1, …).
void validate(const SlurmDefaults& slurm);
// Sets one [slurm] key from text, as a plugstack.conf argument `key=value` gives it
// (lists comma-separated). Throws UsageError for an unknown key or a malformed value;
// call validate() afterwards.
void set_slurm_key(SlurmDefaults& slurm, const std::string& key, const std::string& value);

// The simplicity margin from text ("0.03"), as `--min-gain` and the plugstack.conf argument
// give it: a number of 0 or more. Throws UsageError "NAME 'TEXT': expected ..." otherwise.
double parse_min_gain(const std::string& text, const std::string& name);
// Throws UsageError naming `name` and the value unless it is a finite number of 0 or more.
void require_min_gain(double value, const std::string& name);

// Reads the file; throws UsageError "PATH:LINE:COLUMN: …" for any error, or
// "admin config 'PATH' cannot be read: REASON" when it cannot be opened (common/input_file.h).
AdminConfig load_admin_config(const std::string& path);
// The same for the file's text; `path` names it in errors.
AdminConfig admin_config_from_toml(const std::string& text, const std::string& path);

// The GPU figures for a discovered model name: the first [[gpu]] whose `match` the name
// contains, else the built-in catalog entry whose name it contains ("H100" in
// "NVIDIA H100 80GB HBM3"). Throws UsageError naming the model when nothing matches.
GpuModel figures_for_gpu(const AdminConfig& config, const std::string& discovered_model);

// A [[gpu]] entry's or catalog key's figures ("h100"); throws UsageError listing the keys.
const GpuModel& find_figures_by_name(const AdminConfig& config, const std::string& name);

}  // namespace layerplan
