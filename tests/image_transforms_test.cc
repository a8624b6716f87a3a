// The crop, flip and resize maths of runtime/image_transforms.h against figures worked out
// by hand from torchvision's and PIL's definitions.
#include "runtime/image_transforms.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace layerplan {
namespace {

DecodedImage gray(int width, int height, const std::vector<uint8_t>& pixels) { return {width, height, 1, pixels}; }

// Plain [0, 1] scaling: no normalisation.
const Normalization kUnit = {{0.0f}, {1.0f}};

TEST(ImageTransforms, ResamplingToTheSameSizeKeepsEveryPixel) {
  std::vector<uint8_t> pixels(6 * 4);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 10);
  const DecodedImage src = gray(6, 4, pixels);
  std::vector<float> out(24);
  resample_to_planes(src, {0, 0, 4, 6}, {4, 6, 0, 0, 4, 6}, false, kUnit, out.data());
  for (size_t i = 0; i < out.size(); ++i) EXPECT_FLOAT_EQ(out[i], pixels[i] / 255.0f) << i;
}

TEST(ImageTransforms, FlipMirrorsEachRowAndCropTakesTheBox) {
  std::vector<uint8_t> pixels(6 * 4);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 10);
  const DecodedImage src = gray(6, 4, pixels);
  std::vector<float> out(6);
  // Rows 1..2, columns 2..4 of the image, same size, mirrored.
  resample_to_planes(src, {1, 2, 2, 3}, {2, 3, 0, 0, 2, 3}, true, kUnit, out.data());
  const int expected[] = {10, 9, 8, 16, 15, 14};  // pixel indices
  for (int i = 0; i < 6; ++i)
    EXPECT_FLOAT_EQ(out[static_cast<size_t>(i)], pixels[static_cast<size_t>(expected[i])] / 255.0f);
}

TEST(ImageTransforms, HalvingIsPilsTriangleFilterOfSupportTwo) {
  // 8 pixels to 4: output x has centre 2x + 1; source pixels i with |i + 0.5 - centre| < 2
  // weigh 1 - |i + 0.5 - centre| / 2. Output 0: pixels 0, 1, 2 weigh 0.75, 0.75, 0.25
  // (/ 1.75); output 1: pixels 1..4 weigh 0.25, 0.75, 0.75, 0.25 (/ 2).
  const std::vector<uint8_t> row = {0, 40, 80, 120, 160, 200, 240, 255};
  const DecodedImage src = gray(8, 1, row);
  std::vector<float> out(4);
  resample_to_planes(src, {0, 0, 1, 8}, {1, 4, 0, 0, 1, 4}, false, kUnit, out.data());
  EXPECT_NEAR(out[0] * 255, (0.75 * 0 + 0.75 * 40 + 0.25 * 80) / 1.75, 1e-3);
  EXPECT_NEAR(out[1] * 255, (0.25 * 40 + 0.75 * 80 + 0.75 * 120 + 0.25 * 160) / 2.0, 1e-3);
  EXPECT_NEAR(out[3] * 255, (0.25 * 200 + 0.75 * 240 + 0.75 * 255) / 1.75, 1e-3);
}

TEST(ImageTransforms, EnlargingInterpolatesPixelCentresLinearly) {
  // 2 pixels to 4: output centres at source x = 0.25, 0.75, 1.25, 1.75 in pixel units, i.e.
  // -0.25, 0.25, 0.75, 1.25 from pixel 0's centre; the ends clamp to the edge pixels.
  const DecodedImage src = gray(2, 1, {100, 200});
  std::vector<float> out(4);
  resample_to_planes(src, {0, 0, 1, 2}, {1, 4, 0, 0, 1, 4}, false, kUnit, out.data());
  EXPECT_NEAR(out[0] * 255, 100, 1e-3);
  EXPECT_NEAR(out[1] * 255, 125, 1e-3);
  EXPECT_NEAR(out[2] * 255, 175, 1e-3);
  EXPECT_NEAR(out[3] * 255, 200, 1e-3);
}

