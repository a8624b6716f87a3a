// The `layerplan` command as a user meets it: what it prints, its exit codes, and that bad
// input gives one clear line and exit code 2 without touching an existing plan file.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "planner/plan_json.h"
#include "planner/zoo.h"

namespace layerplan {
namespace {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Unique per process: ctest runs each test case as its own process, several at a time.
std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("layerplan_cmd_test_" + std::to_string(getpid()) + "_" + name))
      .string();
}

CommandResult layerplan(const std::string& args) {
  const std::string out = temp_path("stdout"), err = temp_path("stderr");
  const std::string command = std::string(LAYERPLAN_BINARY_DIR) + "/layerplan " + args + " >" + out + " 2>" + err;
  const int status = std::system(command.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(out);
  r.err = read_file(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

int count_lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

TEST(LayerplanPlan, PrintsARowPerLayerTheBaselinesAndTheSpeedup) {
  const CommandResult r = layerplan("plan --model alexnet --gpus 16 --gpus-per-node 4 --gpu p100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ModelGraph g = alexnet(512);
  for (const Layer& l : g.layers()) EXPECT_NE(r.out.find("\n" + l.name + " "), std::string::npos) << l.name;
  for (const char* s : {"data parallel", "model parallel", "owt", "layer-wise vs data parallel:", "search:"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  }
  EXPECT_NE(r.out.find("4 nodes x 4 Tesla P100"), std::string::npos);
  EXPECT_EQ(r.err, "");
}

TEST(LayerplanPlan, VerboseAddsTheConfigurationCountColumn) {
  EXPECT_EQ(layerplan("plan --model lenet5 --gpus 4").out.find("configs"), std::string::npos);
  EXPECT_NE(layerplan("plan --model lenet5 --gpus 4 -v").out.find("configs"), std::string::npos);
}

TEST(LayerplanPlan, JsonFileHoldsAPlanThatReadsBack) {
  const std::string path = temp_path("plan.json");
  std::filesystem::remove(path);
  const CommandResult r = layerplan("plan --model lenet5 --gpus 8 --gpus-per-node 4 --json " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ModelGraph g = lenet5(256);
  const auto configs = configurations_from_json(read_file(path), g, 8);
  EXPECT_EQ(configs.size(), static_cast<size_t>(g.size()));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(LayerplanPlan, ATinyTimeBudgetWarnsAndStillSucceeds) {
  const CommandResult r = layerplan("plan --model vgg16 --gpus 16 --time-budget 0.000001");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("layerplan: warning: the search did not finish"), std::string::npos) << r.err;
}

TEST(LayerplanPlan, GpusPerNodeAloneKeepsSixteenGpus) {
  EXPECT_NE(layerplan("plan --model lenet5 --gpus-per-node 8").out.find("batch 512, 2 nodes x 8"), std::string::npos);
}

// Each case: arguments, and a fragment the one-line message must contain.
struct BadInput {
  const char* args;
  const char* message;
};

void PrintTo(const BadInput& b, std::ostream* os) { *os << "layerplan " << b.args; }

class LayerplanBadInput : public testing::TestWithParam<BadInput> {};

TEST_P(LayerplanBadInput, GivesOneLineAndExitCodeTwoAndLeavesThePlanFileAlone) {
  const std::string path = temp_path("kept.json");
  { std::ofstream(path) << "previous plan\n"; }
  const CommandResult r = layerplan(std::string(GetParam().args) + " --json " + path);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("layerplan: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(GetParam().message), std::string::npos) << r.err;
  EXPECT_EQ(read_file(path), "previous plan\n");
}

const std::string kData = std::string(LAYERPLAN_SOURCE_DIR) + "/tests/data/";

INSTANTIATE_TEST_SUITE_P(
    Cases, LayerplanBadInput,
    testing::Values(BadInput{"plan --model resnet18", "unknown model 'resnet18'"},
                    BadInput{"plan --gpu k80", "unknown GPU 'k80'"},
                    BadInput{"plan --gpus 0", "--gpus 0"},
                    BadInput{"plan --gpus 12", "12 GPUs: expected a power of two"},
                    BadInput{"plan --gpus 16 --gpus-per-node 3", "--gpus 16: expected a multiple of the 3"},
                    BadInput{"plan --gpus 8 --gpus 6", "--gpus"},
                    BadInput{"plan --gpus 16 --batch 500", "batch 500 cannot be split over 16 GPUs"},
                    BadInput{"plan --batch 0", "--batch 0"},
                    BadInput{"plan --time-budget -1", "--time-budget"},
                    BadInput{"plan --placement bogus", "--placement bogus"},
                    BadInput{"plan --sync tree", "--sync tree"},
                    BadInput{"plan --precision fp16", "unknown precision 'fp16'"},
                    BadInput{"plan --inter-bw -5", "inter-node bandwidth = -5"},
                    BadInput{"plan --cluster /nonexistent/cluster.toml", "cannot read cluster file"},
                    BadInput{"plan --no-such-flag", "--no-such-flag"}, BadInput{"plan --gpus many", "--gpus"}),
    [](const testing::TestParamInfo<BadInput>& param_info) { return "case" + std::to_string(param_info.index); });

TEST(LayerplanBadInput, AMalformedClusterFileNamesLineAndColumn) {
  const std::string path = temp_path("broken.toml");
  { std::ofstream(path) << "[cluster]\nnodes = 4\ngpus_per_nod = 4\n"; }
  const CommandResult r = layerplan("plan --cluster " + path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(path + ":3:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown key 'cluster.gpus_per_nod'"), std::string::npos) << r.err;
}

TEST(LayerplanLists, ModelsAndGpus) {
  const CommandResult models = layerplan("models");
  ASSERT_EQ(models.exit_code, 0);
  for (const std::string& name : zoo_model_names()) EXPECT_NE(models.out.find(name), std::string::npos) << name;
  EXPECT_NE(models.out.find("23834568"), std::string::npos);  // Inception-v3 without aux head
  const CommandResult gpus = layerplan("gpus");
  ASSERT_EQ(gpus.exit_code, 0);
  for (const char* g : {"p100", "v100", "a100", "h100", "h200"}) EXPECT_NE(gpus.out.find(g), std::string::npos) << g;
}

TEST(LayerplanLists, NoSubcommandIsAUsageError) { EXPECT_EQ(layerplan("").exit_code, 2); }

}  // namespace
}  // namespace layerplan
