// The GEMM shape model (planner/kernel_efficiency.h), worked out by hand.
#include "planner/kernel_efficiency.h"

#include <gtest/gtest.h>

namespace layerplan {
namespace {

// 80 SMs whose tile's fixed time is worth K0 = 16 of a 64×64 SIMT tile's depth.
constexpr double kSms = 80;
constexpr double kPeak = 2.0 * 64 * 64 * 16 * kSms / kTileFixedSeconds;

GemmHardware simt() { return gemm_hardware(kPeak, static_cast<int>(kSms), false); }

TEST(KernelEfficiency, TileEdgeAndFixedDepthFollowFromTheGpu) {
  EXPECT_DOUBLE_EQ(simt().tile, 64);
  EXPECT_DOUBLE_EQ(simt().k_fixed, 16);
  const GemmHardware tensor = gemm_hardware(kPeak, static_cast<int>(kSms), true);
  EXPECT_DOUBLE_EQ(tensor.tile, 128);
  EXPECT_DOUBLE_EQ(tensor.k_fixed, 4);  // the same rate spread over four times the outputs
}

TEST(KernelEfficiency, OneFullWaveLosesOnlyTheFixedDepth) {
  EXPECT_DOUBLE_EQ(gemm_shape_efficiency({64 * kSms, 64, 48}, simt()), 48.0 / 64.0);
}

TEST(KernelEfficiency, PaddingWastesTheTilesRemainder) {
  EXPECT_DOUBLE_EQ(gemm_shape_efficiency({64 * kSms, 32, 48}, simt()), 0.5 * 0.75);
  // 64 channels fill half of a tensor core's 128-wide tile.
  const GemmHardware tensor = gemm_hardware(kPeak, static_cast<int>(kSms), true);
  EXPECT_DOUBLE_EQ(gemm_shape_efficiency({128 * kSms, 64, 12}, tensor), 0.5 * 0.75);
}

TEST(KernelEfficiency, ALastPartialWaveLeavesSmsIdle) {
  EXPECT_DOUBLE_EQ(gemm_shape_efficiency({64 * (kSms + 1), 64, 48}, simt()), 0.75 * (kSms + 1) / (2 * kSms));
}

TEST(KernelEfficiency, FewTilesSplitKWhileSlicesStayDeep) {
  // One tile, K = 4096: 8 slices of 512 (not 80 of 51), 8 of 80 SMs busy.
  EXPECT_DOUBLE_EQ(gemm_shape_efficiency({64, 64, 4096}, simt()), 8.0 / kSms * 512.0 / 528.0);
  // K too shallow to split: one tile on one SM.
  EXPECT_DOUBLE_EQ(gemm_shape_efficiency({64, 64, 48}, simt()), 1.0 / kSms * 0.75);
}

TEST(KernelEfficiency, WinogradRunsOnlyUngroupedThreeByThreeStrideOneOnCudaCores) {
  Layer conv;
  conv.kind = LayerKind::kConv2d;
  conv.window = Window::square(3, 1, 1);
  EXPECT_TRUE(winograd_applies(conv, false));
  EXPECT_FALSE(winograd_applies(conv, true));
  conv.window = Window::square(3, 2, 1);
  EXPECT_FALSE(winograd_applies(conv, false));
  conv.window = Window::square(1);
  EXPECT_FALSE(winograd_applies(conv, false));
  conv.window = Window::square(3, 1, 1);
  conv.groups = 2;
  EXPECT_FALSE(winograd_applies(conv, false));
  Layer pool = conv;
  pool.kind = LayerKind::kMaxPool;
  pool.groups = 1;
  EXPECT_FALSE(winograd_applies(pool, false));
}

}  // namespace
}  // namespace layerplan
