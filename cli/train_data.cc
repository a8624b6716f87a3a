#include "cli/train_data.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <random>

#include "common/error.h"
#include "runtime/datasets.h"

namespace layerplan {
namespace {

uint64_t mix(uint64_t a, uint64_t b) {
  // splitmix64 of the pair: distinct seeds for every (seed, index)
  uint64_t z = a * 0x9E3779B97F4A7C15ULL + b + 0x632BE59BD9B4E019ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

class SyntheticSource : public SampleSource {
 public:
  SyntheticSource(int64_t samples, int64_t elements, int64_t classes, uint64_t seed)
      : samples_(samples), elements_(elements), classes_(classes), seed_(seed) {}
  int64_t samples() const override { return samples_; }
  int64_t label(int64_t index) const override {
    std::mt19937_64 rng(mix(seed_, static_cast<uint64_t>(index)));
    return std::uniform_int_distribution<int64_t>(0, classes_ - 1)(rng);
  }
  void image(int64_t index, float* out) const override {
    std::mt19937_64 rng(mix(seed_ ^ 0x5EEDULL, static_cast<uint64_t>(index)));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (int64_t i = 0; i < elements_; ++i) out[i] = normal(rng);
  }

 private:
  int64_t samples_, elements_, classes_;
  uint64_t seed_;
};

// A dataset in memory, each image zero-padded by `pad` pixels on every side.
class MemorySource : public SampleSource {
 public:
  MemorySource(ImageBatch batch, int64_t pad) : batch_(std::move(batch)), pad_(pad) {}
  int64_t samples() const override { return batch_.range.count; }
  int64_t label(int64_t index) const override { return batch_.labels[static_cast<size_t>(index)]; }
  void image(int64_t index, float* out) const override {
    const DatasetShape& s = batch_.shape;
    const float* in = batch_.images.data() + index * s.image_elements();
    const int64_t h = s.height + 2 * pad_, w = s.width + 2 * pad_;
    std::fill(out, out + s.channels * h * w, 0.0f);
    for (int64_t c = 0; c < s.channels; ++c) {
      for (int64_t y = 0; y < s.height; ++y) {
        std::copy_n(in + (c * s.height + y) * s.width, s.width, out + (c * h + y + pad_) * w + pad_);
      }
    }
  }

 private:
  ImageBatch batch_;
  int64_t pad_;
};

std::string shape_str(int64_t c, int64_t h, int64_t w) {
  return std::to_string(c) + "x" + std::to_string(h) + "x" + std::to_string(w);
}

// The padding that makes `s` the model's input, or a UsageError.
int64_t fit(const DatasetShape& s, const Shape& input, const std::string& what, bool may_pad) {
  const int64_t pad = (input.h() - s.height) / 2;
  const bool exact = s.channels == input.c() && s.height == input.h() && s.width == input.w();
  const bool padded = may_pad && s.channels == input.c() && pad > 0 && s.height + 2 * pad == input.h() &&
                      s.width + 2 * pad == input.w();
  require(exact || padded, what + " has " + shape_str(s.channels, s.height, s.width) + " images, the model takes " +
                               shape_str(input.c(), input.h(), input.w()));
  return exact ? 0 : pad;
}

std::unique_ptr<SampleSource> checked(ImageBatch batch, int64_t pad, int64_t classes, const std::string& what) {
  for (int64_t label : batch.labels) {
    require(label >= 0 && label < classes, what + " has label " + std::to_string(label) + ", the model has " +
                                               std::to_string(classes) + " classes");
  }
  return std::make_unique<MemorySource>(std::move(batch), pad);
}

}  // namespace

TrainingData load_training_data(const std::string& spec, const Shape& input, int64_t classes, uint64_t seed) {
  TrainingData data;
  if (spec == "synthetic") {
    data.train = std::make_unique<SyntheticSource>(100 * input.n(), input.c() * input.h() * input.w(), classes, seed);
    data.description = "synthetic data, " + std::to_string(100 * input.n()) + " samples an epoch";
    return data;
  }
  if (spec == "fashion-mnist") {
    const char* env = std::getenv("LAYERPLAN_FASHION_MNIST_DIR");
    const FashionMnistFiles f = fashion_mnist_files(env && *env ? env : kDebianFashionMnistDir);
    const DatasetShape train = idx_dataset_shape(f.train_images, f.train_labels);
    const DatasetShape test = idx_dataset_shape(f.test_images, f.test_labels);
    const int64_t pad = fit(train, input, "Fashion-MNIST", true);
    data.train = checked(read_idx_dataset(f.train_images, f.train_labels, {0, train.samples}), pad, classes,
                         f.train_labels);
    data.test = checked(read_idx_dataset(f.test_images, f.test_labels, {0, test.samples}), pad, classes,
                        f.test_labels);
    data.description = "Fashion-MNIST, " + std::to_string(train.samples) + " training and " +
                       std::to_string(test.samples) + " test samples" + (pad ? ", padded to 32x32" : "");
    return data;
  }
  const DatasetShape shape = safetensors_dataset_shape(spec);
  const int64_t pad = fit(shape, input, "dataset '" + spec + "'", false);
  data.train = checked(read_safetensors_dataset(spec, {0, shape.samples}), pad, classes, "dataset '" + spec + "'");
  data.description = "'" + spec + "', " + std::to_string(shape.samples) + " samples";
  return data;
}

std::vector<int64_t> epoch_order(int64_t samples, bool shuffle, uint64_t seed, int epoch) {
  std::vector<int64_t> order(static_cast<size_t>(samples));
  std::iota(order.begin(), order.end(), int64_t{0});
  if (shuffle) {
    std::mt19937_64 rng(mix(seed ^ 0x5u, static_cast<uint64_t>(epoch)));
    // std::shuffle's draws depend on the standard library, not the rank: every rank of one
    // build gets the same order.
    std::shuffle(order.begin(), order.end(), rng);
  }
  return order;
}

GlobalBatch assemble_batch(const SampleSource& source, const std::vector<int64_t>& order, int64_t first,
                           const Shape& input, const std::vector<Interval>& needed) {
  GlobalBatch b{Tensor(Box::whole(input)), {}};
  const int64_t elements = input.c() * input.h() * input.w();
  for (int64_t n = 0; n < input.n(); ++n) {
    const int64_t index = order[static_cast<size_t>(first + n)];
    b.labels.push_back(source.label(index));
    const bool want =
        std::any_of(needed.begin(), needed.end(), [&](const Interval& i) { return n >= i.lo && n < i.hi; });
    if (want) source.image(index, b.images.data() + n * elements);
  }
  return b;
}

}  // namespace layerplan
