// A plan file binds its model (docs/plan-format.md, "The model of a plan"): SHA-256 of
// bytes and files, the layer graph's own hash, where plan_model() finds a plan's model
// and what it refuses, and what read_plan_file() refuses of a plan file: another user's,
// or not the one the Slurm plugin published.
#include "model/plan_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.h"
#include "common/input_file.h"
#include "model/content_hash.h"
#include "model/graph_hash.h"
#include "model/model_file.h"
#include "model/zoo.h"
#include "tests/scratch_dir.h"

namespace layerplan {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

void write(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::trunc) << text; }

// A small model file: a conv of `kernel` x `kernel` with `padding`, then global pooling
// and a classifier. Kernel 3 padding 1 and kernel 5 padding 2 give the same output shapes.
std::string small_model(int kernel = 3, int padding = 1) {
  return R"({"format": "layerplan-model", "version": 1, "name": "small",
  "input": {"channels": 1, "height": 8, "width": 8},
  "layers": [
    {"name": "conv1", "kind": "conv2d", "out_channels": 4, "kernel": )" +
         std::to_string(kernel) + R"(, "padding": )" + std::to_string(padding) + R"(},
    {"name": "relu1", "kind": "relu"},
    {"name": "pool", "kind": "global_avg_pool"},
    {"name": "flat", "kind": "flatten"},
    {"name": "fc", "kind": "fully_connected", "out_features": 10},
    {"name": "loss", "kind": "softmax_cross_entropy"}]}
)";
}

TEST(ContentHash, Sha256OfKnownTexts) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_TRUE(is_sha256_hex(sha256_hex("abc")));
  EXPECT_TRUE(is_sha256_hex("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"));
  EXPECT_FALSE(is_sha256_hex(sha256_hex("abc").substr(1)));
  EXPECT_FALSE(is_sha256_hex(std::string(63, 'a') + "g"));
}

// More than one block of file_digest(), not a whole number of them.
TEST(ContentHash, FileDigestIsTheHashOfTheFilesBytes) {
  ScratchDir dir;
  std::string bytes((3 << 20) + 5, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 7919) >> 3);
  write(dir.path() / "f.bin", bytes);
  const InputFile file(dir.file("f.bin"), "file", int64_t{1} << 30);
  const FileDigest digest = file_digest(file);
  EXPECT_EQ(digest.size, static_cast<int64_t>(bytes.size()));
  EXPECT_EQ(digest.sha256, sha256_hex(bytes));
  EXPECT_EQ(file.read_all(), bytes);  // the descriptor's offset did not move
}

TEST(GraphHash, TheSameGraphHashesTheSameWhateverItsBatchNameOrSource) {
  const ModelGraph a = build_zoo_model("resnet50", 8);
  EXPECT_EQ(graph_sha256(a), graph_sha256(build_zoo_model("resnet50", 64)));
  const std::string exported = model_to_json(a);
  EXPECT_EQ(graph_sha256(model_from_json(exported, 8, "exported")), graph_sha256(a));
  std::string renamed = exported;
  renamed.replace(renamed.find("\"resnet50\""), 10, "\"other\"");
  EXPECT_EQ(graph_sha256(model_from_json(renamed, 8, "renamed")), graph_sha256(a));
  EXPECT_NE(graph_sha256(a), graph_sha256(build_zoo_model("vgg16", 8)));
}

TEST(GraphHash, AWiderKernelWithTheSameOutputShapeChangesIt) {
  const ModelGraph three = model_from_json(small_model(3, 1), 4, "m.json");
  const ModelGraph five = model_from_json(small_model(5, 2), 4, "m.json");
  for (int id = 0; id < three.size(); ++id) EXPECT_EQ(three.layer(id).output, five.layer(id).output);
  EXPECT_NE(graph_sha256(three), graph_sha256(five));
  // Any setting counts, however small.
  const std::string relu = R"({"name": "relu1", "kind": "relu"})";
  std::string eps = small_model();
  eps.replace(eps.find(relu), relu.size(), R"({"name": "relu1", "kind": "batch_norm", "epsilon": 0.001})");
  std::string eps2 = eps;
  eps2.replace(eps2.find("0.001"), 5, "0.002");
  EXPECT_NE(graph_sha256(model_from_json(eps, 4, "a")), graph_sha256(model_from_json(eps2, 4, "b")));
}

