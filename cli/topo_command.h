#pragma once
// `layerplan topo`: what discovery found on a node (this machine or an hwloc XML export)
// and how the planner prices it: the GPUs, the GPU×GPU bandwidth matrix, the NICs, and
// where each value came from.
#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace layerplan {

struct TopoCommandArgs {
  std::optional<std::string> topology_xml;
  std::optional<std::string> gpu_ids;  // "0,2": positions in PCI bus-id order
  std::optional<std::string> config;   // admin TOML
  std::optional<std::string> json_file;
  bool no_nvml = false;
};

// Adds the flags of `layerplan topo` to its subcommand `cmd`.
void add_topo_command(CLI::App& cmd, TopoCommandArgs& args);

// Returns the exit code; throws UsageError for bad input.
int run_topo_command(const TopoCommandArgs& args);

}  // namespace layerplan
