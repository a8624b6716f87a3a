#include "runtime/kernels/kernel_types.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace layerplan {

namespace {

void check_same_channels(Interval a, Interval b, const char* what) {
  if (a != b) {
    throw std::invalid_argument(std::string(what) + " of channels [" + std::to_string(a.lo) + "," +
                                std::to_string(a.hi) + ") cannot be summed with channels [" + std::to_string(b.lo) +
                                "," + std::to_string(b.hi) + ")");
  }
}

// SplitMix64's finalizer: a bijective mix, so distinct (seed, index) pairs rarely collide.
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

void BatchNormStats::add(const BatchNormStats& other) {
  check_same_channels(channels, other.channels, "batch-norm statistics");
  for (size_t i = 0; i < sum.size(); ++i) {
    sum[i] += other.sum[i];
    sum_sq[i] += other.sum_sq[i];
  }
  count += other.count;
}

void BatchNormGradStats::add(const BatchNormGradStats& other) {
  check_same_channels(channels, other.channels, "batch-norm gradient statistics");
  for (size_t i = 0; i < sum_dy.size(); ++i) {
    sum_dy[i] += other.sum_dy[i];
    sum_dy_xhat[i] += other.sum_dy_xhat[i];
  }
}

bool dropout_keeps(uint64_t seed, int64_t index, double probability) {
  const uint64_t bits = mix(mix(seed + 0x9e3779b97f4a7c15ULL) ^ static_cast<uint64_t>(index));
  // The top 24 bits as a uniform in [0, 1): exact in float, which the Python generator mirrors.
  const double u = static_cast<double>(bits >> 40) / 16777216.0;
  return u >= probability;
}

void update_running_stats(const BatchNormStats& global, double momentum, LayerParams* params) {
  check_same_channels(global.channels, params->channels, "update_running_stats: statistics");
  if (global.count < 2 || params->running_mean.size() != global.sum.size()) {
    throw std::invalid_argument(
        "update_running_stats: needs batch-norm parameters and at least 2 elements per "
        "channel, got " +
        std::to_string(global.count));
  }
  const auto m = static_cast<double>(global.count);
  for (size_t i = 0; i < global.sum.size(); ++i) {
    const double mean = global.sum[i] / m;
    const double unbiased = std::max(0.0, (global.sum_sq[i] - m * mean * mean) / (m - 1));
    params->running_mean[i] = static_cast<float>((1 - momentum) * params->running_mean[i] + momentum * mean);
    params->running_var[i] = static_cast<float>((1 - momentum) * params->running_var[i] + momentum * unbiased);
  }
}

LayerParams batch_norm_weight_grads(const BatchNormGradStats& local) {
  LayerParams p;
  p.channels = local.channels;
  p.row = 1;
  p.weight.assign(local.sum_dy_xhat.begin(), local.sum_dy_xhat.end());
  p.bias.assign(local.sum_dy.begin(), local.sum_dy.end());
  return p;
}

}  // namespace layerplan