TEST(ModelFileOrigin, ResolveModelRecordsTheAbsolutePathSizeAndHash) {
  ScratchDir dir;
  write(dir.path() / "m.json", small_model());
  const fs::path old_cwd = fs::current_path();
  fs::current_path(dir.path());
  const ModelGraph g = resolve_model("./m.json", {}, 4);
  fs::current_path(old_cwd);
  ASSERT_TRUE(g.file().has_value());
  EXPECT_EQ(g.file()->path, (dir.path() / "m.json").string());
  EXPECT_EQ(g.file()->size, static_cast<int64_t>(small_model().size()));
  EXPECT_EQ(g.file()->sha256, sha256_hex(small_model()));
  EXPECT_FALSE(build_zoo_model("lenet5", 4).file().has_value());
  EXPECT_FALSE(resolve_model("lenet5", {}, 4).file().has_value());
}

// A model file in folder `models`, a plan folder `plans`, and what a plan made from the
// model file records of it.
class PlanModel : public testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(models_);
    fs::create_directories(plans_);
    write(models_ / "m.json", small_model());
    const ModelGraph g = resolve_model((models_ / "m.json").string(), {}, 4);
    header_.model = g.name();
    header_.recorded.has_file_field = true;
    header_.recorded.file = g.file();
    header_.recorded.graph_sha256 = graph_sha256(g);
  }
  ModelGraph model_of_plan(const std::optional<std::string>& model = std::nullopt,
                           const std::vector<std::string>& model_path = {}) {
    return plan_model(plan_.string(), header_, model, model_path, 4);
  }
  std::string refusal(const std::optional<std::string>& model = std::nullopt) {
    try {
      model_of_plan(model);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "(not refused)";
  }

  ScratchDir dir_;
  fs::path models_ = dir_.path() / "models", plans_ = dir_.path() / "plans", plan_ = plans_ / "p.json";
  PlanHeader header_;
};

TEST_F(PlanModel, TheRecordedPathFirstThenTheFileOfThatNameBesideThePlan) {
  write(plans_ / "m.json", small_model());
  EXPECT_EQ(model_of_plan().file()->path, (models_ / "m.json").string());
  fs::remove(models_ / "m.json");
  EXPECT_EQ(model_of_plan().file()->path, (plans_ / "m.json").string());
  fs::remove(plans_ / "m.json");
  EXPECT_THAT(refusal(), AllOf(HasSubstr("plan file '" + plan_.string() + "'"),
                               HasSubstr("'" + (models_ / "m.json").string() + "'"),
                               HasSubstr("'" + (plans_ / "m.json").string() + "'"), HasSubstr("not there")));
}

TEST_F(PlanModel, TheModelFlagComesBeforeTheRecordedPath) {
  fs::create_directories(dir_.path() / "other");
  write(dir_.path() / "other" / "m.json", small_model());
  const std::string other = (dir_.path() / "other" / "m.json").string();
  EXPECT_EQ(model_of_plan(other).file()->path, other);
  EXPECT_EQ(model_of_plan("m", {(dir_.path() / "other").string()}).file()->path, other);  // other/m.json
  write(other, small_model(5, 2));
  EXPECT_THAT(refusal(other), HasSubstr("model file '" + other + "' is not the one"));
}

TEST_F(PlanModel, AChangedModelFileIsRefusedNamingBothFilesAndWhatDiffers) {
  write(models_ / "m.json", small_model(5, 2));  // same output shapes, another conv
  const std::string message = refusal();
  EXPECT_THAT(message, AllOf(HasSubstr("model file '" + (models_ / "m.json").string() + "'"),
                             HasSubstr("plan file '" + plan_.string() + "'"), HasSubstr("its SHA-256 is"),
                             HasSubstr(header_.recorded.file->sha256.substr(0, 16))));
  EXPECT_THAT(message, Not(HasSubstr("its size")));  // "3" became "5", "1" became "2"
  write(models_ / "m.json", small_model(5, 2) + " ");
  EXPECT_THAT(refusal(), HasSubstr("its size is " + std::to_string(small_model().size() + 1) + " bytes, not " +
                                   std::to_string(small_model().size())));
}

TEST_F(PlanModel, AnotherLayerGraphIsRefusedEvenForTheSameFile) {
  header_.recorded.graph_sha256 = sha256_hex("another graph");
  EXPECT_THAT(refusal(), AllOf(HasSubstr("the layer graph of model file '" + (models_ / "m.json").string() + "'"),
                               HasSubstr("plan file '" + plan_.string() + "'")));
}

TEST_F(PlanModel, BuiltInModelsByNameWithTheirGraphHash) {
  header_.model = "lenet5";
  header_.recorded.file.reset();
  header_.recorded.graph_sha256 = graph_sha256(build_zoo_model("lenet5", 4));
  EXPECT_EQ(model_of_plan().name(), "lenet5");
  EXPECT_FALSE(model_of_plan().file().has_value());
  // A model file named like the zoo model is checked by its graph.
  std::string impostor = model_to_json(build_zoo_model("alexnet", 1));
  impostor.replace(impostor.find("\"alexnet\""), 9, "\"lenet5\"");
  write(models_ / "lenet.json", impostor);
  EXPECT_THAT(refusal((models_ / "lenet.json").string()), HasSubstr("the layer graph of model file"));
  header_.model = "nosuchnet";
  EXPECT_THAT(refusal(), HasSubstr("built-in model 'nosuchnet', which this layerplan does not have"));
}

