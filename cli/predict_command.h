#pragma once
// `layerplan predict`: the step time of a plan on this CPU as the cost model prices it
// once calibrated here (docs/runtime.md, "Predicting a CPU run"). The options and the
// report; the model itself is predict/ (measurement.h, link_figures.h, step_pricer.h).
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runtime/kernels/kernels.h"

namespace layerplan {

struct PredictCommandArgs {
  std::optional<std::string> plan;   // default: $LAYERPLAN_PLAN
  std::optional<std::string> model;  // default: the plan's model
  std::vector<std::string> model_path;
  int steps = 3;                          // timed steps; the first is a warm-up and not counted
  double core_share = 1.0;                // the share of its cores a rank gets: below 1 when ranks outnumber cores
  std::optional<std::string> link;        // bench/gloo_link_bench's JSON
  std::optional<double> link_gbytes;      // or: GB/s one way between two ranks
  std::optional<double> link_latency_us;  // and the time of every message
  KernelBackend kernels = KernelBackend::kOnednn;
  std::optional<std::string> json;
  std::optional<std::string> profile_db_out;  // the measured kernel times as a profile (model/profile_db.h)
  bool verbose = false;
  bool overlap = true;  // --overlap: price what `train --overlap` runs (its default: on)
};

void add_predict_command(CLI::App& cmd, PredictCommandArgs& args);
// Prints (and with --json writes) the predicted step time; returns 0. Throws UsageError for
// bad input before anything runs.
int run_predict_command(const PredictCommandArgs& args);

}  // namespace layerplan
