#include "runtime/training/train_data.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <random>
#include <stdexcept>

#include "common/error.h"
#include "runtime/datasets.h"
#include "runtime/image_folder.h"
#include "runtime/training/image_folder_source.h"

namespace layerplan {
namespace {

uint64_t mix(uint64_t a, uint64_t b) { return mix_seeds(a, b); }

class SyntheticSource : public SampleSource {
 public:
  SyntheticSource(int64_t samples, int64_t elements, int64_t classes, uint64_t seed)
      : samples_(samples), elements_(elements), classes_(classes), seed_(seed) {}
  int64_t samples() const override { return samples_; }
  int64_t label(int64_t index) const override {
    std::mt19937_64 rng(mix(seed_, static_cast<uint64_t>(index)));
    return std::uniform_int_distribution<int64_t>(0, classes_ - 1)(rng);
  }
  void image(int64_t index, int /*epoch*/, float* out) const override {
    std::mt19937_64 rng(mix(seed_ ^ 0x5EEDULL, static_cast<uint64_t>(index)));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (int64_t i = 0; i < elements_; ++i) out[i] = normal(rng);
  }

 private:
  int64_t samples_, elements_, classes_;
  uint64_t seed_;
};

// A split read from files: where it is and how to read a range of it.
struct Split {
  std::string what;  // names the file(s) in messages
  DatasetShape shape;
  std::function<ImageBatch(SampleRange)> read;
  std::function<std::vector<int64_t>()> labels;
};

// Per-channel mean and standard deviation.
struct ChannelStats {
  std::vector<double> mean, stddev;
};

// Every label of a split and the images of some ranges of its samples, each zero-padded
// by `pad` pixels on every side.
class FileSource : public SampleSource {
 public:
  FileSource(DatasetShape shape, std::vector<int64_t> labels, int64_t pad)
      : shape_(shape), labels_(std::move(labels)), pad_(pad) {}
  void hold(ImageBatch batch) { held_.push_back(std::move(batch)); }
  void standardize(const ChannelStats& stats) {
    const int64_t plane = shape_.height * shape_.width;
    for (ImageBatch& b : held_) {
      for (size_t i = 0; i < b.images.size(); ++i) {
        const size_t c = (i / static_cast<size_t>(plane)) % static_cast<size_t>(shape_.channels);
        b.images[i] = static_cast<float>((b.images[i] - stats.mean[c]) / stats.stddev[c]);
      }
    }
  }

  int64_t samples() const override { return shape_.samples; }
  int64_t label(int64_t index) const override { return labels_.at(static_cast<size_t>(index)); }
  void image(int64_t index, int /*epoch*/, float* out) const override {
    const auto it = std::find_if(held_.begin(), held_.end(), [&](const ImageBatch& b) {
      return index >= b.range.first && index < b.range.first + b.range.count;
    });
    if (it == held_.end()) throw std::logic_error("sample " + std::to_string(index) + " was not loaded by this rank");
    const DatasetShape& s = shape_;
    const float* in = it->images.data() + (index - it->range.first) * s.image_elements();
    const int64_t h = s.height + 2 * pad_, w = s.width + 2 * pad_;
    std::fill(out, out + s.channels * h * w, 0.0f);
    for (int64_t c = 0; c < s.channels; ++c) {
      for (int64_t y = 0; y < s.height; ++y) {
        std::copy_n(in + (c * s.height + y) * s.width, s.width, out + (c * h + y + pad_) * w + pad_);
      }
    }
  }

