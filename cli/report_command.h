#pragma once
// `layerplan report PLAN.json`: the HTML report of a plan file (report/report_page.h),
// re-priced on the cluster it names, with measured profiles next to the prediction.
#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "planner/cost_model.h"

namespace layerplan {

struct ReportCommandArgs {
  std::string plan;
  std::optional<std::string> output;  // default: the plan's path with .html for .json
  std::vector<std::string> measured;  // `layerplan train --profile` files
  std::optional<std::string> cluster_file;
  std::vector<std::string> model_path;
  SyncScheme sync = SyncScheme::kRingAllReduce;
  double scaling_budget_s = 1.0;
  bool scaling = true;
  std::optional<std::string> profile_db;  // measured kernel times (job/device_profile.h)
};

void add_report_command(CLI::App& cmd, ReportCommandArgs& args);
// Writes the report and says where; returns 0. Throws UsageError for bad input, before
// anything is written.
int run_report_command(const ReportCommandArgs& args);

}  // namespace layerplan