TEST(ImageTransforms, EvalGeometryIsTorchvisionsResizeAndCenterCrop) {
  EXPECT_EQ(eval_resize_for(224), 256);
  EXPECT_EQ(eval_resize_for(32), 37);
  // 500 x 375 (landscape): shorter side 256, longer int(256 * 500 / 375) = 341; crop 224 at
  // round(16) = 16 from the top and round(58.5) = 58 (half to even) from the left.
  const EvalGeometry g = eval_geometry(375, 500, 256, 224, 224);
  EXPECT_EQ(g.resized_height, 256);
  EXPECT_EQ(g.resized_width, 341);
  EXPECT_EQ(g.top, 16);
  EXPECT_EQ(g.left, 58);
  // Portrait 28 x 21 to 37: width 37, height int(37 * 28 / 21) = 49; (49 - 32) / 2 = 8.5 -> 8.
  const EvalGeometry p = eval_geometry(28, 21, 37, 32, 32);
  EXPECT_EQ(p.resized_width, 37);
  EXPECT_EQ(p.resized_height, 49);
  EXPECT_EQ(p.top, 8);
  EXPECT_EQ(p.left, 2);  // (37 - 32) / 2 = 2.5 -> 2
}

TEST(ImageTransforms, AWindowOfAResizeIsThatPartOfTheWholeResize) {
  // Evaluation resizes 28 x 21 to 49 x 37 and keeps the 32 x 32 window at (8, 2): the same
  // pixels as resizing whole and cropping afterwards (torchvision's order).
  std::vector<uint8_t> pixels(28 * 21);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>((i * 37) % 251);
  const DecodedImage src = gray(21, 28, pixels);
  std::vector<float> whole(49 * 37), window(32 * 32), eval(32 * 32);
  resample_to_planes(src, {0, 0, 28, 21}, {49, 37, 0, 0, 49, 37}, false, kUnit, whole.data());
  resample_to_planes(src, {0, 0, 28, 21}, {49, 37, 8, 2, 32, 32}, false, kUnit, window.data());
  eval_transform(src, 32, 32, kUnit, eval.data());
  for (int y = 0; y < 32; ++y) {
    for (int x = 0; x < 32; ++x) {
      ASSERT_FLOAT_EQ(window[static_cast<size_t>(y * 32 + x)], whole[static_cast<size_t>((y + 8) * 37 + x + 2)]);
    }
  }
  EXPECT_EQ(eval, window);
}

TEST(ImageTransforms, RandomCropsKeepTorchvisionsAreaAndRatioRanges) {
  std::mt19937_64 rng(7);
  int fallbacks = 0;
  for (int i = 0; i < 2000; ++i) {
    const CropBox b = random_resized_crop_box(375, 500, rng);
    ASSERT_GE(b.top, 0);
    ASSERT_GE(b.left, 0);
    ASSERT_LE(b.top + b.height, 375);
    ASSERT_LE(b.left + b.width, 500);
    const double area = static_cast<double>(b.height) * b.width / (375.0 * 500.0);
    const double ratio = static_cast<double>(b.width) / b.height;
    if (b == CropBox{0, 0, 375, 500} || b.width == 500) ++fallbacks;
    // Rounding the sides to whole pixels moves the figures a little past the bounds.
    EXPECT_GE(area, 0.08 * 0.97) << i;
    EXPECT_LE(ratio, 4.0 / 3.0 * 1.05) << i;
    EXPECT_GE(ratio, 3.0 / 4.0 / 1.05) << i;
  }
  EXPECT_LT(fallbacks, 100);
  // The same seed draws the same boxes.
  std::mt19937_64 a(3), b(3);
  EXPECT_EQ(random_resized_crop_box(100, 80, a), random_resized_crop_box(100, 80, b));
}

TEST(ImageTransforms, AVeryWideImageFallsBackToACentredBoxOfTheLargestRatio) {
  // 10 x 1000: no draw fits (the crop would need a height over 10); torchvision then takes
  // h = 10, w = round(10 * 4 / 3) = 13, centred: left (1000 - 13) // 2 = 493.
  std::mt19937_64 rng(1);
  EXPECT_EQ(random_resized_crop_box(10, 1000, rng), (CropBox{0, 493, 10, 13}));
}

TEST(ImageTransforms, NormalisationUsesImagenetFigures) {
  const Normalization rgb = imagenet_normalization(3);
  EXPECT_FLOAT_EQ(rgb.mean[0], 0.485f);
  EXPECT_FLOAT_EQ(rgb.stddev[2], 0.225f);
  const Normalization g = imagenet_normalization(1);
  EXPECT_NEAR(g.mean[0], 0.299 * 0.485 + 0.587 * 0.456 + 0.114 * 0.406, 1e-3);
  EXPECT_NEAR(g.stddev[0], 0.299 * 0.229 + 0.587 * 0.224 + 0.114 * 0.225, 1e-3);
  const DecodedImage src = gray(1, 1, {255});
  float out = 0;
  eval_transform(src, 1, 1, g, &out);
  EXPECT_NEAR(out, (1.0f - g.mean[0]) / g.stddev[0], 1e-5);
}

}  // namespace
}  // namespace layerplan
