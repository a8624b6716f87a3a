#include "cli/launch_command.h"

#include <cmath>
#include <iostream>

#include "common/error.h"
#include "launcher/local_launcher.h"

namespace layerplan {

CLI::App* add_launch_command(CLI::App& app, LaunchCommandArgs& args) {
  CLI::App* cmd = app.add_subcommand("launch", "Run N ranks of a command on this machine (like torchrun)");
  cmd->add_option("--nproc", args.nproc, "Ranks to start")->capture_default_str();
  cmd->add_option("--backend", args.backend, "Compute and communication backend: cpu (oneDNN + Gloo)")
      ->capture_default_str();
  cmd->add_option("--grace-period", args.grace_s, "Seconds between SIGTERM and SIGKILL when stopping the ranks")
      ->capture_default_str();
  cmd->add_option("command", args.command, "The command each rank runs, after --");
  return cmd;
}

int run_launch_command(const LaunchCommandArgs& args) {
  require(std::isfinite(args.grace_s) && args.grace_s >= 0 && args.grace_s <= 600,
          "--grace-period " + std::to_string(args.grace_s) + ": expected 0 to 600 seconds");
  LaunchOptions options;
  options.nproc = args.nproc;
  options.backend = args.backend;
  options.command = args.command;
  options.grace_period = std::chrono::milliseconds(static_cast<long long>(args.grace_s * 1000));
  const LaunchResult result = launch_local(options);
  if (result.exit_code != 0) std::cerr << "layerplan launch: " << result.message << "\n";
  return result.exit_code;
}

}  // namespace layerplan