 private:
  DatasetShape shape_;
  std::vector<int64_t> labels_;
  int64_t pad_;
  std::vector<ImageBatch> held_;
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

// The mean and standard deviation of each channel over the whole split, read in chunks
// (in file order, in double: every rank computes the same figures).
ChannelStats channel_stats(const Split& split) {
  const DatasetShape& s = split.shape;
  const int64_t plane = s.height * s.width;
  std::vector<double> sum(static_cast<size_t>(s.channels)), squares(sum.size());
  constexpr int64_t kChunk = 4096;
  for (int64_t first = 0; first < s.samples; first += kChunk) {
    const ImageBatch b = split.read({first, std::min(kChunk, s.samples - first)});
    for (size_t i = 0; i < b.images.size(); ++i) {
      const size_t c = (i / static_cast<size_t>(plane)) % sum.size();
      sum[c] += b.images[i];
      squares[c] += static_cast<double>(b.images[i]) * b.images[i];
    }
  }
  ChannelStats stats;
  const double count = static_cast<double>(s.samples * plane);
  for (size_t c = 0; c < sum.size(); ++c) {
    const double mean = sum[c] / count;
    const double stddev = std::sqrt(std::max(0.0, squares[c] / count - mean * mean));
    require(stddev > 0, split.what + ": channel " + std::to_string(c) + " is constant; --normalize cannot scale it");
    stats.mean.push_back(mean);
    stats.stddev.push_back(stddev);
  }
  return stats;
}

// `split` with every label and the images of the lanes at batch `positions` (see the
// header), standardised by `stats` when given.
std::unique_ptr<SampleSource> load_split(const Split& split, int64_t pad, int64_t classes, int64_t batch,
                                         std::vector<Interval> positions, const ChannelStats* stats) {
  std::vector<int64_t> labels = split.labels();
  for (int64_t label : labels) {
    require(label >= 0 && label < classes, split.what + " has label " + std::to_string(label) + ", the model has " +
                                               std::to_string(classes) + " classes");
  }
  auto source = std::make_unique<FileSource>(split.shape, std::move(labels), pad);
  const int64_t lane = split.shape.samples / batch;
  std::sort(positions.begin(), positions.end(), [](const Interval& a, const Interval& b) { return a.lo < b.lo; });
  for (size_t i = 0; i < positions.size() && lane > 0;) {
    // Tiles may share or abut positions: read each run of lanes once.
    Interval run = positions[i];
    for (++i; i < positions.size() && positions[i].lo <= run.hi; ++i) run.hi = std::max(run.hi, positions[i].hi);
    source->hold(split.read({run.lo * lane, (run.hi - run.lo) * lane}));
  }
  if (stats) source->standardize(*stats);
  return source;
}

Split idx_split(const std::string& images, const std::string& labels) {
  return {"'" + images + "'", idx_dataset_shape(images, labels),
          [images, labels](SampleRange r) { return read_idx_dataset(images, labels, r); },
          [images, labels] { return read_idx_labels(images, labels); }};
}

Split safetensors_split(const std::string& path) {
  return {"dataset '" + path + "'", safetensors_dataset_shape(path),
          [path](SampleRange r) { return read_safetensors_dataset(path, r); },
          [path] { return read_safetensors_labels(path); }};
}

// Synthetic data, Fashion-MNIST or a safetensors file.
TrainingData load_file_data(const std::string& spec, const Shape& input, int64_t classes, const DataOptions& options) {
  TrainingData data;
  const int64_t batch = input.n();
  if (spec == "synthetic") {
    data.train =
        std::make_unique<SyntheticSource>(100 * batch, input.c() * input.h() * input.w(), classes, options.seed);
    data.description = "synthetic data, " + std::to_string(100 * batch) + " samples an epoch";
    return data;
  }
  Split train, test;
  bool has_test = false;
  int64_t pad = 0;
  if (spec == "fashion-mnist") {
    const char* env = std::getenv("LAYERPLAN_FASHION_MNIST_DIR");
    const FashionMnistFiles f = fashion_mnist_files(env && *env ? env : kDebianFashionMnistDir);
    train = idx_split(f.train_images, f.train_labels);
    test = idx_split(f.test_images, f.test_labels);
    has_test = true;
    pad = fit(train.shape, input, "Fashion-MNIST", true);
    data.description = "Fashion-MNIST, " + std::to_string(train.shape.samples) + " training and " +
                       std::to_string(test.shape.samples) + " test samples" + (pad ? ", padded to 32x32" : "");
  } else {
    train = safetensors_split(spec);
    pad = fit(train.shape, input, "dataset '" + spec + "'", false);
    data.description = "'" + spec + "', " + std::to_string(train.shape.samples) + " samples";
  }
  require(train.shape.samples >= batch, train.what + " has " + std::to_string(train.shape.samples) +
                                            " samples, fewer than one batch of " + std::to_string(batch));
  ChannelStats stats;
  if (options.normalize) {
    stats = channel_stats(train);
    data.description += ", normalised (mean " + std::to_string(stats.mean[0]) + ", std " +
                        std::to_string(stats.stddev[0]) + (stats.mean.size() > 1 ? " in channel 0)" : ")");
  }
  const ChannelStats* by = options.normalize ? &stats : nullptr;
  data.train = load_split(train, pad, classes, batch, options.positions, by);
  if (has_test) data.test = load_split(test, pad, classes, batch, options.positions, by);
  return data;
}

constexpr const char* kImageFolderPrefix = "imagefolder:";

bool is_image_folder(const std::string& spec) { return spec.rfind(kImageFolderPrefix, 0) == 0; }

// The folder of an "imagefolder:DIR" spec, checked against the model's classes.
ImageFolder scan_for_model(const std::string& spec, int64_t classes) {
  const std::string dir = spec.substr(std::string(kImageFolderPrefix).size());
  require(!dir.empty(), "'" + spec + "': expected imagefolder:DIR, a folder with one subfolder of images per class");
  ImageFolder folder = scan_image_folder(dir);
  require(
      static_cast<int64_t>(folder.classes.size()) <= classes,
      spec + " has " + std::to_string(folder.classes.size()) + " classes, the model has " + std::to_string(classes));
  return folder;
}

std::string image_folder_description(const ImageFolder& f) {
  return "image folder '" + f.root + "', " + std::to_string(f.files.size()) + " images in " +
         std::to_string(f.classes.size()) + " classes";
}

TrainingData load_image_folder(const std::string& spec, const Shape& input, int64_t classes,
                               const DataOptions& options) {
  TrainingData data;
  ImageFolder folder = scan_for_model(spec, classes);
  require(static_cast<int64_t>(folder.files.size()) >= input.n(), spec + " has " + std::to_string(folder.files.size()) +
                                                                      " images, fewer than one batch of " +
                                                                      std::to_string(input.n()));
  data.description = image_folder_description(folder) + ", augmented (random resized crop and flip)";
  data.train = image_folder_source(
      std::move(folder), input,
      {.augment = true, .seed = options.seed, .strict = options.strict, .crop_scale = options.crop_scale});
  return data;
}

// --val-data: an image folder (whose classes must be the training folder's, when that is one
// too) or a safetensors file.
std::unique_ptr<SampleSource> load_val_split(const std::string& spec, const std::string& train_spec, const Shape& input,
                                             int64_t classes, const DataOptions& options, std::string& description,
                                             int64_t& val_classes) {
  if (!is_image_folder(spec)) {
    const Split split = safetensors_split(spec);
    const int64_t pad = fit(split.shape, input, "dataset '" + spec + "'", false);
    description = "validation '" + spec + "', " + std::to_string(split.shape.samples) + " samples";
    return load_split(split, pad, classes, input.n(), options.positions, nullptr);
  }
  ImageFolder folder = scan_for_model(spec, classes);
  if (is_image_folder(train_spec)) {
    const ImageFolder train = scan_image_folder(train_spec.substr(std::string(kImageFolderPrefix).size()));
    require(train.classes == folder.classes, "--val-data " + spec + ": its class folders are not those of --data " +
                                                 train_spec + " (the labels would not match)");
  }
  description = "validation " + image_folder_description(folder);
  val_classes = static_cast<int64_t>(folder.classes.size());
  return image_folder_source(std::move(folder), input,
                             {.augment = false, .seed = options.seed, .strict = options.strict});
}

}  // namespace

uint64_t mix_seeds(uint64_t a, uint64_t b) {
  uint64_t z = a * 0x9E3779B97F4A7C15ULL + b + 0x632BE59BD9B4E019ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

TrainingData load_training_data(const std::string& spec, const Shape& input, int64_t classes,
                                const DataOptions& options) {
  TrainingData data;
  const int64_t batch = input.n();
  if (is_image_folder(spec)) {
    require(!options.normalize,
            "--normalize: image folders are always normalised, with fixed figures "
            "(docs/runtime.md); leave it out");
    data = load_image_folder(spec, input, classes, options);
  } else {
    data = load_file_data(spec, input, classes, options);
  }
  if (!options.val_data.empty()) {
    require(!options.normalize, "--normalize with --val-data " + options.val_data +
                                    ": the validation split would not be standardised with the training split's "
                                    "figures; leave one of them out");
    std::string description;
    data.test = load_val_split(options.val_data, spec, input, classes, options, description, data.test_classes);
    require(data.test->samples() >= batch, "--val-data " + options.val_data + " has " +
                                               std::to_string(data.test->samples()) +
                                               " samples, fewer than one batch of " + std::to_string(batch));
    data.description += "; " + description;
  }
  return data;
}

EpochOrder::EpochOrder(int64_t samples, int64_t batch, bool shuffle, uint64_t seed, int epoch)
    : batch_(batch), lane_(samples / batch) {
  if (!shuffle) return;
  offset_.resize(static_cast<size_t>(batch_ * lane_));
  for (int64_t n = 0; n < batch_; ++n) {
    const auto lane = offset_.begin() + n * lane_;
    std::iota(lane, lane + lane_, int64_t{0});
    // std::shuffle's draws depend on the standard library, not the rank: every rank of one
    // build gets the same order.
    std::mt19937_64 rng(mix(mix(seed ^ 0x5u, static_cast<uint64_t>(epoch)), static_cast<uint64_t>(n)));
    std::shuffle(lane, lane + lane_, rng);
  }
}

int64_t EpochOrder::sample(int64_t b, int64_t n) const {
  return n * lane_ + (offset_.empty() ? b : offset_[static_cast<size_t>(n * lane_ + b)]);
}

GlobalBatch assemble_batch(const SampleSource& source, const EpochOrder& order, int epoch, int64_t b,
                           const Shape& input, const std::vector<Interval>& needed) {
  GlobalBatch g{Tensor(Box::whole(input)), {}};
  const int64_t elements = input.c() * input.h() * input.w();
  for (int64_t n = 0; n < input.n(); ++n) {
    const int64_t index = order.sample(b, n);
    g.labels.push_back(source.label(index));
    const bool want =
        std::any_of(needed.begin(), needed.end(), [&](const Interval& i) { return n >= i.lo && n < i.hi; });
    if (want) source.image(index, epoch, g.images.data() + n * elements);
  }
  return g;
}

}  // namespace layerplan
