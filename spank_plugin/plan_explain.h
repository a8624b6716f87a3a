#pragma once
// The table --layerplan-explain prints into the job's output: the summary, one row per
// layer with its split and its predicted share of the step (the additive figures the
// search minimizes), their total, and the step time by the timeline (what the plan was
// chosen by and LAYERPLAN_STEP_MS says), with its parts.
#include <string>
#include <vector>

#include "job/job_plan.h"

namespace layerplan::spank {

std::vector<std::string> explain_lines(const JobPlan& job);

// The plan's HTML report (report/report_page.h; no scaling chart: that would plan the
// model again at other GPU counts, within the step's start).
std::string explain_report_html(const JobPlan& job);

// Writes `html` next to the published plan file `plan_path`, as its name with .html for
// .json, mode 0600, through common/safe_write.h (a temporary file of a random name renamed
// onto it; a symbolic link there is refused), and returns the path. Throws UsageError
// naming the path on failure.
std::string publish_report(const std::string& plan_path, const std::string& html);

}  // namespace layerplan::spank
