#include "runtime/training/image_folder_source.h"

#include <cstdio>
#include <mutex>
#include <random>
#include <set>

#include "common/error.h"
#include "runtime/image_decode.h"
#include "runtime/image_transforms.h"

namespace layerplan {
namespace {

class ImageFolderSource : public SampleSource {
 public:
  ImageFolderSource(ImageFolder folder, const Shape& input, const ImageFolderSourceOptions& options)
      : folder_(std::move(folder)),
        channels_(static_cast<int>(input.c())),
        height_(static_cast<int>(input.h())),
        width_(static_cast<int>(input.w())),
        norm_(imagenet_normalization(channels_)),
        options_(options) {
    // Each class's files are contiguous: where the class of every file starts and ends.
    for (size_t i = 0; i < folder_.labels.size(); ++i) {
      if (i == 0 || folder_.labels[i] != folder_.labels[i - 1]) class_first_.push_back(static_cast<int64_t>(i));
    }
    class_first_.push_back(static_cast<int64_t>(folder_.labels.size()));
  }

  int64_t samples() const override { return static_cast<int64_t>(folder_.files.size()); }
  int64_t label(int64_t index) const override { return folder_.labels.at(static_cast<size_t>(index)); }

  void image(int64_t index, int epoch, float* out) const override {
    const int64_t label = this->label(index);
    const int64_t first = class_first_[static_cast<size_t>(label)];
    const int64_t count = class_first_[static_cast<size_t>(label) + 1] - first;
    for (int64_t k = 0; k < count; ++k) {
      const int64_t file = first + (index - first + k) % count;
      try {
        const DecodedImage decoded = decode_image_file(folder_.files[static_cast<size_t>(file)], channels_);
        if (options_.augment) {
          std::mt19937_64 rng(
              mix_seeds(mix_seeds(options_.seed ^ 0xA6u, static_cast<uint64_t>(epoch)), static_cast<uint64_t>(index)));
          train_transform(decoded, height_, width_, rng, norm_, out, options_.crop_scale);
        } else {
          eval_transform(decoded, height_, width_, norm_, out);
        }
        return;
      } catch (const BadImage& e) {
        if (options_.strict) throw UsageError(std::string(e.what()) + " (--strict-data)");
        note_bad(file, e.what());
      }
    }
    throw UsageError("imagefolder:" + folder_.root + ": class '" + folder_.classes[static_cast<size_t>(label)] +
                     "' has no readable image");
  }

  int64_t bad_images() const override {
    const std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int64_t>(bad_.size());
  }

 private:
  void note_bad(int64_t file, const char* why) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!bad_.insert(file).second) return;
    std::fprintf(stderr, "warning: %s; skipped, the next image of its class is used in its place\n", why);
  }

  ImageFolder folder_;
  std::vector<int64_t> class_first_;  // per class, then the number of files
  int channels_, height_, width_;
  Normalization norm_;
  ImageFolderSourceOptions options_;
  mutable std::mutex mutex_;
  mutable std::set<int64_t> bad_;  // files found bad, each reported once
};

}  // namespace

std::unique_ptr<SampleSource> image_folder_source(ImageFolder folder, const Shape& input,
                                                  const ImageFolderSourceOptions& options) {
  require(input.c() == 1 || input.c() == 3, "imagefolder:" + folder.root + ": the model takes " +
                                                std::to_string(input.c()) +
                                                " input channels; image folders give 1 (gray) or 3 (RGB)");
  return std::make_unique<ImageFolderSource>(std::move(folder), input, options);
}

}  // namespace layerplan
