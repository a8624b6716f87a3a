#pragma once
// `layerplan plan`: plan a zoo model on a cluster described by flags or a cluster file.
#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace layerplan {

struct PlanCommandArgs {
  std::string model = "vgg16";
  std::optional<int64_t> batch;  // default: 32 images per GPU, as in the paper
  int64_t batch_per_gpu = 32;
  std::optional<int> gpus;
  std::optional<int> gpus_per_node;
  std::optional<std::string> gpu;
  std::optional<std::string> precision;
  std::optional<double> intra_bandwidth_gbytes;
  std::optional<double> inter_bandwidth_gbits;
  std::optional<int> nics_per_node;
  std::optional<std::string> cluster_file;
  std::string placement = "first-block";
  std::string sync = "ring";
  std::optional<double> time_budget_s;
  std::optional<std::string> json_file;
  // A node discovered through hwloc instead of the flag-described cluster.
  std::optional<std::string> topology_xml;
  bool this_machine = false;  // --topology-xml's live counterpart
  std::optional<int> nodes;
  std::optional<std::string> gpu_ids;
  std::optional<std::string> config;
  std::string mode = "layerwise";
  bool verbose = false;
};

// Registers the subcommand's flags on `app`, storing them in `args`.
CLI::App* add_plan_command(CLI::App& app, PlanCommandArgs& args);

// Runs it; returns the process exit code. Throws UsageError for bad input.
int run_plan_command(const PlanCommandArgs& args);

}  // namespace layerplan
