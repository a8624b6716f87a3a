// A plan file carries its model with it (docs/plan-format.md, "The model of a plan"):
// made from a model file in one folder, it trains from any working directory, and the
// model may move beside the plan; a changed model file, another user's plan file and a
// plan that is not the one the Slurm plugin published are refused with one line, exit 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/content_hash.h"
#include "tests/cli_harness.h"

namespace layerplan {
namespace {

using namespace testing_cli;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::string onnx_file(const std::string& name) {
  return std::string(LAYERPLAN_SOURCE_DIR) + "/tests/onnx_data/" + name;
}

// A model folder, a plan folder and a third folder to run from.
class PlanModelCommands : public testing::Test {
 protected:
  void SetUp() override {
    for (const fs::path& d : {models_, plans_, elsewhere_}) fs::create_directories(d);
  }
  // `layerplan plan --model NAME` run in the model folder, the plan written to the plan folder.
  void plan_from_models_folder(const std::string& name) {
    const Outcome r = run_in(models_, {"plan", "--model", name, "--batch", "4", "--gpus", "1", "--json", plan_});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
  }
  Outcome train_elsewhere(const std::vector<std::string>& env = {}) {
    return run_in(elsewhere_, {"train", "--plan", plan_, "--steps", "1", "--kernels", "reference"}, env);
  }
  static void expect_one_line_refusal(const Outcome& r, const std::vector<std::string>& parts) {
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_EQ(lines_of(r.err).size(), 1u) << describe(r);
    for (const std::string& part : parts) EXPECT_THAT(r.err, HasSubstr(part)) << describe(r);
  }

  ScratchDir dir_;
  fs::path models_ = dir_.path() / "models", plans_ = dir_.path() / "plans", elsewhere_ = dir_.path() / "elsewhere";
  std::string plan_ = (plans_ / "p.json").string();
};

TEST_F(PlanModelCommands, AnOnnxPlanTrainsFromAnyFolderAndAChangedModelIsRefused) {
  fs::copy_file(onnx_file("tiny.onnx"), models_ / "m.onnx");
  plan_from_models_folder("m.onnx");  // a relative path, recorded absolute
  const nlohmann::json doc = nlohmann::json::parse(read_text(plan_));
  const std::string bytes = read_text(models_ / "m.onnx");
  EXPECT_EQ(doc.at("model"), "m.onnx");
  EXPECT_EQ(doc.at("model_file").at("path"), (models_ / "m.onnx").string());
  EXPECT_EQ(doc.at("model_file").at("size_bytes"), bytes.size());
  EXPECT_EQ(doc.at("model_file").at("sha256"), sha256_hex(bytes));
  EXPECT_TRUE(is_sha256_hex(doc.at("model_graph_sha256").get<std::string>()));

  Outcome r = train_elsewhere();
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("step 1/1"));
  r = run_in(elsewhere_, {"check-plan", plan_});
  EXPECT_EQ(r.exit_code, 0) << describe(r);

  // Moved beside the plan: found there by its name.
  fs::rename(models_ / "m.onnx", plans_ / "m.onnx");
  r = train_elsewhere();
  ASSERT_EQ(r.exit_code, 0) << describe(r);

  // Another file of that name (the same graph, its nodes in another order): refused.
  fs::copy_file(onnx_file("tiny_unsorted.onnx"), plans_ / "m.onnx", fs::copy_options::overwrite_existing);
  const std::vector<std::string> changed = {"model file '" + (plans_ / "m.onnx").string() + "' is not the one",
                                            "plan file '" + plan_ + "'", "its SHA-256 is"};
  expect_one_line_refusal(train_elsewhere(), changed);
  expect_one_line_refusal(run_in(elsewhere_, {"check-plan", plan_}), changed);

  fs::remove(plans_ / "m.onnx");
  expect_one_line_refusal(train_elsewhere(), {"which is not there", "'" + (models_ / "m.onnx").string() + "'",
                                              "'" + (plans_ / "m.onnx").string() + "'"});
}

// A JSON model file: a 5x5 conv where the plan was made for a 3x3 one, with the same
// output shapes, which the plan's own checks would let through.
TEST_F(PlanModelCommands, AModelFileWithAWiderKernelOfTheSameShapeIsRefused) {
  const std::string model = R"({"format": "layerplan-model", "version": 1, "name": "small",
    "input": {"channels": 1, "height": 8, "width": 8},
    "layers": [{"name": "conv1", "kind": "conv2d", "out_channels": 4, "kernel": 3, "padding": 1},
               {"name": "relu1", "kind": "relu"}, {"name": "pool", "kind": "global_avg_pool"},
               {"name": "flat", "kind": "flatten"}, {"name": "fc", "kind": "fully_connected", "out_features": 10},
               {"name": "loss", "kind": "softmax_cross_entropy"}]})";
  write_text(models_ / "m.json", model);
  plan_from_models_folder("m.json");
  Outcome r = train_elsewhere();
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::string wider = model;
  wider.replace(wider.find(R"("kernel": 3, "padding": 1)"), 25, R"("kernel": 5, "padding": 2)");
  write_text(models_ / "m.json", wider);
  expect_one_line_refusal(train_elsewhere(),
                          {"model file '" + (models_ / "m.json").string() + "'", "plan file '" + plan_ + "'"});
  // Given with --model, the plan's model is checked the same way.
  expect_one_line_refusal(run_in(elsewhere_, {"check-plan", plan_, "--model", (models_ / "m.json").string()}),
                          {"is not the one plan file"});
}

// Root runs the suite (CI does): only root can give a file to another user.
TEST_F(PlanModelCommands, TrainRefusesAPlanFileOfAnotherUser) {
  plan_from_models_folder("lenet5");
  ASSERT_EQ(::chown(plan_.c_str(), 12345, 12345), 0) << "this test runs as root";
  expect_one_line_refusal(train_elsewhere(), {"plan file '" + plan_ + "' belongs to uid 12345"});
  const Outcome r = run_in(elsewhere_, {"check-plan", plan_});  // reading it is fine
  EXPECT_EQ(r.exit_code, 0) << describe(r);
}

// The Slurm plugin's LAYERPLAN_PLAN_SHA256: a task trains the plan file it published only.
TEST_F(PlanModelCommands, TrainFromTheEnvironmentChecksThePublishedHash) {
  plan_from_models_folder("lenet5");
  const std::string published = sha256_hex(read_text(plan_));
  Outcome r = run_in(elsewhere_, {"train", "--steps", "1", "--kernels", "reference"},
                     {"LAYERPLAN_PLAN=" + plan_, "LAYERPLAN_PLAN_SHA256=" + published});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  write_text(plan_, read_text(plan_) + "\n");  // swapped for another file after publishing
  r = run_in(elsewhere_, {"train", "--steps", "1", "--kernels", "reference"},
             {"LAYERPLAN_PLAN=" + plan_, "LAYERPLAN_PLAN_SHA256=" + published});
  expect_one_line_refusal(r, {"plan file '" + plan_ + "' is not the plan the Slurm plugin published",
                              "LAYERPLAN_PLAN_SHA256 says " + published.substr(0, 16)});
}

}  // namespace
}  // namespace layerplan
