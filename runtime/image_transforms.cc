#include "runtime/image_transforms.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace layerplan {
namespace {

// PIL's resampling weights along one axis (its precompute_coeffs with the bilinear
// filter): output pixel i of a resize of `in_size` source pixels to `out_size` gets the
// source pixels [first[i], first[i] + count[i]) weighted by weight[i * stride ...].
struct Taps {
  std::vector<int> first, count;
  std::vector<float> weight;
  int stride = 0;
};

Taps taps(int in_size, int out_size, int out_first, int out_count) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = filter_scale;  // the triangle's support (1) stretched when shrinking
  Taps t;
  t.stride = static_cast<int>(std::ceil(support)) * 2 + 1;
  t.first.resize(static_cast<size_t>(out_count));
  t.count.resize(t.first.size());
  t.weight.assign(t.first.size() * static_cast<size_t>(t.stride), 0.0f);
  for (int i = 0; i < out_count; ++i) {
    const double center = (out_first + i + 0.5) * scale;
    // Truncation towards zero, as PIL's (int) casts: not rounding (lo of -0.4 is 0).
    const int lo = std::max(static_cast<int>(std::trunc(center - support + 0.5)), 0);
    const int hi = std::min(static_cast<int>(std::trunc(center + support + 0.5)), in_size);
    double sum = 0;
    std::vector<double> w(static_cast<size_t>(hi - lo));
    for (int x = lo; x < hi; ++x) {
      const double d = std::fabs((x - center + 0.5) / filter_scale);
      w[static_cast<size_t>(x - lo)] = d < 1 ? 1 - d : 0;
      sum += w[static_cast<size_t>(x - lo)];
    }
    t.first[static_cast<size_t>(i)] = lo;
    t.count[static_cast<size_t>(i)] = hi - lo;
    for (int x = lo; x < hi; ++x) {
      t.weight[static_cast<size_t>(i * t.stride + x - lo)] =
          static_cast<float>(sum > 0 ? w[static_cast<size_t>(x - lo)] / sum : 0);
    }
  }
  return t;
}

// Python's round(): half to even (the default floating-point rounding mode).
int round_half_even(double v) { return static_cast<int>(std::nearbyint(v)); }

}  // namespace

CropBox random_resized_crop_box(int height, int width, std::mt19937_64& rng, double scale_min) {
  const double area = static_cast<double>(height) * width;
  const double log_lo = std::log(3.0 / 4.0), log_hi = std::log(4.0 / 3.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * (scale_min + (1.0 - scale_min) * unit(rng));
    const double ratio = std::exp(log_lo + (log_hi - log_lo) * unit(rng));
    const int w = round_half_even(std::sqrt(target * ratio));
    const int h = round_half_even(std::sqrt(target / ratio));
    if (w > 0 && w <= width && h > 0 && h <= height) {
      const int top = std::uniform_int_distribution<int>(0, height - h)(rng);
      const int left = std::uniform_int_distribution<int>(0, width - w)(rng);
      return {top, left, h, w};
    }
  }
  const double in_ratio = static_cast<double>(width) / height;
  int w = width, h = height;
  if (in_ratio < 3.0 / 4.0) {
    h = round_half_even(w / (3.0 / 4.0));
  } else if (in_ratio > 4.0 / 3.0) {
    w = round_half_even(h * (4.0 / 3.0));
  }
  return {(height - h) / 2, (width - w) / 2, h, w};
}

int eval_resize_for(int size) { return static_cast<int>(std::lround(size * 256.0 / 224.0)); }

EvalGeometry eval_geometry(int height, int width, int resize, int crop_height, int crop_width) {
  EvalGeometry g;
  if (height <= width) {
    g.resized_height = resize;
    g.resized_width = static_cast<int>(static_cast<int64_t>(resize) * width / height);
  } else {
    g.resized_width = resize;
    g.resized_height = static_cast<int>(static_cast<int64_t>(resize) * height / width);
  }
  // torchvision pads an image smaller than the crop; sizes from eval_resize_for never are.
  if (g.resized_height < crop_height || g.resized_width < crop_width)
    throw std::invalid_argument("eval_geometry: the resized image is smaller than the crop");
  g.top = round_half_even((g.resized_height - crop_height) / 2.0);
  g.left = round_half_even((g.resized_width - crop_width) / 2.0);
  return g;
}

