// The executor over the communicator: `layerplan launch` starts 2 or 4 ranks of
// layerplan_executor_worker, each holding only its device's tiles and moving boxes and
// all-reduces over Gloo. Every rank checks that its losses and the gathered parameters
// equal the in-process run and that what it sent equals the in-process counts from its
// device and the communicator's byte counters (tests/executor_worker.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

const std::string kLayerplan = std::string(LAYERPLAN_BINARY_DIR) + "/layerplan";

struct LaunchResult {
  int status = -1;
  std::string output;
};

LaunchResult launch(int ranks, const std::string& model, const std::string& plan, const std::string& extra = "") {
  const std::string command = kLayerplan + " launch --nproc " + std::to_string(ranks) + " -- " +
                              LAYERPLAN_EXECUTOR_WORKER + " " + model + " " + plan + " 3 " + extra + " 2>&1";
  LaunchResult run;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> chunk;
  while (size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe)) run.output.append(chunk.data(), n);
  const int status = ::pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

void expect_ranks_agree(int ranks, const std::string& model, const std::string& plan, const std::string& extra = "") {
  const LaunchResult run = launch(ranks, model, plan, extra);
  EXPECT_EQ(run.status, 0) << run.output;
  for (int r = 0; r < ranks; ++r) {
    EXPECT_THAT(run.output, ::testing::HasSubstr("rank " + std::to_string(r) + " ok: " + model + " " + plan))
        << run.output;
  }
}

TEST(ExecutorMultiprocess, LeNet5DataParallelOn4Ranks) { expect_ranks_agree(4, "lenet5", "dp"); }
TEST(ExecutorMultiprocess, LeNet5ModelParallelOn4Ranks) { expect_ranks_agree(4, "lenet5", "mp"); }
TEST(ExecutorMultiprocess, LayerWisePlansOn4Ranks) {
  expect_ranks_agree(4, "lenet5", "lw");
  expect_ranks_agree(4, "residual", "lw");
}
TEST(ExecutorMultiprocess, LeNet5OwtOn2Ranks) { expect_ranks_agree(2, "lenet5", "owt"); }
TEST(ExecutorMultiprocess, ResidualRandomPlansOn4Ranks) {
  expect_ranks_agree(4, "residual", "random:1");
  expect_ranks_agree(4, "residual", "random:2");
}
TEST(ExecutorMultiprocess, ResidualModelParallelOn2Ranks) { expect_ranks_agree(2, "residual", "mp"); }
// Buckets of 256 bytes: most layers' gradients fill one and are reduced during the backward,
// between its box moves, and some shards span several.
TEST(ExecutorMultiprocess, SmallGradientBucketsOn4Ranks) {
  expect_ranks_agree(4, "residual", "dp", "bucket-bytes=256");
  expect_ranks_agree(4, "residual", "random:3", "bucket-bytes=256");
}

// Overlap (ExecutorOptions::overlap): bucket all-reduces on a communication thread over a
// second Gloo context while the backward moves boxes and reduces batch-norm statistics over
// the first; the numbers equal the blocking run's bitwise, and the in-process run's.
TEST(ExecutorMultiprocess, OverlappedBucketsDataParallelOn2Ranks) {
  expect_ranks_agree(2, "lenet5", "dp", "overlap bucket-bytes=256");
  expect_ranks_agree(2, "residual", "dp", "overlap");
}
TEST(ExecutorMultiprocess, OverlappedBucketsLayerWiseAndRandomPlans) {
  expect_ranks_agree(2, "residual", "lw", "overlap bucket-bytes=256");
  expect_ranks_agree(4, "residual", "random:1", "overlap bucket-bytes=256");
  expect_ranks_agree(2, "lenet5", "owt", "overlap bucket-bytes=256");
}
TEST(ExecutorMultiprocess, OverlappedBucketsWithClippingAndAdamW) {
  expect_ranks_agree(2, "lenet5", "dp", "overlap bucket-bytes=256 clip");
  expect_ranks_agree(2, "residual", "lw", "overlap bucket-bytes=256 adamw clip");
}

// The worker's checks can fail: a 1 % larger learning rate in the multi-process run is
// caught, so is one in the overlapped run only, and so is an unknown plan.
TEST(ExecutorMultiprocess, AFailingCheckFailsTheLaunch) {
  const LaunchResult perturbed = launch(2, "lenet5", "mp", "perturb");
  EXPECT_NE(perturbed.status, 0) << perturbed.output;
  EXPECT_THAT(perturbed.output, ::testing::HasSubstr("WRONG lenet5 mp: numbers differ")) << perturbed.output;
  EXPECT_NE(launch(2, "lenet5", "no-such-plan").status, 0);
  const LaunchResult overlap_perturbed = launch(2, "lenet5", "dp", "perturb-overlap");
  EXPECT_NE(overlap_perturbed.status, 0) << overlap_perturbed.output;
  EXPECT_THAT(overlap_perturbed.output, ::testing::HasSubstr("WRONG lenet5 dp: overlap on and off differ"))
      << overlap_perturbed.output;
}

}  // namespace
