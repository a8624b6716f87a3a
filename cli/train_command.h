#pragma once
// `layerplan train`: trains a model with a plan file, as one process or as one rank of
// `layerplan launch` (docs/runtime.md, "Training").
#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace layerplan {

struct TrainCommandArgs {
  std::optional<std::string> plan;   // default: $LAYERPLAN_PLAN
  std::optional<std::string> model;  // default: the plan's model
  std::vector<std::string> model_path;
  std::string data = "synthetic";    // synthetic | fashion-mnist | FILE.safetensors
  std::optional<int64_t> steps;
  std::optional<int> epochs;
  double lr = 0.01, momentum = 0.9, weight_decay = 0.0;
  std::string lr_schedule = "constant";  // or "cosine": --lr decayed to 0 over the run
  std::string shuffle = "on";
  bool normalize = false;
  uint64_t seed = 1;
  std::string kernels = "onednn";
  int log_every = 10;
  std::optional<std::string> log_json;
  std::optional<std::string> profile;  // per-layer compute and communication time of each rank
  std::optional<std::string> save;  // checkpoint file, written every save_every steps and at the end
  int64_t save_every = 0;           // 0: only at the end
  std::optional<std::string> resume, init_from;
};

CLI::App* add_train_command(CLI::App& app, TrainCommandArgs& args);

// Trains and returns 0. Throws UsageError for bad input (a missing or corrupt plan, a
// plan for another model or device count, a missing data file) before anything is written.
int run_train_command(const TrainCommandArgs& args);

}  // namespace layerplan
