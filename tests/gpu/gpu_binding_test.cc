// Which GPU a rank uses (runtime/gpu/gpu_binding.h) and what --precision allows
// (runtime/gpu/precision.h): host logic, tested without a GPU.
#include "runtime/gpu/gpu_binding.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include "common/error.h"
#include "runtime/gpu/precision.h"

namespace layerplan {
namespace {

using ::testing::HasSubstr;
using Entries = std::vector<std::string>;

TEST(GpuBinding, VisibleDevicesAreReadAsCudaReadsThem) {
  EXPECT_FALSE(visible_gpu_entries(nullptr).has_value());
  EXPECT_EQ(visible_gpu_entries(""), Entries{});
  EXPECT_EQ(visible_gpu_entries("2,0"), (Entries{"2", "0"}));
  EXPECT_EQ(visible_gpu_entries(" 3 , 1"), (Entries{"3", "1"}));
  EXPECT_EQ(visible_gpu_entries("GPU-8a1b,MIG-77c"), (Entries{"GPU-8a1b", "MIG-77c"}));
  // CUDA stops at the first entry that is not a GPU: "-1" hides the rest.
  EXPECT_EQ(visible_gpu_entries("1,-1,2"), Entries{"1"});
  EXPECT_EQ(visible_gpu_entries("0,,2"), Entries{"0"});
}

TEST(GpuBinding, RankKUsesTheKthVisibleGpu) {
  const GpuBinding b = bind_local_rank(1, 2, "6,4");
  EXPECT_EQ(b.cuda_device, 1);
  EXPECT_EQ(b.physical, "4");
  EXPECT_EQ(bind_local_rank(0, 1, "6,4").physical, "6");
  EXPECT_EQ(bind_local_rank(3, 8, nullptr).physical, "3");
  EXPECT_EQ(bind_local_rank(3, 8, nullptr).cuda_device, 3);
}

TEST(GpuBinding, TooFewGpusIsOneLineNamingBoth) {
  try {
    bind_local_rank(2, 2, "6,4");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "rank 2 needs the 3rd visible GPU, found 2; CUDA_VISIBLE_DEVICES='6,4'");
  }
  EXPECT_THROW(bind_local_rank(0, 0, nullptr), UsageError);
}

TEST(GpuBinding, LocalRankComesFromTheLauncherTorchrunOrSrun) {
  ::unsetenv("LAYERPLAN_LOCAL_RANK");
  ::unsetenv("LOCAL_RANK");
  ::unsetenv("SLURM_LOCALID");
  EXPECT_EQ(local_rank_from_env(), 0);
  ::setenv("SLURM_LOCALID", "3", 1);
  EXPECT_EQ(local_rank_from_env(), 3);
  ::setenv("LOCAL_RANK", "2", 1);  // torchrun's
  EXPECT_EQ(local_rank_from_env(), 2);
  ::setenv("LAYERPLAN_LOCAL_RANK", "1", 1);
  EXPECT_EQ(local_rank_from_env(), 1);
  ::setenv("LAYERPLAN_LOCAL_RANK", "x", 1);
  try {
    local_rank_from_env();
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("LAYERPLAN_LOCAL_RANK='x'"));
  }
  ::unsetenv("LAYERPLAN_LOCAL_RANK");
  ::unsetenv("LOCAL_RANK");
  ::unsetenv("SLURM_LOCALID");
}

TEST(Precision, Fp32IsExactTf32AllowsTensorCoresBf16KeepsFp32MasterWeights) {
  EXPECT_FALSE(math_rules(Precision::kFp32).tensor_core_tf32);
  EXPECT_FALSE(math_rules(Precision::kFp32).bf16_compute);
  EXPECT_TRUE(math_rules(Precision::kTf32).tensor_core_tf32);
  EXPECT_FALSE(math_rules(Precision::kTf32).bf16_compute);
  const MathRules bf16 = math_rules(Precision::kBf16);
  EXPECT_TRUE(bf16.bf16_compute);
  EXPECT_FALSE(bf16.tensor_core_tf32);
  EXPECT_TRUE(bf16.fp32_master_weights);
  EXPECT_TRUE(bf16.fp32_all_reduce);
}

}  // namespace
}  // namespace layerplan
