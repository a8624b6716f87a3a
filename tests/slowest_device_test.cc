// `layerplan predict`'s reduction of measured compute: each layer's slowest device per
// step, scaled so that the layers add up to the median step.
#include "predict/slowest_device.h"

#include <gtest/gtest.h>

namespace layerplan {
namespace {

TEST(SlowestDevice, TakesTheSlowestDeviceOfEachStepNotOfTheTypicalStep) {
  // One layer, two devices, three steps: device 0 is slow in steps 0 and 2, device 1 in step 1.
  const StepSeconds compute = {{{4, 1, 4}, {1, 3, 1}}};
  const StepSeconds forward = {{{1, 0.5, 1}, {0.5, 2, 0.5}}};
  const LayerSeconds s = slowest_device_seconds(compute, forward, {0, 1});
  ASSERT_EQ(s.compute_s.size(), 1u);
  EXPECT_DOUBLE_EQ(s.compute_s[0], 4);  // slowest per step: 4, 3, 4
  EXPECT_DOUBLE_EQ(s.forward_s[0], 1);  // that device's forward part: 1, 2, 1
}

TEST(SlowestDevice, LayersAddUpToTheMedianStepWhenLongKernelsFallInDifferentSteps) {
  // Each layer is 1 s in most steps and runs long once, in a different step each: every
  // layer's median is 1 s, but two of three steps take 6 s.
  const StepSeconds compute = {{{1, 1, 5}}, {{1, 5, 1}}};
  const StepSeconds forward = {{{0.5, 0.5, 2}}, {{0.25, 1, 0.25}}};
  const LayerSeconds s = slowest_device_seconds(compute, forward, {0});
  ASSERT_EQ(s.compute_s.size(), 2u);
  EXPECT_DOUBLE_EQ(s.compute_s[0] + s.compute_s[1], 6);  // steps: 6, 6, 2
  EXPECT_DOUBLE_EQ(s.compute_s[0], 3);                   // in proportion to the medians
  EXPECT_DOUBLE_EQ(s.forward_s[0], 1.5);
  EXPECT_DOUBLE_EQ(s.forward_s[1], 0.75);
}

TEST(SlowestDevice, ChangesNothingWhenEveryStepIsTheSame) {
  const StepSeconds compute = {{{2, 2}, {1, 1}}, {{0.5, 0.5}, {3, 3}}};
  const StepSeconds forward = {{{1, 1}, {0.5, 0.5}}, {{0.25, 0.25}, {1, 1}}};
  const LayerSeconds s = slowest_device_seconds(compute, forward, {0, 1});
  EXPECT_DOUBLE_EQ(s.compute_s[0], 2);
  EXPECT_DOUBLE_EQ(s.compute_s[1], 3);
  EXPECT_DOUBLE_EQ(s.forward_s[1], 1);
}

TEST(SlowestDevice, OnlyTheGivenDevicesCount) {
  const StepSeconds compute = {{{1, 1}, {9, 9}}};
  const StepSeconds forward = {{{0.5, 0.5}, {4, 4}}};
  EXPECT_DOUBLE_EQ(slowest_device_seconds(compute, forward, {0}).compute_s[0], 1);
}

}  // namespace
}  // namespace layerplan
