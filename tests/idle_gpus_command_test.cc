// `layerplan plan` on a one-NIC cluster (64 H100, 8 per node, one 100 Gb/s NIC per node, bf16)
// where a plan on one node beats data parallelism over all of them: the text report, the plan
// file and the HTML report say how many GPUs it leaves idle and what the step costs on the
// nodes it uses (docs/planner.md §11). And `--min-gain` (§12): a bad value is exit 2 naming it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli_harness.h"

namespace layerplan {
namespace {

using namespace testing_cli;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

// At 4 images per GPU the step is short and data parallelism's all-reduce over one NIC per
// node costs more than the 56 more GPUs save.
const std::vector<std::string> kOneNic = {
    "plan", "--model",    "resnet50", "--gpus",          "64", "--gpus-per-node", "8", "--gpu", "h100", "--precision",
    "bf16", "--inter-bw", "100",      "--nics-per-node", "1",  "--batch-per-gpu", "4"};

std::vector<std::string> one_nic(std::vector<std::string> more) {
  std::vector<std::string> args = kOneNic;
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// Needs the planner to rate the sub-cluster candidates (make_plan() with
// PlanOptions::node_prefixes) and fill Plan::idle_devices, used_nodes and min_gain.
TEST(IdleGpusCommand, EveryOutputSaysHowManyGpusAreIdle) {
  ScratchDir dir;
  const std::string json = (dir.path() / "plan.json").string(), html = (dir.path() / "plan.html").string();
  const Outcome r = run(one_nic({"--json", json, "--report", html, "--report-budget", "0.5"}));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, MatchesRegex("(.|\n)*\n[0-9]+ of 64 GPUs idle: the plan uses [0-9]+ of 8 nodes, where the same "
                                  "step takes [0-9.]+ ms\n(.|\n)*"))
      << r.out;
  const nlohmann::json doc = nlohmann::json::parse(read_text(json));
  const nlohmann::json& used = doc.at("devices_used");
  EXPECT_GT(used.at("idle_devices").get<int>(), 0);
  EXPECT_EQ(used.at("job_devices"), 64);
  EXPECT_LT(used.at("used_nodes").get<int>(), 8);
  EXPECT_GT(used.at("used_nodes_step_s").get<double>(), 0.0);
  EXPECT_THAT(used.at("note").get<std::string>(), HasSubstr("of 64 GPUs idle"));
  EXPECT_DOUBLE_EQ(doc.at("margin").at("min_gain").get<double>(), 0.03);
  EXPECT_THAT(read_text(html), HasSubstr("of 64 GPUs idle"));
}

TEST(IdleGpusCommand, MinGainIsWrittenToThePlanFile) {
  ScratchDir dir;
  const std::string json = (dir.path() / "plan.json").string();
  const Outcome r = run(one_nic({"--min-gain", "0.5", "--json", json}));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(read_text(json)).at("margin").at("min_gain").get<double>(), 0.5);
}

TEST(IdleGpusCommand, DataParallelismLeavesNothingIdle) {
  ScratchDir dir;
  const std::string json = (dir.path() / "plan.json").string();
  const Outcome r = run(one_nic({"--min-gain", "0.5", "--mode", "data", "--json", json}));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const nlohmann::json doc = nlohmann::json::parse(read_text(json));
  // --mode data: data parallelism on all 64 GPUs, none idle.
  EXPECT_EQ(doc.at("devices_used").at("idle_devices"), 0);
  EXPECT_EQ(doc.at("devices_used").at("used_nodes"), 8);
  EXPECT_THAT(r.out, Not(HasSubstr("GPUs idle")));
}

TEST(IdleGpusCommand, ABadMinGainIsExitTwoNamingIt) {
  ScratchDir dir;
  const std::string json = (dir.path() / "plan.json").string();
  for (const std::string bad : {"-1", "abc", "0.03x", "nan", ""}) {
    const Outcome r = run(one_nic({"--min-gain", bad, "--json", json}));
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << describe(r);
    EXPECT_EQ(lines_of(r.err).size(), 1u) << describe(r);
    EXPECT_THAT(r.err, HasSubstr("--min-gain '" + bad + "'")) << describe(r);
    EXPECT_FALSE(fs::exists(json)) << bad;
  }
}

}  // namespace
}  // namespace layerplan
