// How the plugin publishes the plan file (spank_plugin/plan_file.h): one file per step
// that every node agrees on, never through a symlink, never over a differing plan of the
// same step, and a stale file of an earlier job replaced.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/error.h"
#include "spank_plugin/plan_file.h"

namespace layerplan::spank {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// A small stand-in for a plan file: the fields plan_difference() compares.
std::string plan_text(const std::string& gpu, double seconds, int degree = 4) {
  std::ostringstream s;
  s << R"({"format": "layerplan-plan", "model": "resnet50", "batch": 384, "strategy": "layer-wise", )"
    << R"("cluster": {"gpu": ")" << gpu << R"(", "nodes": 3, "gpus_per_node": 4}, )"
    << R"("layers": [{"degrees": {"n": )" << degree << R"(}}], )"
    << R"("search": {"seconds": )" << seconds << R"(, "timed_out": false}})"
    << "\n";
  return s.str();
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class PlanFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("spank_plan_file_" + std::to_string(::getpid()) + "_" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  size_t file_count() const {
    return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()));
  }
  fs::path dir_;
};

TEST(SpankPlanFileName, JobAndStepWithSlurmsSpecialSteps) {
  EXPECT_EQ(plan_file_name(42, 0), "layerplan-42.0.json");
  EXPECT_EQ(plan_file_name(42, kBatchStepId), "layerplan-42.batch.json");
  EXPECT_EQ(plan_file_name(42, kExternStepId), "layerplan-42.extern.json");
  EXPECT_EQ(step_label(kInteractiveStepId), "interactive");
}

TEST(SpankPlanDifference, IgnoresSearchTimeAndNamesTheGpu) {
  EXPECT_EQ(plan_difference(plan_text("H100", 0.1), plan_text("H100", 0.7)), "");
  const std::string d = plan_difference(plan_text("NVIDIA A100", 0.1), plan_text("NVIDIA H100", 0.1));
  EXPECT_THAT(d, HasSubstr("GPU 'NVIDIA A100' here, 'NVIDIA H100' in the file"));
  EXPECT_EQ(plan_difference(plan_text("H100", 0.1, 4), plan_text("H100", 0.1, 2)), "the per-layer plans differ");
  EXPECT_EQ(plan_difference("{", plan_text("H100", 0.1)), "one of them is not a plan file");
}

TEST_F(PlanFileTest, FirstNodeCreatesTheFileOthersAgreeAndNoTemporaryIsLeft) {
  const std::time_t now = std::time(nullptr);
  const std::string path = publish_plan(dir_, "layerplan-1.0.json", plan_text("H100", 0.2), now);
  EXPECT_EQ(path, (dir_ / "layerplan-1.0.json").string());
  EXPECT_EQ(publish_plan(dir_, "layerplan-1.0.json", plan_text("H100", 0.3), now), path);
  EXPECT_EQ(publish_plan(dir_, "layerplan-1.0.json", plan_text("H100", 0.4), now), path);
  EXPECT_EQ(read(path), plan_text("H100", 0.2));  // the first node's file stays
  EXPECT_EQ(file_count(), 1u);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);  // plans are nobody else's business
}

TEST_F(PlanFileTest, ANodeWithOtherGpusFailsNamingTheDifference) {
  const std::time_t now = std::time(nullptr);
  publish_plan(dir_, "layerplan-2.0.json", plan_text("NVIDIA H100 80GB HBM3", 0.2), now);
  try {
    publish_plan(dir_, "layerplan-2.0.json", plan_text("NVIDIA A100-SXM4-40GB", 0.2), now);
    ADD_FAILURE() << "a differing plan of the same step was accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("planned differently"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("'NVIDIA A100-SXM4-40GB' here, 'NVIDIA H100 80GB HBM3' in the file"));
  }
  EXPECT_EQ(read(dir_ / "layerplan-2.0.json"), plan_text("NVIDIA H100 80GB HBM3", 0.2));
  EXPECT_EQ(file_count(), 1u);
}

TEST_F(PlanFileTest, AStaleFileOfAnEarlierJobWithTheSameIdIsReplaced) {
  const fs::path path = dir_ / "layerplan-3.0.json";
  std::ofstream(path) << plan_text("V100", 0.1);
  const struct utimbuf old_times { std::time(nullptr) - 3600, std::time(nullptr) - 3600 };
  ASSERT_EQ(::utime(path.c_str(), &old_times), 0);
  publish_plan(dir_, "layerplan-3.0.json", plan_text("H100", 0.2), std::time(nullptr));
  EXPECT_EQ(read(path), plan_text("H100", 0.2));
  EXPECT_EQ(file_count(), 1u);
}

TEST_F(PlanFileTest, NeverWritesThroughASymlink) {
  const fs::path target = dir_ / "victim";
  std::ofstream(target) << "precious\n";
  fs::create_symlink(target, dir_ / "layerplan-4.0.json");
  try {
    publish_plan(dir_, "layerplan-4.0.json", plan_text("H100", 0.2), std::time(nullptr));
    ADD_FAILURE() << "a symlinked plan file was accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("layerplan-4.0.json"));
  }
  EXPECT_EQ(read(target), "precious\n");
  EXPECT_EQ(read(target), "precious\n");
}

// The temporary file's name is random: a file or symlink planted at the name the plugin
// used to pick (node and pid) neither fails the step nor is written through.
TEST_F(PlanFileTest, APlantedTemporaryNameDoesNotFailTheStep) {
  const fs::path target = dir_ / "victim";
  std::ofstream(target) << "precious\n";
  for (int node = 0; node < 4; ++node) {
    fs::create_symlink(
        target, dir_ / (".layerplan-5.0.json." + std::to_string(node) + "." + std::to_string(::getpid()) + ".tmp"));
  }
  EXPECT_EQ(publish_plan(dir_, "layerplan-5.0.json", plan_text("H100", 0.2), std::time(nullptr)),
            (dir_ / "layerplan-5.0.json").string());
  EXPECT_EQ(read(target), "precious\n");
}

// In a folder others may write to (sticky, like /tmp) the name gets a random suffix, so a
// file another user created first at the plain name changes nothing.
TEST_F(PlanFileTest, AFolderOthersWriteToGetsAnUnguessableName) {
  fs::permissions(dir_, fs::perms::all | fs::perms::sticky_bit);
  std::ofstream(dir_ / "layerplan-7.0.json") << "someone else's\n";
  const std::string path = publish_plan(dir_, "layerplan-7.0.json", plan_text("H100", 0.2), std::time(nullptr));
  EXPECT_THAT(path, ::testing::MatchesRegex(".*/layerplan-7\\.0\\.[0-9a-f]{16}\\.json"));
  EXPECT_EQ(read(path), plan_text("H100", 0.2));
  EXPECT_EQ(read(dir_ / "layerplan-7.0.json"), "someone else's\n");
}

TEST_F(PlanFileTest, AWorldWritableFolderWithoutTheStickyBitIsRefused) {
  fs::permissions(dir_, fs::perms::all);
  try {
    publish_plan(dir_, "layerplan-8.0.json", plan_text("H100", 0.2), std::time(nullptr));
    ADD_FAILURE() << "a world-writable folder without the sticky bit was accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("sticky"));
  }
  EXPECT_EQ(file_count(), 0u);
}

TEST_F(PlanFileTest, MissingFolderIsNamed) {
  try {
    publish_plan((dir_ / "nope").string(), "layerplan-6.0.json", plan_text("H100", 0.2), std::time(nullptr));
    ADD_FAILURE() << "a missing folder was accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr((dir_ / "nope").string()));
  }
}

}  // namespace
}  // namespace layerplan::spank
