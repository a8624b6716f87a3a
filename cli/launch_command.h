#pragma once
// `layerplan launch --nproc N [--backend cpu] -- COMMAND ARGS...`: runs N ranks of a
// command on this machine (launcher/local_launcher.h says what each rank gets and what
// happens when one fails).
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace layerplan {

struct LaunchCommandArgs {
  int nproc = 1;
  std::string backend = "cpu";
  double grace_s = 3.0;
  std::vector<std::string> command;
};

// Registers the subcommand's flags on `app`, storing them in `args`.
CLI::App* add_launch_command(CLI::App& app, LaunchCommandArgs& args);

// Runs it; returns the process exit code (0, or the failing rank's, see LaunchResult).
// Throws UsageError for bad input, before any rank starts.
int run_launch_command(const LaunchCommandArgs& args);

}  // namespace layerplan
