// The `layerplan` command as a user runs it: `plan` prints a row per layer, the
// predicted speedup and the baselines; `--json` writes a plan file the runtime can read
// and never clobbers one on failure; `models` and `gpus` list what is built in; and
// every kind of bad input ends with exit code 2 and exactly one line on stderr that
// starts with "layerplan:" and names what was wrong (no crash, no usage dump).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "common/version.h"
#include "model/zoo.h"
#include "planner/plan_json.h"
#include "tests/cli_harness.h"

namespace layerplan {
namespace {

using namespace testing_cli;  // NOLINT: the harness is this file's vocabulary
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
namespace fs = std::filesystem;

TEST(CliBinary, Exists) { ASSERT_TRUE(fs::exists(kBinary)) << kBinary << ": build the layerplan target"; }

TEST(CliPlan, AlexNetOnSixteenP100PrintsEveryLayerTheSpeedupAndTheBaselines) {
  const Outcome r = run({"plan", "--model", "alexnet", "--gpus", "16", "--gpus-per-node", "4", "--gpu", "p100"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, StartsWith("model alexnet, batch 512, 4 nodes x 4 Tesla P100"));
  // One row per layer, named in the first column.
  const ModelGraph graph = alexnet(512);
  for (const Layer& l : graph.layers()) {
    EXPECT_TRUE(has_line_starting(r, l.name + " ")) << "no row for layer " << l.name << "\n" << r.out;
  }
  EXPECT_THAT(r.out, HasSubstr("on gpus 0-15"));
  // A row per strategy: the layer-wise plan and the three baselines.
  for (const std::string s : {"layer-wise ", "data parallel ", "model parallel ", "owt "}) {
    EXPECT_TRUE(has_line_starting(r, s)) << "no row for strategy '" << s << "'\n" << r.out;
  }
  // The predicted speedup over data parallelism, and over the best baseline.
  const std::regex speedup(
      R"(layer-wise vs data parallel: ([0-9]+\.[0-9]+)× faster, ([0-9]+\.[0-9]+)× less communication)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, speedup)) << r.out;
  EXPECT_GE(std::stod(m[1].str()), 1.0);
  EXPECT_GT(std::stod(m[2].str()), 1.0);
  EXPECT_TRUE(std::regex_search(
      r.out,
      std::regex(R"(layer-wise vs best baseline \((data parallel|model parallel|owt)\): ([0-9]+\.[0-9]+)× faster)")))
      << r.out;
  EXPECT_THAT(r.out, HasSubstr("search: "));
  EXPECT_THAT(r.out, Not(HasSubstr("warning")));
}

// The Slurm plugin's acceptance case: `sbatch -N3 --gpus-per-node=4` is 12 GPUs.
TEST(CliPlan, ResNet50OnThreeNodesOfFourPlansAllTwelveGpus) {
  const Outcome r = run({"plan", "--gpus", "12", "--gpus-per-node", "4", "--model", "resnet50"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, StartsWith("model resnet50, batch 384, 3 nodes x 4 "));
  EXPECT_THAT(r.out, HasSubstr("on gpus 0-11"));
  EXPECT_THAT(r.out, Not(HasSubstr("gpus 12")));
  EXPECT_TRUE(has_line_starting(r, "layer-wise ")) << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("warning")));
}

TEST(CliPlan, VerboseAddsTheConfigsColumn) {
  const Outcome plain = run({"plan", "--model", "lenet5", "--gpus", "4"});
  const Outcome verbose = run({"plan", "--model", "lenet5", "--gpus", "4", "--verbose"});
  ASSERT_EQ(plain.exit_code, 0) << describe(plain);
  ASSERT_EQ(verbose.exit_code, 0) << describe(verbose);
  EXPECT_THAT(plain.out, Not(HasSubstr("configs")));
  EXPECT_THAT(verbose.out, HasSubstr("configs"));
  // Every layer row gains a trailing count of the configurations considered.
  const ModelGraph graph = lenet5(128);
  int rows = 0;
  for (const std::string& line : lines_of(verbose.out)) {
    for (const Layer& l : graph.layers()) {
      if (line.rfind(l.name + " ", 0) != 0) continue;
      ++rows;
      EXPECT_TRUE(std::regex_search(line, std::regex(R"(\s[1-9][0-9]*$)"))) << line;
    }
  }
  EXPECT_GE(rows, graph.size());
  EXPECT_THAT(run({"plan", "--model", "lenet5", "--gpus", "4", "-v"}).out, HasSubstr("configs"));
}

TEST(CliPlan, TinyTimeBudgetWarnsAndStillSucceeds) {
  const Outcome r = run({"plan", "--model", "alexnet", "--gpus", "16", "--time-budget", "0.000001"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.err, StartsWith("layerplan: warning: "));
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_THAT(r.out, HasSubstr("warning: "));
  EXPECT_TRUE(has_line_starting(r, "data parallel "));
}

TEST(CliPlan, ClusterFileDescribesTheClusterAndFlagsOverrideIt) {
  const Outcome r = run({"plan", "--model", "lenet5", "--cluster", data_file("full_cluster.toml")});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, StartsWith("model lenet5, batch 512, 2 nodes x 8 A100"));
  const Outcome overridden =
      run({"plan", "--model", "lenet5", "--cluster", data_file("full_cluster.toml"), "--gpus", "8", "--gpu", "h100"});
  ASSERT_EQ(overridden.exit_code, 0) << describe(overridden);
  EXPECT_THAT(overridden.out, StartsWith("model lenet5, batch 256, 1 node x 8 H100"));
}

TEST(CliJson, WritesAPlanTheRuntimeCanRead) {
  ScratchDir dir;
  const fs::path file = dir.path() / "plan.json";
  const Outcome r = run({"plan", "--model", "alexnet", "--gpus", "16", "--json", file.string()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("plan written to " + file.string()));
  ASSERT_TRUE(fs::exists(file));
  EXPECT_FALSE(fs::exists(file.string() + ".tmp"));
  const std::string text = read_text(file);
  const nlohmann::json doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc.at("format"), "layerplan-plan");
  EXPECT_EQ(doc.at("version"), 1);
  EXPECT_EQ(doc.at("model"), "alexnet");
  EXPECT_EQ(doc.at("batch"), 512);
  const ModelGraph graph = alexnet(512);
  EXPECT_EQ(configurations_from_json(text, graph, 16).size(), static_cast<size_t>(graph.size()));

  // A successful run replaces an existing file.
  write_text(file, "old contents\n");
  const Outcome again = run({"plan", "--model", "alexnet", "--gpus", "16", "--json", file.string()});
  ASSERT_EQ(again.exit_code, 0) << describe(again);
  EXPECT_EQ(nlohmann::json::parse(read_text(file)).at("layers"), doc.at("layers"));
}

// Both figures of every strategy: the step by the timeline and the search's additive
// objective, in the text and the plan file; --overlap off prices today's executor.
TEST(CliPlan, ReportsTheTimelineAndTheAdditiveStepWithAndWithoutOverlap) {
  ScratchDir dir;
  for (const std::string overlap : {"on", "off"}) {
    const fs::path file = dir.path() / ("plan-" + overlap + ".json");
    const Outcome r = run({"plan", "--model", "vgg16", "--gpus", "16", "--overlap", overlap, "--json", file.string()});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_THAT(r.out, HasSubstr("additive ms"));
    EXPECT_THAT(r.out, HasSubstr(overlap == "on" ? "overlapping the backward" : "after the backward"));
    const nlohmann::json doc = nlohmann::json::parse(read_text(file));
    const nlohmann::json& p = doc.at("predicted");
    const double additive =
        p.at("compute_s").get<double>() + p.at("transfer_s").get<double>() + p.at("sync_s").get<double>();
    EXPECT_NEAR(p.at("additive_step_s").get<double>(), additive, 1e-12);
    // The step holds the whole compute and at most all of the buckets' sync.
    EXPECT_GE(p.at("step_s").get<double>(), p.at("compute_s").get<double>());
    EXPECT_NEAR(
        p.at("step_s").get<double>(),
        p.at("compute_s").get<double>() + p.at("transfer_s").get<double>() + p.at("exposed_sync_s").get<double>(),
        1e-9);
    EXPECT_FALSE(doc.at("layer_wise").is_null());
    for (const auto& b : doc.at("baselines")) EXPECT_LE(p.at("step_s").get<double>(), b.at("step_s").get<double>());
  }
}

// --mode picks what is reported and written: auto the fastest by the timeline (VGG-16 on 16
// P100: the searched plan, 231 ms against data parallelism's 237, whose 94 ms of fc buckets
// are no longer all hidden behind the backward of Winograd-priced convolutions), layerwise
// the searched plan, data/model/owt a baseline.
TEST(CliPlan, ModeChoosesTheReportedStrategy) {
  ScratchDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"auto", "layer-wise"}, {"data", "data parallel"}, {"layerwise", "layer-wise"}, {"owt", "owt"}};
  for (const auto& [mode, strategy] : cases) {
    const fs::path file = dir.path() / (mode + ".json");
    const Outcome r = run({"plan", "--model", "vgg16", "--gpus", "16", "--mode", mode, "--json", file.string()});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(nlohmann::json::parse(read_text(file)).at("strategy"), strategy) << mode;
  }
}

TEST(CliPlan, LayoutPricesTheTransposesOfTensorCoreConvolutionsOnly) {
  ScratchDir dir;
  const auto step = [&](const std::string& precision, const std::string& layout) {
    const fs::path file = dir.path() / (precision + layout + ".json");
    const Outcome r = run({"plan", "--model", "resnet50", "--gpus", "1", "--gpu", "a100", "--batch", "64",
                           "--precision", precision, "--layout", layout, "--mode", "data", "--json", file.string()});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    return nlohmann::json::parse(read_text(file)).at("predicted").at("step_s").get<double>();
  };
  EXPECT_GT(step("tf32", "nchw"), 1.1 * step("tf32", "nhwc"));  // about 40 % of ResNet-50's step
  EXPECT_EQ(step("fp32", "nchw"), step("fp32", "nhwc"));        // CUDA cores: no transposes
}

TEST(CliJson, AFailedRunLeavesAnExistingPlanFileUntouched) {
  ScratchDir dir;
  const fs::path file = dir.path() / "plan.json";
  const std::string sentinel = "{\"keep\": \"me\"}\n";
  const std::vector<std::vector<std::string>> failures = {
      {"plan", "--model", "nosuch", "--json", file.string()},
      {"plan", "--model", "alexnet", "--gpus", "16", "--batch", "500", "--json", file.string()},
      {"plan", "--model", "alexnet", "--cluster", data_file("syntax_error.toml"), "--json", file.string()},
      {"plan", "--model", "alexnet", "--placement", "bogus", "--json", file.string()},
      {"plan", "--model", "alexnet", "--frobnicate", "--json", file.string()},
      {"plan", "--model", "alexnet", "--overlap", "maybe", "--json", file.string()},
  };
  for (const auto& args : failures) {
    write_text(file, sentinel);
    const Outcome r = run(args);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_EQ(read_text(file), sentinel) << describe(r);
    EXPECT_FALSE(fs::exists(file.string() + ".tmp"));
  }
}

TEST(CliJson, UnwritableDestinationIsAUsageError) {
  ScratchDir dir;
  const fs::path file = dir.path() / "no" / "such" / "dir" / "plan.json";
  const Outcome r = run({"plan", "--model", "lenet5", "--gpus", "4", "--json", file.string()});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  ASSERT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_THAT(r.err, StartsWith("layerplan: "));
  EXPECT_THAT(r.err, HasSubstr(file.string()));
}

TEST(CliVersion, PrintsTheVersionAndTheCommit) {
  const Outcome r = run({"--version"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, version_line() + "\n");
  EXPECT_THAT(r.out, testing::StartsWith("layerplan "));
  EXPECT_THAT(r.out, HasSubstr("(commit "));
}

TEST(CliModels, ListsTheSixZooModelsInOrder) {
  const Outcome r = run({"models"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.err, "");
  const std::vector<std::string> lines = lines_of(r.out);
  const std::vector<std::string> names = {"lenet5", "alexnet", "vgg16", "resnet50", "resnet101", "inception_v3"};
  ASSERT_EQ(lines.size(), names.size() + 1) << r.out;  // a header, then one row per model
  EXPECT_EQ(zoo_model_names(), names);
  for (size_t i = 0; i < names.size(); ++i) EXPECT_THAT(lines[i + 1], StartsWith(names[i] + " "));
  EXPECT_THAT(lines[2], HasSubstr("61100840"));  // AlexNet, torchvision's parameter count
}

TEST(CliGpus, ListsP100ThroughH200InOrder) {
  const Outcome r = run({"gpus"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.err, "");
  const std::vector<std::string> lines = lines_of(r.out);
  const std::vector<std::string> names = {"p100", "p100-pcie", "v100", "t4", "a100", "h100", "h200"};
  ASSERT_EQ(lines.size(), names.size() + 1) << r.out;
  for (size_t i = 0; i < names.size(); ++i) EXPECT_THAT(lines[i + 1], StartsWith(names[i] + " "));
  EXPECT_THAT(lines[1], HasSubstr("Tesla P100"));
}

// ---- Bad input: exit code 2 and exactly one "layerplan: ..." line on stderr. ----

struct BadInput {
  std::string label;
  std::vector<std::string> args;
  std::string mentions;  // the message names the offending value
};

void PrintTo(const BadInput& b, std::ostream* os) {
  *os << "layerplan";
  for (const std::string& a : b.args) *os << " " << a;
}

std::vector<BadInput> bad_inputs() {
  return {
      {"unknown_model", {"plan", "--model", "resnet9000"}, "resnet9000"},
      {"unknown_gpu", {"plan", "--model", "lenet5", "--gpu", "k80"}, "k80"},
      {"zero_gpus", {"plan", "--model", "lenet5", "--gpus", "0"}, "--gpus 0"},
      {"negative_gpus", {"plan", "--model", "lenet5", "--gpus", "-4"}, "-4"},
      {"twelve_gpus_batch_not_divisible",
       {"plan", "--model", "lenet5", "--gpus", "12", "--batch", "100"},
       "batch 100 cannot be split over 12 GPUs: expected a multiple of 12"},
      {"three_gpus_per_node", {"plan", "--model", "lenet5", "--gpus-per-node", "3"}, "3"},
      {"gpus_not_a_multiple_of_node", {"plan", "--model", "lenet5", "--gpus", "16", "--gpus-per-node", "3"}, "3"},
      {"batch_not_divisible", {"plan", "--model", "alexnet", "--gpus", "16", "--batch", "500"}, "500"},
      {"zero_batch", {"plan", "--model", "lenet5", "--batch", "0"}, "--batch 0"},
      {"zero_batch_per_gpu", {"plan", "--model", "lenet5", "--batch-per-gpu", "0"}, "--batch-per-gpu 0"},
      {"negative_time_budget", {"plan", "--model", "lenet5", "--time-budget", "-1"}, "--time-budget"},
      {"zero_time_budget", {"plan", "--model", "lenet5", "--time-budget", "0"}, "--time-budget"},
      {"unknown_precision", {"plan", "--model", "lenet5", "--precision", "fp64"}, "fp64"},
      {"unknown_layout", {"plan", "--model", "lenet5", "--layout", "chwn"}, "chwn"},
      {"zero_inter_bandwidth", {"plan", "--model", "lenet5", "--inter-bw", "0"}, "bandwidth"},
      {"negative_intra_bandwidth", {"plan", "--model", "lenet5", "--intra-bw", "-1"}, "bandwidth"},
      {"zero_nics", {"plan", "--model", "lenet5", "--nics-per-node", "0"}, "nics"},
      {"malformed_cluster_file",
       {"plan", "--model", "lenet5", "--cluster", data_file("syntax_error.toml")},
       data_file("syntax_error.toml") + ":3:"},
      {"cluster_file_unknown_key",
       {"plan", "--model", "lenet5", "--cluster", data_file("unknown_key.toml")},
       "gpus_per_nod"},
      {"cluster_file_wrong_type",
       {"plan", "--model", "lenet5", "--cluster", data_file("wrong_type.toml")},
       "gpus_per_node"},
      {"cluster_file_negative_bandwidth",
       {"plan", "--model", "lenet5", "--cluster", data_file("negative_bandwidth.toml")},
       "-100"},
      {"missing_cluster_file",
       {"plan", "--model", "lenet5", "--cluster", data_file("does_not_exist.toml")},
       "does_not_exist.toml"},
      {"bogus_placement", {"plan", "--model", "lenet5", "--placement", "bogus"}, "bogus"},
      // Errors found by the flag parser itself.
      {"unknown_flag", {"plan", "--model", "lenet5", "--frobnicate"}, "--frobnicate"},
      {"non_numeric_gpus", {"plan", "--model", "lenet5", "--gpus", "many"}, "many"},
      {"flag_without_value", {"plan", "--model"}, "--model"},
      {"unknown_subcommand", {"replan"}, "replan"},
  };
}

class CliBadInput : public testing::TestWithParam<BadInput> {};

TEST_P(CliBadInput, ExitsTwoWithOneLayerplanLineOnStderr) {
  const BadInput& c = GetParam();
  const Outcome r = run(c.args);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  const std::vector<std::string> lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << describe(r);
  EXPECT_THAT(lines[0], StartsWith("layerplan: ")) << describe(r);
  EXPECT_THAT(lines[0], Not(HasSubstr("internal error")));
  EXPECT_THAT(lines[0], HasSubstr(c.mentions));
  EXPECT_THAT(r.out, Not(HasSubstr("plan written")));
}

INSTANTIATE_TEST_SUITE_P(Cli, CliBadInput, testing::ValuesIn(bad_inputs()),
                         [](const testing::TestParamInfo<BadInput>& param_info) { return param_info.param.label; });

}  // namespace
}  // namespace layerplan