Normalization imagenet_normalization(int channels) {
  if (channels == 3) return {{0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}};
  if (channels == 1) return {{0.459f}, {0.226f}};
  throw std::invalid_argument("imagenet_normalization: channels " + std::to_string(channels));
}

void resample_to_planes(const DecodedImage& src, const CropBox& from, const ResampleTarget& to, bool flip,
                        const Normalization& norm, float* out) {
  const int channels = src.channels;
  const Taps across = taps(from.width, to.full_width, to.left, to.width);
  const Taps down = taps(from.height, to.full_height, to.top, to.height);
  // Source rows the window needs, relative to the box.
  const int row_lo = down.first.front();
  const int row_hi = down.first.back() + down.count.back();
  // Horizontal pass: rows [row_lo, row_hi) of the box resampled to the window's columns.
  std::vector<float> rows(static_cast<size_t>(row_hi - row_lo) * static_cast<size_t>(to.width) *
                          static_cast<size_t>(channels));
  for (int y = row_lo; y < row_hi; ++y) {
    const uint8_t* line =
        src.pixels.data() + (static_cast<size_t>(from.top + y) * static_cast<size_t>(src.width) + from.left) *
                                static_cast<size_t>(channels);
    float* row = rows.data() + static_cast<size_t>(y - row_lo) * static_cast<size_t>(to.width * channels);
    for (int x = 0; x < to.width; ++x) {
      const float* w = across.weight.data() + static_cast<size_t>(x * across.stride);
      const uint8_t* p = line + static_cast<size_t>(across.first[static_cast<size_t>(x)] * channels);
      for (int c = 0; c < channels; ++c) {
        float sum = 0;
        for (int k = 0; k < across.count[static_cast<size_t>(x)]; ++k) sum += w[k] * p[k * channels + c];
        row[x * channels + c] = sum;
      }
    }
  }
  // Vertical pass, then [0, 1], the normalisation and the planes.
  const size_t plane = static_cast<size_t>(to.height) * static_cast<size_t>(to.width);
  for (int y = 0; y < to.height; ++y) {
    const float* w = down.weight.data() + static_cast<size_t>(y * down.stride);
    const int first = down.first[static_cast<size_t>(y)] - row_lo;
    for (int x = 0; x < to.width; ++x) {
      const int ox = flip ? to.width - 1 - x : x;
      for (int c = 0; c < channels; ++c) {
        float sum = 0;
        for (int k = 0; k < down.count[static_cast<size_t>(y)]; ++k) {
          sum += w[k] * rows[(static_cast<size_t>(first + k) * static_cast<size_t>(to.width) + static_cast<size_t>(x)) *
                                 static_cast<size_t>(channels) +
                             static_cast<size_t>(c)];
        }
        const float value = std::clamp(sum, 0.0f, 255.0f) / 255.0f;
        out[static_cast<size_t>(c) * plane + static_cast<size_t>(y * to.width + ox)] =
            (value - norm.mean[static_cast<size_t>(c)]) / norm.stddev[static_cast<size_t>(c)];
      }
    }
  }
}

void train_transform(const DecodedImage& src, int height, int width, std::mt19937_64& rng, const Normalization& norm,
                     float* out, double scale_min) {
  const CropBox box = random_resized_crop_box(src.height, src.width, rng, scale_min);
  const bool flip = std::uniform_int_distribution<int>(0, 1)(rng) == 1;
  resample_to_planes(src, box, {height, width, 0, 0, height, width}, flip, norm, out);
}

void eval_transform(const DecodedImage& src, int height, int width, const Normalization& norm, float* out) {
  const EvalGeometry g = eval_geometry(src.height, src.width, eval_resize_for(std::min(height, width)), height, width);
  resample_to_planes(src, {0, 0, src.height, src.width},
                     {g.resized_height, g.resized_width, g.top, g.left, height, width}, false, norm, out);
}

}  // namespace layerplan
