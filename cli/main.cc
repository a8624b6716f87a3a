// The `layerplan` command: plan, compare and list what the planner knows, train and launch.
// Every command is one row of the table in commands(); the rest is parsing and exit codes.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "cli/catalog_commands.h"
#include "cli/check_plan_command.h"
#include "cli/crash_report.h"
#include "cli/launch_command.h"
#include "cli/plan_command.h"
#include "cli/predict_command.h"
#include "cli/report_command.h"
#include "cli/topo_command.h"
#include "cli/train_command.h"
#include "common/error.h"
#include "common/version.h"
#include "runtime/communicator.h"

namespace {

using namespace layerplan;

constexpr int kUsageExit = 2;

// Runs a command once the command line is parsed; returns the exit code.
using Runner = std::function<int()>;

// One row of the command table: adds the command's subcommand and flags to the app and
// returns the subcommand and what runs it.
using Command = std::function<std::pair<CLI::App*, Runner>(CLI::App& app)>;

// A command from its name, help line, the function that adds its flags to the subcommand
// and the one that runs it with them.
template <typename Args>
Command command(const char* name, const char* description, void (*add)(CLI::App&, Args&), int (*run)(const Args&),
                std::shared_ptr<Args> args = std::make_shared<Args>()) {
  return [=](CLI::App& app) {
    CLI::App* cmd = app.add_subcommand(name, description);
    add(*cmd, *args);
    return std::pair<CLI::App*, Runner>(cmd, [=] { return run(*args); });
  };
}

// The same for a command whose run function also reads its parsed subcommand.
template <typename Args>
Command command(const char* name, const char* description, void (*add)(CLI::App&, Args&),
                int (*run)(const CLI::App&, const Args&), std::shared_ptr<Args> args = std::make_shared<Args>()) {
  return [=](CLI::App& app) {
    CLI::App* cmd = app.add_subcommand(name, description);
    add(*cmd, *args);
    return std::pair<CLI::App*, Runner>(cmd, [=] { return run(*cmd, *args); });
  };
}

// Every command, in the order `layerplan --help` lists them. `launch` takes the ranks'
// command out of the line before CLI11 parses it (split_launch_argv), hence its arguments
// made beforehand.
std::vector<Command> commands(const std::shared_ptr<LaunchCommandArgs>& launch_args) {
  return {
      command("plan", "Choose a configuration for every layer and compare with the baselines", add_plan_command,
              run_plan_command),
      command("report", "Write a plan file's HTML report: layer graph, device grid, step timelines, scaling",
              add_report_command, run_report_command),
      command("topo", "Show the GPUs, links and NICs of a node and how they are priced", add_topo_command,
              run_topo_command),
      command("models", "List the built-in models", add_models_command, run_models_command),
      command("gpus", "List the built-in GPU figures", add_gpus_command, run_gpus_command),
      command("check-plan", "Read a plan file back and check it against a model and GPU count", add_check_plan_command,
              run_check_plan_command),
      command("launch", "Run N ranks of a command on this machine (like torchrun)", add_launch_command,
              run_launch_command, launch_args),
      command("train", "Train a model with a plan file (one process, or one rank of launch)", add_train_command,
              run_train_command),
      command("predict",
              "Predict a plan's step time on this CPU: its tiles' compute measured here, communication priced",
              add_predict_command, run_predict_command),
  };
}

// "plan, topo, ... or gpus": the names of the app's commands.
std::string command_names(const CLI::App& app) {
  const std::vector<const CLI::App*> subs = app.get_subcommands([](const CLI::App*) { return true; });
  std::string names;
  for (size_t i = 0; i < subs.size(); ++i) {
    if (i > 0) names += i + 1 == subs.size() ? " or " : ", ";
    names += subs[i]->get_name();
  }
  return names;
}

bool is_command(const CLI::App& app, const char* word) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->check_name(word)) return true;
  }
  return false;
}

// The node this process runs on, for the line a failed rank prints: Slurm's node name
// (several slurmd may share one host), else the host name.
std::string node_name() {
  if (const char* slurm_node = std::getenv("SLURMD_NODENAME"); slurm_node != nullptr && *slurm_node != '\0') {
    return slurm_node;
  }
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) return "unknown node";
  return host;
}

int run_parsed(const std::vector<std::pair<CLI::App*, Runner>>& added) {
  try {
    for (const auto& [cmd, run] : added) {
      if (*cmd) return run();
    }
    return 0;
  } catch (const UsageError& e) {
    std::cerr << "layerplan: " << e.what() << "\n";
    return kUsageExit;
  } catch (const CommError& e) {  // a peer died or stopped answering: name this rank's node
    std::cerr << "layerplan: on " << node_name() << ": " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "layerplan: internal error: " << e.what() << "\n";
    return 1;
  }
}

int parse_and_run(int argc, char** argv) {
  CLI::App app{"layerplan: layer-wise parallelism for CNN training on GPU clusters"};
  app.set_version_flag("--version", version_line(), "Print layerplan's version and the git commit it was built from");
  app.require_subcommand(1);
  const auto launch_args = std::make_shared<LaunchCommandArgs>();
  std::vector<std::pair<CLI::App*, Runner>> added;
  for (const Command& add : commands(launch_args)) added.push_back(add(app));
  argc = split_launch_argv(argc, argv, *launch_args);  // the ranks' command follows `--`
  // CLI11 would only say that a subcommand is required; name the word that was typed.
  if (argc > 1 && argv[1][0] != '-' && !is_command(app, argv[1])) {
    std::cerr << "layerplan: unknown command '" << argv[1] << "': expected " << command_names(app) << "\n";
    return kUsageExit;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "layerplan: " << e.what() << " (see layerplan --help)\n";
    return kUsageExit;
  }
  return run_parsed(added);
}

}  // namespace

int main(int argc, char** argv) {
  layerplan::install_crash_report();
  try {
    return parse_and_run(argc, argv);
  } catch (const std::exception& e) {  // building the command line's parser failed
    std::fprintf(stderr, "layerplan: internal error: %s\n", e.what());
    return 1;
  } catch (...) {
    return 1;
  }
}
