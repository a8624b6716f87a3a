// The `layerplan` command: plan, compare and list what the planner knows.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include "cli/check_plan_command.h"
#include "cli/launch_command.h"
#include "cli/plan_command.h"
#include "cli/topo_command.h"
#include "cli/predict_command.h"
#include "cli/train_command.h"
#include "common/error.h"
#include "model/layer_math.h"
#include "model/model_file.h"
#include "model/zoo.h"
#include "topology/gpu_catalog.h"

namespace {

constexpr int kUsageExit = 2;

void list_models() {
  std::printf("%-14s %8s %14s %12s\n", "model", "layers", "parameters", "GMAC/image");
  for (const std::string& name : layerplan::zoo_model_names()) {
    const layerplan::ModelGraph g = layerplan::build_zoo_model(name, 1);
    std::printf("%-14s %8d %14lld %12.3f\n", name.c_str(), g.size(),
                static_cast<long long>(layerplan::parameter_count(g)),
                static_cast<double>(layerplan::forward_macs(g)) / 1e9);
  }
}

void list_gpus() {
  std::printf("%-6s %-22s %10s %10s %10s %10s %8s %12s\n", "name", "model", "FP32 TF/s", "TF32 TF/s", "BF16 TF/s",
              "mem GB/s", "mem GiB", "NVLink GB/s");
  for (const layerplan::GpuModel& m : layerplan::gpu_catalog()) {
    std::printf("%-6s %-22s %10.1f %10.1f %10.1f %10.0f %8.0f %12.0f\n", m.name.c_str(), m.full_name.c_str(),
                m.fp32_flops / 1e12, m.tf32_flops / 1e12, m.bf16_flops / 1e12, m.memory_bandwidth / 1e9,
                m.memory_bytes / (1024.0 * 1024.0 * 1024.0), m.nvlink_pair_bandwidth / 1e9);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"layerplan: layer-wise parallelism for CNN training on GPU clusters"};
  app.require_subcommand(1);
  layerplan::PlanCommandArgs plan_args;
  CLI::App* plan = layerplan::add_plan_command(app, plan_args);
  layerplan::TopoCommandArgs topo_args;
  CLI::App* topo = layerplan::add_topo_command(app, topo_args);
  CLI::App* models = app.add_subcommand("models", "List the built-in models");
  std::optional<std::string> export_model;
  models->add_option("--export", export_model, "Print this zoo model as a model file (docs/model-format.md)");
  CLI::App* gpus = app.add_subcommand("gpus", "List the built-in GPU figures");
  layerplan::CheckPlanArgs check_args;
  CLI::App* check = layerplan::add_check_plan_command(app, check_args);
  layerplan::LaunchCommandArgs launch_args;
  CLI::App* launch = layerplan::add_launch_command(app, launch_args);
  layerplan::TrainCommandArgs train_args;
  CLI::App* train = layerplan::add_train_command(app, train_args);
  layerplan::PredictCommandArgs predict_args;
  CLI::App* predict = layerplan::add_predict_command(app, predict_args);
  argc = layerplan::split_launch_argv(argc, argv, launch_args);  // the ranks' command follows `--`
  // CLI11 would only say that a subcommand is required; name the word that was typed.
  const auto known = [&](const char* word) {
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->check_name(word)) return true;
    }
    return false;
  };
  if (argc > 1 && argv[1][0] != '-' && !known(argv[1])) {
    std::cerr << "layerplan: unknown command '" << argv[1] << "': expected plan, topo, check-plan, launch, train, predict, models or gpus\n";
    return kUsageExit;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "layerplan: " << e.what() << " (see layerplan --help)\n";
    return kUsageExit;
  }
  try {
    if (*plan) return layerplan::run_plan_command(plan_args);
    if (*topo) return layerplan::run_topo_command(topo_args);
    if (*check) return layerplan::run_check_plan_command(check_args);
    if (*launch) return layerplan::run_launch_command(*launch, launch_args);
    if (*train) return layerplan::run_train_command(train_args);
    if (*predict) return layerplan::run_predict_command(predict_args);
    if (*models && export_model) {
      std::cout << layerplan::model_to_json(layerplan::build_zoo_model(*export_model, 1));
    } else if (*models) {
      list_models();
    }
    if (*gpus) list_gpus();
    return 0;
  } catch (const layerplan::UsageError& e) {
    std::cerr << "layerplan: " << e.what() << "\n";
    return kUsageExit;
  } catch (const std::exception& e) {
    std::cerr << "layerplan: internal error: " << e.what() << "\n";
    return 1;
  }
}
