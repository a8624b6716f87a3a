#pragma once
// `layerplan launch --nproc N [--backend cpu|gpu] -- COMMAND ARGS...`: runs N ranks of a
// command on this machine (launcher/local_launcher.h says what each rank gets and what
// happens when one fails).
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "cli/backend_option.h"

namespace layerplan {

struct LaunchCommandArgs {
  int nproc = 1;
  Backend backend = Backend::kCpu;
  double grace_s = 3.0;
  std::vector<std::string> command;
};

// Adds the flags of `layerplan launch` to its subcommand `cmd`, storing them in `args`.
void add_launch_command(CLI::App& cmd, LaunchCommandArgs& args);

// Takes everything after the `--` that ends the flags of a `layerplan launch` command line
// into args.command and returns the argc to give CLI11 (the words before it). A `--` after
// the command (`launch --nproc 2 prog -- x`) is the command's own and stays with it.
int split_launch_argv(int argc, char** argv, LaunchCommandArgs& args);

// Runs it after parsing: the words CLI11 left over in `launch` (a command given without
// `--`) become the command. Returns the process exit code (0, or the failing rank's, see
// LaunchResult). Throws UsageError for bad input (an unknown flag, a command both before
// and after `--`, ...), before any rank starts.
int run_launch_command(const CLI::App& launch, const LaunchCommandArgs& args);

}  // namespace layerplan
