#pragma once
// `layerplan train`: trains a model with a plan file, as one process or as one rank of
// `layerplan launch` (docs/runtime.md, "Training"). The flags fill a TrainerOptions; the
// loop is runtime/training/trainer.h; this file parses and prints.
#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "cli/backend_option.h"
#include "runtime/training/trainer_options.h"

namespace layerplan {

struct TrainCommandArgs {
  std::optional<std::string> plan;   // default: $LAYERPLAN_PLAN
  std::optional<std::string> model;  // default: the plan's model
  std::vector<std::string> model_path;
  std::optional<Backend> backend;  // default: $LAYERPLAN_BACKEND, else cpu
  Precision precision = Precision::kFp32;
  std::optional<std::string> betas;  // --betas B1,B2: AdamW's beta1 and beta2
  bool no_decay_bn_bias = false;     // clears trainer.decay_bn_bias
  TrainerOptions trainer;            // every other flag (its observer is set by run_train_command)
};

// Adds the flags of `layerplan train` to its subcommand `cmd`.
void add_train_command(CLI::App& cmd, TrainCommandArgs& args);

// Trains and returns 0. Throws UsageError for bad input (a missing or corrupt plan, a
// plan for another model or device count, a missing data file) before anything is written.
int run_train_command(const TrainCommandArgs& args);

}  // namespace layerplan
