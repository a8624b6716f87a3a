#include "spank_plugin/planning_process.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <new>
#include <utility>

#include "model/content_hash.h"
#include "model/plan_file.h"
#include "spank_plugin/output_text.h"
#include "spank_plugin/plan_explain.h"
#include "spank_plugin/plan_file.h"
#include "spank_plugin/plan_once.h"
#include "spank_plugin/planning_test_hook.h"
#include "spank_plugin/step_environment.h"
#include "spank_plugin/step_plan.h"

namespace layerplan::spank {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

constexpr double kDayS = 24 * 3600.0;
constexpr size_t kMaxPathBytes = 4096;

// The SHA-256 of the plan file as published: the bytes there, which are those of another
// node when it published the same plan first (publish_plan() keeps its file).
std::string published_sha256(const std::string& path) {
  return sha256_hex(read_plan_text(path, "plan file '" + path + "'"));
}

ChildReport planned_report(const PlanningInput& input) {
  ChildReport report;
  const Clock::time_point t0 = Clock::now();
  const StepPlan plan = plan_step(input.request, input.node, input.nodes, input.config);
  report.plan_ms = ms_since(t0);
  const Clock::time_point t1 = Clock::now();
  report.plan_path =
      publish_plan(input.folder, plan_file_name(input.job_id, input.step_id), plan.json, input.step_start);
  report.write_ms = ms_since(t1);
  report.environment = plan_environment(report.plan_path, published_sha256(report.plan_path), plan);
  report.summary = plan.summary;
  report.warning = plan.warning;
  report.explain = plan.explain;
  if (!plan.report_html.empty()) {
    report.explain.push_back("layerplan: report written to " + publish_report(report.plan_path, plan.report_html));
  }
  return report;
}

// A plan file given as is is only checked (cheap), so every node checks it itself.
bool plans_once(const PlanningInput& input) { return !input.plan_key.empty() && !input.request.plan_file; }

ChildReport step_report(const PlanningInput& input) {
  if (!plans_once(input)) {
    ChildReport report = planned_report(input);
    report.origin = input.request.plan_file ? "plan file checked here" : "planned here";
    return report;
  }
  PlanOnceSetup setup;
  setup.folder = input.folder;
  setup.stem = "layerplan-" + std::to_string(input.job_id) + "." + step_label(input.step_id) + "." + input.plan_key;
  setup.node_label = input.node_label;
  setup.step_start = input.step_start;
  setup.wait_s = plan_wait_s(input.config.slurm.time_budget_s, input.margin_s);
  return plan_once(setup, [&] { return planned_report(input); });
}

ChildReport failed(std::string reason) {
  ChildReport report;
  report.error = std::move(reason);
  return report;
}

bool allowed_variable(const std::string& name) {
  return name == "LAYERPLAN_PLAN" || name == kPlanSha256Variable || name == "LAYERPLAN_MODE" ||
         name == "LAYERPLAN_STEP_MS" || name == "LAYERPLAN_SUMMARY";
}

// What the parent accepts from the child; the reason it does not, else empty.
std::string report_problem(const ChildReport& report, const std::string& folder) {
  const std::string& path = report.plan_path;
  if (path.size() > kMaxPathBytes || path.rfind(folder + "/", 0) != 0 ||
      path.find('/', folder.size() + 1) != std::string::npos || has_control_characters(path)) {
    return "a plan file path outside the plan folder";
  }
  bool names_plan = false;
  for (const auto& [name, value] : report.environment) {
    if (!allowed_variable(name)) return "a variable other than LAYERPLAN_*";
    if (name == kPlanSha256Variable && !is_sha256_hex(value)) return "a " + name + " that is not a SHA-256";
    if (name == "LAYERPLAN_PLAN") {
      if (value != path) return "a LAYERPLAN_PLAN other than its plan file";
      names_plan = true;
    }
  }
  return names_plan ? "" : "no LAYERPLAN_PLAN";
}

// Every text from the child as printable() makes it; the path has been checked instead.
ChildReport made_printable(ChildReport report) {
  report.error = printable(report.error);
  report.origin = printable(report.origin);
  report.summary = printable(report.summary);
  report.warning = printable(report.warning);
  for (std::string& line : report.explain) line = printable(line);
  for (auto& entry : report.environment) entry.second = printable(entry.second);
  return report;
}

}  // namespace

ChildLimits planning_limits(double time_budget_s, double margin_s, size_t memory_mb) {
  ChildLimits limits;
  limits.deadline_s = std::min(time_budget_s, kDayS) + margin_s;
  limits.cpu_s = std::min(time_budget_s, kDayS) + margin_s * 0.75;
  limits.memory_bytes = memory_mb << 20;
  limits.max_output_bytes = kMaxReportBytes;
  return limits;
}

double plan_wait_s(double time_budget_s, double margin_s) { return std::min(time_budget_s, kDayS) + margin_s / 2; }

std::string plan_step_report(const PlanningInput& input) {
  try {
    if (std::optional<std::string> hooked = planning_test_hook()) return *hooked;
    return encode_child_report(step_report(input));
  } catch (const std::bad_alloc&) {
    return encode_child_report(failed("out of memory: the planning process may map " + std::to_string(input.memory_mb) +
                                      " MiB beyond slurmstepd's (plugstack.conf argument planning_memory_mb)"));
  } catch (const std::exception& e) {
    return encode_child_report(failed(e.what()));
  } catch (...) {
    return encode_child_report(failed("internal error while planning"));
  }
}

ChildReport plan_in_child(const PlanningInput& input, const ChildIdentity& user) {
  ChildOutcome outcome;
  ChildLimits limits = planning_limits(input.config.slurm.time_budget_s, input.margin_s, input.memory_mb);
  // A node that waits for another's plan in vain then plans itself; waiting takes no CPU.
  if (plans_once(input)) limits.deadline_s += plan_wait_s(input.config.slurm.time_budget_s, input.margin_s);
  try {
    outcome = run_isolated(user, limits, [&] { return plan_step_report(input); });
  } catch (const std::exception& e) {
    return failed(std::string("cannot start the planning process: ") + e.what());
  }
  if (!outcome.failure.empty()) return failed("the planning process " + outcome.failure);
  ChildReport report;
  try {
    report = decode_child_report(outcome.output);
  } catch (const std::exception& e) {
    return failed(std::string("the planning process sent a ") + e.what());
  }
  if (report.error.empty()) {
    const std::string problem = report_problem(report, input.folder);
    if (!problem.empty()) return failed("the planning process sent " + problem);
  }
  return made_printable(std::move(report));
}

}  // namespace layerplan::spank
