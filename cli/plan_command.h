#pragma once
// `layerplan plan`: plan a zoo model on a cluster described by flags or a cluster file.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "cli/plan_outputs.h"
#include "job/job_plan.h"
#include "planner/config_space.h"
#include "planner/cost_model.h"
#include "topology/gpu_catalog.h"
#include "topology/tensor_layout.h"

namespace layerplan {

struct PlanCommandArgs {
  std::string model = "vgg16";
  std::optional<int64_t> batch;  // default: 32 images per GPU, as in the paper
  int64_t batch_per_gpu = 32;
  std::optional<int> gpus;
  std::optional<int> gpus_per_node;
  std::optional<std::string> gpu;
  std::optional<Precision> precision;  // default: the cluster file's, else fp32
  std::optional<TensorLayout> layout;  // default: the cluster file's, else nhwc
  // --intra-bw and --inter-bw as typed: "300GB/s", "400 Gb/s", or a bare number in GB/s and
  // Gb/s (parse_bandwidth(), topology/bandwidth_text.h).
  std::optional<std::string> intra_bandwidth;
  std::optional<std::string> inter_bandwidth;
  std::optional<int> nics_per_node;
  std::optional<double> gpu_memory_gib;
  std::optional<double> memory_reserve_gib;
  std::optional<std::string> cluster_file;
  PlacementRule placement = PlacementRule::kFirstBlock;
  NodeRuns node_runs = NodeRuns::kAuto;
  SyncScheme sync = SyncScheme::kRingAllReduce;
  bool overlap = true;  // --overlap on|off
  std::optional<double> time_budget_s;
  // --min-gain as typed (parsed by parse_min_gain(), so that "abc" and "-1" are named);
  // unset: the admin config's min_gain with --topology-xml/--this-machine, else kDefaultMinGain.
  std::optional<std::string> min_gain;
  std::optional<std::string> json_file;
  // A node discovered through hwloc instead of the flag-described cluster.
  std::optional<std::string> topology_xml;
  bool this_machine = false;  // --topology-xml's live counterpart
  std::optional<int> nodes;
  std::optional<std::string> gpu_ids;
  std::optional<std::string> config;
  PlanMode mode = PlanMode::kAuto;  // auto: the fastest candidate by the timeline
  bool verbose = false;
  std::optional<std::string> profile_db;  // measured kernel times (job/device_profile.h)
  PlanOutputArgs outputs;                 // --report, --trace
};

// Adds the flags of `layerplan plan` to its subcommand `cmd`, storing them in `args`.
void add_plan_command(CLI::App& cmd, PlanCommandArgs& args);

// Runs it; returns the process exit code. Throws UsageError for bad input.
int run_plan_command(const PlanCommandArgs& args);

}  // namespace layerplan
