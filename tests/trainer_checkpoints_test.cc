// Checkpoints on disk (runtime/training/checkpoint_store.h): the weights in a file
// torchvision loads strictly, the momentum beside them, and --save-dir's folders, each put in
// place whole, the newest K kept.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "common/error.h"
#include "runtime/safetensors.h"
#include "runtime/training/checkpoint_store.h"
#include "tests/scratch_dir.h"

namespace layerplan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TrainingState state_at(int64_t step) {
  TrainingState s;
  s.metadata = {{"format", "layerplan-checkpoint"}, {"model", "lenet5"}, {"step", std::to_string(step)}};
  s.arrays["conv1.weight"] = FloatArray{{2, 1}, {1.0F, static_cast<float>(step)}};
  s.arrays["momentum_buffer.conv1.weight"] = FloatArray{{2, 1}, {0.5F, -0.5F}};
  s.counters["bn1.num_batches_tracked"] = step;
  return s;
}

std::vector<std::string> folders_of(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(CheckpointFiles, TheOptimizerStateGoesBesideTheWeights) {
  EXPECT_EQ(optimizer_state_path("/r/run.safetensors"), "/r/run.optimizer.safetensors");
  EXPECT_EQ(optimizer_state_path("run"), "run.optimizer.safetensors");
  EXPECT_EQ(optimizer_state_path(".safetensors"), ".safetensors.optimizer.safetensors");
}

TEST(CheckpointFiles, WeightsHoldNoMomentumAndTheNumBatchesTrackedAsI64) {
  ScratchDir dir;
  const std::string weights = dir.file("w.safetensors");
  write_checkpoint_files(weights, state_at(7), "--save");

  const safetensors::Reader file(weights);
  EXPECT_EQ(file.tensors().count("momentum_buffer.conv1.weight"), 0U);
  ASSERT_EQ(file.tensors().count("bn1.num_batches_tracked"), 1U);
  EXPECT_EQ(file.info("bn1.num_batches_tracked").dtype, safetensors::DType::kI64);
  EXPECT_TRUE(file.info("bn1.num_batches_tracked").shape.empty());  // a scalar, as torch keeps it
  EXPECT_EQ(file.read("bn1.num_batches_tracked").int64s(), (std::vector<int64_t>{7}));
  const safetensors::Reader optimizer(optimizer_state_path(weights));
  EXPECT_EQ(optimizer.tensors().count("momentum_buffer.conv1.weight"), 1U);
  EXPECT_EQ(optimizer.tensors().count("conv1.weight"), 0U);
  EXPECT_EQ(optimizer.metadata().at("step"), "7");

  const TrainingState back = read_checkpoint_files(weights);  // both, merged
  EXPECT_EQ(back.arrays.at("conv1.weight").values, (std::vector<float>{1.0F, 7.0F}));
  EXPECT_EQ(back.arrays.at("momentum_buffer.conv1.weight").values, (std::vector<float>{0.5F, -0.5F}));
}

TEST(CheckpointFiles, WeightsAndMomentumOfDifferentSavesAreRefused) {
  ScratchDir dir;
  const std::string weights = dir.file("w.safetensors");
  write_checkpoint_files(weights, state_at(7), "--save");
  write_checkpoint(optimizer_state_path(weights), state_at(9));  // a save stopped half-way
  try {
    read_checkpoint_files(weights);
    ADD_FAILURE() << "momentum of step 9 was taken with weights of step 7";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("is at step '7'"));
    EXPECT_THAT(e.what(), HasSubstr("w.optimizer.safetensors' at step '9'"));
  }
}

TEST(CheckpointFolder, KeepsTheNewestKAndFindsTheNewestWholeOne) {
  ScratchDir dir;
  const std::string folder = (dir.path() / "ck").string();  // made by the first save
  EXPECT_FALSE(newest_checkpoint(folder));
  for (int64_t step : {10, 20, 30, 40, 50}) {
    const SavedCheckpoint saved = save_checkpoint_to_folder(folder, state_at(step), 3);
    EXPECT_EQ(saved.step, step);
    EXPECT_TRUE(fs::is_regular_file(saved.weights)) << saved.weights;
    EXPECT_TRUE(fs::is_regular_file(optimizer_state_path(saved.weights))) << saved.weights;
  }
  EXPECT_EQ(folders_of(folder), (std::vector<std::string>{"step-00000030", "step-00000040", "step-00000050"}));

  // What is not a whole checkpoint is passed over: a save that never finished (hidden), a
  // folder without weights, names that are not step-NNNNNNNN.
  fs::create_directories(fs::path(folder) / ".step-00000090.partial-0123456789abcdef");
  fs::create_directories(fs::path(folder) / "step-00000080");
  fs::create_directories(fs::path(folder) / "step-70");
  fs::create_directories(fs::path(folder) / "step-0000006x");
  const std::optional<SavedCheckpoint> newest = newest_checkpoint(folder);
  ASSERT_TRUE(newest);
  EXPECT_EQ(newest->step, 50);
  EXPECT_EQ(newest->weights, (fs::path(folder) / "step-00000050" / "model.safetensors").string());

  // The same step saved again replaces its folder; the others are not touched.
  save_checkpoint_to_folder(folder, state_at(50), 3);
  EXPECT_EQ(read_checkpoint_files(newest->weights).metadata.at("step"), "50");
  EXPECT_TRUE(fs::exists(fs::path(folder) / "step-00000040"));
}

TEST(CheckpointFolder, BadKeepAndAStateWithoutAStepAreRefused) {
  ScratchDir dir;
  EXPECT_THROW(save_checkpoint_to_folder(dir.file("ck"), state_at(1), 0), UsageError);
  TrainingState no_step = state_at(1);
  no_step.metadata.erase("step");
  EXPECT_THROW(save_checkpoint_to_folder(dir.file("ck"), no_step, 2), UsageError);
  EXPECT_FALSE(newest_checkpoint(dir.file("ck")));
}

}  // namespace
}  // namespace layerplan
