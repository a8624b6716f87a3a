#pragma once
// The image transforms of torchvision's ImageNet reference recipe, on decoded 8-bit images
// (runtime/image_decode.h), written straight into a model's C x H x W float input:
//   training:   RandomResizedCrop(size, scale=(0.08, 1), ratio=(3/4, 4/3)),
//               RandomHorizontalFlip(0.5), ToTensor, Normalize(mean, std)
//   evaluation: Resize(size * 256 / 224) of the shorter side, CenterCrop(size), ToTensor,
//               Normalize(mean, std)
// Resizing is PIL's antialiased bilinear filter (torchvision's default on PIL images): a
// triangle filter stretched by the reduction factor when shrinking, plain bilinear
// interpolation of pixel centres when enlarging.
#include <cstdint>
#include <random>
#include <vector>

#include "runtime/image_decode.h"

namespace layerplan {

// A rectangle of an image, in pixels.
struct CropBox {
  int top = 0, left = 0, height = 0, width = 0;
  bool operator==(const CropBox&) const = default;
};

// torchvision's RandomResizedCrop.get_params: up to 10 draws of an area fraction uniform in
// [scale_min, 1] and an aspect ratio log-uniform in [3/4, 4/3], the first that fits taken
// at a uniform position; when none fits, the largest centred box whose ratio is clamped to
// [3/4, 4/3].
CropBox random_resized_crop_box(int height, int width, std::mt19937_64& rng, double scale_min = 0.08);

// Evaluation's Resize then CenterCrop to `size`: the shorter side becomes
// `resize` (the longer int(resize * long / short), as torchvision), and `size` is cut from
// the middle (offsets rounded half to even, as Python's round).
struct EvalGeometry {
  int resized_height = 0, resized_width = 0;
  int top = 0, left = 0;  // of the crop in the resized image
};
EvalGeometry eval_geometry(int height, int width, int resize, int crop_height, int crop_width);
// size * 256 / 224 rounded: 256 for 224 (the reference recipe), 37 for 32.
int eval_resize_for(int size);

// Per-channel mean and standard deviation applied after scaling pixels to [0, 1].
struct Normalization {
  std::vector<float> mean, stddev;
};
// ImageNet's for 3 channels (mean 0.485, 0.456, 0.406; std 0.229, 0.224, 0.225); for 1
// channel the same figures weighted as BT.601 luma weighs R, G, B: mean 0.459, std 0.226.
Normalization imagenet_normalization(int channels);

// Resamples `src` to an image of out_full_height x out_full_width whose source is the box
// `from` of `src`, and writes the out_height x out_width window at (out_top, out_left) of
// it, mirrored left to right when `flip`, normalised, as planes (C x H x W) to `out`.
struct ResampleTarget {
  int full_height = 0, full_width = 0;
  int top = 0, left = 0, height = 0, width = 0;
};
void resample_to_planes(const DecodedImage& src, const CropBox& from, const ResampleTarget& to, bool flip,
                        const Normalization& norm, float* out);

// The two recipes. `rng` draws the crop box and then the flip (probability 1/2).
void train_transform(const DecodedImage& src, int height, int width, std::mt19937_64& rng, const Normalization& norm,
                     float* out, double scale_min = 0.08);
void eval_transform(const DecodedImage& src, int height, int width, const Normalization& norm, float* out);

}  // namespace layerplan
