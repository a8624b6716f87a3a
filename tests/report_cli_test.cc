// `layerplan plan --report/--trace`, `layerplan report` and `layerplan train --trace` as a
// user runs them: the files are written, parse (tests/report_xml.h, tests/trace_check.h),
// and bad input is one line and exit 2 with nothing written.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/cli_harness.h"
#include "tests/report_xml.h"
#include "tests/trace_check.h"

namespace layerplan {
namespace {

using namespace testing_cli;
using testing_report::find_all;
using testing_report::parse_xml;
using testing_trace::check_trace;

TEST(ReportCli, PlanWritesReportAndTrace) {
  ScratchDir dir;
  const Outcome r = run({"plan", "--model", "alexnet", "--gpus", "8", "--report", dir.file("a.html"), "--trace",
                         dir.file("a.json"), "--report-budget", "0.5"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(has_line_starting(r, "report written to "));
  EXPECT_TRUE(has_line_starting(r, "predicted step trace written to "));
  const testing_report::XmlDoc doc = parse_xml(read_text(dir.file("a.html")));
  EXPECT_EQ(find_all(doc, "g", "layer").size(), 23U);  // alexnet's layers
  // 4, 8, 16, 32 GPUs x the chosen plan, the layer-wise search and 3 baselines
  EXPECT_EQ(find_all(doc, "circle", "point").size(), 4U * 5);
  const testing_trace::TraceSummary trace = check_trace(read_text(dir.file("a.json")));
  EXPECT_TRUE(trace.problems.empty()) << trace.problems.front();
  EXPECT_EQ(trace.process_names.size(), 8U);
}

// Data parallelism chosen over a different searched plan (ResNet-50 on 4 H100, within the
// simplicity margin): the text and the HTML list each strategy once, the searched plan too.
TEST(ReportCli, AChosenBaselineIsListedOnceInTheTextAndThePage) {
  ScratchDir dir;
  const Outcome r = run({"plan", "--model", "resnet50", "--gpus", "4", "--gpu", "h100", "--report", dir.file("r.html"),
                         "--report-budget", "0.5"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  // The strategy table: from its header to the line under it that explains it.
  std::vector<std::string> rows;
  bool in_table = false;
  for (const std::string& line : lines_of(r.out)) {
    if (line.rfind("step: ", 0) == 0) in_table = false;
    if (in_table) rows.push_back(line.substr(0, line.find("  ")));
    if (line.rfind("strategy ", 0) == 0 && line.find("additive ms") != std::string::npos) in_table = true;
  }
  EXPECT_EQ(rows,
            (std::vector<std::string>{"data parallel (chosen)", "layer-wise (searched)", "model parallel", "owt"}))
      << r.out;
  const testing_report::XmlDoc doc = parse_xml(read_text(dir.file("r.html")));
  std::vector<std::string> html_rows;
  for (const xmlNode* tr : find_all(doc, "tr")) {
    const std::string role = testing_report::attribute(tr, "data-role");
    const std::string name = testing_report::attribute(tr, "data-strategy");
    if (!name.empty()) html_rows.push_back(name + (role.empty() ? "" : " (" + role + ")"));
  }
  EXPECT_EQ(html_rows, rows);
}

TEST(ReportCli, ReportCommandRepricesAPlanFileWithMeasuredProfiles) {
  ScratchDir dir;
  ASSERT_EQ(run({"plan", "--model", "lenet5", "--gpus", "2", "--batch", "16", "--json", dir.file("p.json")}).exit_code,
            0);
  const std::string profile = dir.file("profile.json");
  write_text(profile, R"({"rank": 0, "steps": 2, "layers": [{"layer": "conv1", "compute_s": 0.5,
    "moves": {"seconds": 0.25, "calls": 1}, "statistics_reductions": {"seconds": 0, "calls": 0}}]})");
  const Outcome r = run({"report", dir.file("p.json"), "--measured", profile, "--no-scaling"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.err, "");  // re-priced as the plan said
  const testing_report::XmlDoc doc = parse_xml(read_text(dir.file("p.html")));
  EXPECT_EQ(find_all(doc, "table", "measured").size(), 1U);
  EXPECT_TRUE(find_all(doc, "circle", "point").empty());
}

TEST(ReportCli, BadInputIsOneLineAndWritesNothing) {
  ScratchDir dir;
  Outcome r = run({"plan", "--model", "lenet5", "--gpus", "2", "--report", dir.file("x.html"), "--report-budget", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "layerplan: --report-budget 0.000000: expected a positive number of seconds\n");
  write_text(dir.file("not-a-plan.json"), "{}");
  r = run({"report", dir.file("not-a-plan.json"), "-o", dir.file("y.html")});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_EQ(lines_of(r.err).size(), 1U) << r.err;
  r = run({"plan", "--model", "lenet5", "--gpus", "2", "--json", dir.file("p.json"), "--trace",
           dir.file("no-such-folder/t.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("layerplan: --trace '", 0), 0U) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("p.json")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.html")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("y.html")));
}

TEST(ReportCli, LaunchedTrainingMergesEveryRanksTrace) {
  ScratchDir dir;
  ASSERT_EQ(run({"plan", "--model", "lenet5", "--gpus", "2", "--batch", "16", "--json", dir.file("p.json")}).exit_code,
            0);
  const Outcome r = run({"launch", "--nproc", "2", "--", kBinary, "train", "--plan", dir.file("p.json"), "--steps", "3",
                         "--log-every", "100", "--trace", dir.file("t.json")});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const testing_trace::TraceSummary trace = check_trace(read_text(dir.file("t.json")));
  EXPECT_TRUE(trace.problems.empty()) << trace.problems.front();
  ASSERT_EQ(trace.process_names.size(), 2U);
  EXPECT_EQ(trace.process_names.at(1), "rank 1 (measured, mean of 2 steps)");
  EXPECT_GT(trace.spans, 2 * 5);  // every layer's forward and backward compute at least
  EXPECT_FALSE(std::filesystem::exists(dir.file("t.json.rank0")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("t.json.rank1")));
}

}  // namespace
}  // namespace layerplan
