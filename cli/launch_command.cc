#include "cli/launch_command.h"

#include <cmath>
#include <iostream>

#include "cli/gpu_requirements.h"
#include "common/error.h"
#include "launcher/local_launcher.h"

namespace layerplan {

void add_launch_command(CLI::App& cmd, LaunchCommandArgs& args) {
  cmd.add_option("--nproc-per-node,--nproc", args.nproc, "Ranks to start (torchrun's name; --nproc is the same)")
      ->capture_default_str();
  add_word_option(&cmd, "--backend", args.backend, backend_words(),
                  "cpu (oneDNN + Gloo) or gpu (rank k on the k-th visible GPU; cuDNN/cuBLAS + NCCL)");
  cmd.add_option("--grace-period", args.grace_s, "Seconds between SIGTERM and SIGKILL when stopping the ranks")
      ->capture_default_str();
  // The ranks' command starts at the first word that is not one of our flags (as torchrun
  // takes a script and its flags); split_launch_argv() has already taken what follows `--`.
  cmd.prefix_command();
  cmd.footer("Usage: layerplan launch --nproc-per-node N [--backend cpu|gpu] [--] COMMAND ARGS...");
}

int split_launch_argv(int argc, char** argv, LaunchCommandArgs& args) {
  if (argc < 2 || std::string(argv[1]) != "launch") return argc;
  // Only a `--` among our own flags is ours; one after the command belongs to the command.
  for (int i = 2; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") {
      args.command.assign(argv + i + 1, argv + argc);
      return i;
    }
    if (word == "--nproc-per-node" || word == "--nproc" || word == "--backend" || word == "--grace-period") {
      ++i;  // its value
    } else if (word.empty() || word[0] != '-') {
      break;  // the command, given without `--`
    }
  }
  return argc;
}

int run_launch_command(const CLI::App& launch, const LaunchCommandArgs& args) {
  std::vector<std::string> command = args.command;
  if (const std::vector<std::string> words = launch.remaining(); !words.empty()) {
    require(words.front().empty() || words.front()[0] != '-',
            "launch: unknown flag '" + words.front() + "' (the command to run goes after --)");
    require(command.empty(), "launch: '" + words.front() + "' before --: expected the whole command after --");
    command = words;
  }
  require(std::isfinite(args.grace_s) && args.grace_s >= 0 && args.grace_s <= 600,
          "--grace-period " + std::to_string(args.grace_s) + ": expected 0 to 600 seconds");
  // Rank k computes on the k-th visible GPU (runtime/gpu/gpu_binding.h): there must be one per rank.
  if (args.backend == Backend::kGpu && args.nproc >= 1) require_visible_gpus(args.nproc);
  LaunchOptions options;
  options.nproc = args.nproc;
  options.backend = args.backend == Backend::kGpu ? "gpu" : "cpu";
  options.command = command;
  options.grace_period = std::chrono::milliseconds(static_cast<long long>(args.grace_s * 1000));
  const LaunchResult result = launch_local(options);
  if (result.exit_code != 0) std::cerr << "layerplan launch: " << result.message << "\n";
  return result.exit_code;
}

}  // namespace layerplan