// A plan written before plans recorded their model: found by name, as before.
TEST_F(PlanModel, OldPlansAreResolvedByNameInTheModelPath) {
  header_.recorded = RecordedModel{};
  header_.model = "small";
  write(models_ / "small.json", small_model(5, 2));  // unchecked: nothing recorded
  EXPECT_EQ(model_of_plan(std::nullopt, {models_.string()}).file()->path, (models_ / "small.json").string());
  header_.model = "lenet5";
  EXPECT_EQ(model_of_plan().name(), "lenet5");
}

TEST(PlanModelCandidates, TheRecordedPathThenThePlansFolder) {
  EXPECT_EQ(recorded_model_candidates("plans/p.json", {"/data/m.onnx", 1, ""}),
            (std::vector<std::string>{"/data/m.onnx", "plans/m.onnx"}));
  EXPECT_EQ(recorded_model_candidates("p.json", {"/data/m.onnx", 1, ""}),
            (std::vector<std::string>{"/data/m.onnx", "./m.onnx"}));
  EXPECT_EQ(recorded_model_candidates("/data/p.json", {"/data/m.onnx", 1, ""}),
            (std::vector<std::string>{"/data/m.onnx"}));
}

// A plan file with what read_plan_file() needs, at `path`.
std::string minimal_plan(const fs::path& path) {
  const std::string text = R"({"format": "layerplan-plan", "version": 1, "model": "lenet5", "batch": 8,
    "cluster": {"devices": 1}})";
  write(path, text);
  return text;
}

std::string read_refusal(const std::optional<std::string>& path, PlanOwner owner = PlanOwner::kAnyone) {
  try {
    read_plan_file(path, owner);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(not refused)";
}

// Root runs the suite (CI does): only root can give a file to another user.
TEST(ReadPlanFile, TrainRefusesAPlanFileOfAnotherUserNamingTheOwner) {
  ScratchDir dir;
  const fs::path plan = dir.path() / "p.json";
  minimal_plan(plan);
  EXPECT_EQ(read_plan_file(plan.string(), PlanOwner::kUserOrRoot).model, "lenet5");
  ASSERT_EQ(::chown(plan.c_str(), 12345, 12345), 0) << "this test runs as root";
  EXPECT_THAT(read_refusal(plan.string(), PlanOwner::kUserOrRoot),
              AllOf(HasSubstr("plan file '" + plan.string() + "' belongs to uid 12345"), HasSubstr("not to you")));
  EXPECT_EQ(read_plan_file(plan.string()).model, "lenet5");  // others (report, predict) read it
}

// The environment as the plugin leaves it to a task, for the scope of one test.
class PlanEnvironment {
 public:
  PlanEnvironment(const std::string& plan, const std::string& sha256) {
    ::setenv("LAYERPLAN_PLAN", plan.c_str(), 1);
    ::setenv(kPlanSha256Variable, sha256.c_str(), 1);
  }
  ~PlanEnvironment() {
    ::unsetenv("LAYERPLAN_PLAN");
    ::unsetenv(kPlanSha256Variable);
  }
};

TEST(ReadPlanFile, APlanFromTheEnvironmentMustHaveThePublishedHash) {
  ScratchDir dir;
  const fs::path plan = dir.path() / "p.json";
  const std::string text = minimal_plan(plan);
  {
    const PlanEnvironment env(plan.string(), sha256_hex(text));
    EXPECT_EQ(read_plan_file(std::nullopt).model, "lenet5");
    EXPECT_EQ(read_plan_file(plan.string()).model, "lenet5");  // --plan naming the same file
  }
  {
    const PlanEnvironment env(plan.string(), sha256_hex(text + " "));
    EXPECT_THAT(read_refusal(std::nullopt),
                AllOf(HasSubstr("plan file '" + plan.string() + "' is not the plan the Slurm plugin published"),
                      HasSubstr(sha256_hex(text).substr(0, 16)), HasSubstr(sha256_hex(text + " ").substr(0, 16))));
    // Another plan given with --plan is the user's choice, not the published one.
    minimal_plan(dir.path() / "mine.json");
    EXPECT_EQ(read_plan_file(dir.file("mine.json")).model, "lenet5");
  }
  {
    const PlanEnvironment env(plan.string(), "nonsense");
    EXPECT_THAT(read_refusal(std::nullopt), HasSubstr("LAYERPLAN_PLAN_SHA256 'nonsense': expected 64 hex digits"));
  }
}

}  // namespace
}  // namespace layerplan
