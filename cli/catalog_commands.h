#pragma once
// `layerplan models` and `layerplan gpus`: what the planner has built in (the zoo and the
// GPU figures), as tables; `models --export NAME` prints a zoo model as a model file.
#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace layerplan {

struct ModelsCommandArgs {
  std::optional<std::string> export_model;  // print this model as a model file instead
  std::optional<std::string> model;         // list only this model
};

void add_models_command(CLI::App& cmd, ModelsCommandArgs& args);
int run_models_command(const ModelsCommandArgs& args);

// `layerplan gpus` takes no flags.
struct GpusCommandArgs {};

void add_gpus_command(CLI::App& cmd, GpusCommandArgs& args);
int run_gpus_command(const GpusCommandArgs& args);

}  // namespace layerplan
