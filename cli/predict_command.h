#pragma once
// `layerplan predict`: the step time of a plan on this CPU as the cost model prices it
// once calibrated here (docs/runtime.md, "Predicting a CPU run"). Compute is measured:
// every tile of the plan runs in this process, as the paper measures each layer's
// configurations; transfers and weight synchronisation are the cost model's, over links
// of the given bandwidth and latency (measured by bench/gloo_link_bench).
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace layerplan {

struct PredictCommandArgs {
  std::optional<std::string> plan;   // default: $LAYERPLAN_PLAN
  std::optional<std::string> model;  // default: the plan's model
  std::vector<std::string> model_path;
  int steps = 3;            // timed steps; the first is a warm-up and not counted
  double core_share = 1.0;  // the share of its cores a rank gets: below 1 when ranks outnumber cores
  double link_gbytes = 0;   // GB/s one way between two ranks
  double link_latency_us = 0;
  std::string kernels = "onednn";
  std::optional<std::string> json;
  bool verbose = false;
};

CLI::App* add_predict_command(CLI::App& app, PredictCommandArgs& args);
// Prints (and with --json writes) the predicted step time; returns 0. Throws UsageError for
// bad input before anything runs.
int run_predict_command(const PredictCommandArgs& args);

}  // namespace layerplan
