// What the GPU backend says about the GPUs (runtime/gpu/gpu_inventory.h). These run on any
// machine: with CUDA_VISIBLE_DEVICES empty the CUDA runtime shows no GPU, whether or not the
// machine has one or a driver.
#include "runtime/gpu/gpu_inventory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include "common/error.h"

namespace layerplan {
namespace {

using ::testing::HasSubstr;

TEST(GpuInventory, HiddenGpusAreNoneAndARunNeedingOneSaysWhatItFound) {
  ::setenv("CUDA_VISIBLE_DEVICES", "", 1);  // before the CUDA runtime's first call
  const GpuInventory inventory = probe_gpus();
  EXPECT_TRUE(inventory.names.empty());
  EXPECT_FALSE(inventory.problem.empty());
  EXPECT_GE(inventory.runtime_version, 13000);  // the toolkit the backend is built with
  try {
    require_gpus(inventory, 4);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("this run needs 4 GPUs, found 0: "));
    EXPECT_THAT(e.what(), HasSubstr(inventory.problem));
    EXPECT_THAT(e.what(), HasSubstr("CUDA_VISIBLE_DEVICES=''"));
  }
}

TEST(GpuInventory, EnoughGpusPassAndOneTooFewIsNamed) {
  GpuInventory two;
  two.names = {"NVIDIA H100", "NVIDIA H100"};
  EXPECT_NO_THROW(require_gpus(two, 2));
  try {
    require_gpus(two, 3);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("this run needs 3 GPUs, found 2"));
  }
}

}  // namespace
}  // namespace layerplan
