#pragma once
// `layerplan check-plan FILE`: reads a plan file back and checks it against a model and
// a device count (by default the file's own), as the runtime and the Slurm plugin do.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace layerplan {

struct CheckPlanArgs {
  std::string file;
  std::optional<std::string> model;  // zoo name or model file; default: the file's model
  std::optional<int64_t> batch;      // default: the file's batch
  std::optional<int> gpus;           // default: the file's device count
  std::vector<std::string> model_path;
};

// Adds the flags of `layerplan check-plan` to its subcommand `cmd`.
void add_check_plan_command(CLI::App& cmd, CheckPlanArgs& args);

// Prints one line about the plan and returns 0; throws UsageError when it does not fit.
int run_check_plan_command(const CheckPlanArgs& args);

}  // namespace layerplan
