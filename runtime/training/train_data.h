#pragma once
// Where `layerplan train` gets its samples: synthetic images, Fashion-MNIST or a
// safetensors dataset (runtime/datasets.h), shaped for the model's input layer.
//
// Each rank reads only its share of the images. A split of N samples feeding global
// batches of B is cut into B lanes of L = N / B contiguous samples (the last N % B samples
// are never used, as a last partial batch would be dropped): position n of every batch
// comes from lane n, and an epoch visits each lane's samples in a seeded order. A rank
// whose input-layer tiles cover batch positions [lo, hi) so needs only samples
// [lo·L, hi·L) of the file, and loads only those images (every label is loaded: the loss
// tiles need them and they are small). Every rank computes the same order, so the
// samples of global batch b are the same on every rank and for every plan.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/model_graph.h"
#include "runtime/kernels/tensor.h"

namespace layerplan {

// One split of a dataset: every label, and the images of the lanes this rank reads.
class SampleSource {
 public:
  virtual ~SampleSource() = default;
  virtual int64_t samples() const = 0;
  virtual int64_t label(int64_t index) const = 0;
  // Writes sample `index` of epoch `epoch` (0-based), shaped as the model's input
  // (C x H x W), to `out`; only augmented data depends on the epoch. Throws
  // std::logic_error for a sample whose image this rank did not load. Called from several
  // loader threads at once.
  virtual void image(int64_t index, int epoch, float* out) const = 0;
  // Images that could not be decoded so far (another image took their place).
  virtual int64_t bad_images() const { return 0; }
};

struct TrainingData {
  std::unique_ptr<SampleSource> train;
  std::unique_ptr<SampleSource> test;  // null when the data has no test split
  std::string description;             // one line for the log
  // The classes the test split can have: an image folder's class folders; 0 when only the
  // model says (its number of classes). Top-5 accuracy is reported from 5 on.
  int64_t test_classes = 0;
};

struct DataOptions {
  uint64_t seed = 1;
  // Standardise each channel with the mean and standard deviation of the training split
  // (which reads the whole training split once; every rank gets the same figures).
  // Synthetic data is already standard normal and is left as it is.
  bool normalize = false;
  // The batch positions this rank's input tiles cover: the lanes whose images it loads.
  std::vector<Interval> positions;
  // The evaluation split instead of the data's own test split: "imagefolder:DIR" or a
  // safetensors file; empty for none.
  std::string val_data;
  // Image folders: a file that cannot be decoded stops the run (UsageError naming it)
  // rather than being skipped with a warning.
  bool strict = false;
  double crop_scale = 0.08;  // image folders: the smallest area share of a training crop
};

// `spec` is "synthetic", "fashion-mnist" or a safetensors file. `input` is the model's
// input shape (N x C x H x W: N is the global batch) and `classes` its number of classes.
// Throws UsageError for a missing or bad file, images that do not fit the model, labels
// outside the classes, or a split with fewer samples than one batch.
//   synthetic: 100 global batches of standard-normal images and uniform labels per
//     epoch, sample i drawn from a generator seeded by (seed, i).
//   fashion-mnist: the IDX files in kDebianFashionMnistDir (or $LAYERPLAN_FASHION_MNIST_DIR),
//     28x28 images zero-padded by 2 on each side to 32x32 as LeNet-5 was trained on MNIST
//     (so only a model with a 1x32x32 or 1x28x28 input accepts it).
//   imagefolder:DIR: JPEG and PNG files in torchvision's ImageFolder layout, decoded and
//     augmented as they are needed (runtime/training/image_folder_source.h).
TrainingData load_training_data(const std::string& spec, const Shape& input, int64_t classes,
                                const DataOptions& options);

// The sample at position n of global batch b in one epoch of a split (see the top of the
// file): lane n's sample b, in a per-lane shuffle drawn from (seed, epoch, n), or in file
// order without shuffle.
class EpochOrder {
 public:
  EpochOrder(int64_t samples, int64_t batch, bool shuffle, uint64_t seed, int epoch);
  int64_t batches() const { return lane_; }  // = samples / batch
  int64_t sample(int64_t b, int64_t n) const;

 private:
  int64_t batch_, lane_;
  std::vector<int64_t> offset_;  // batch x lane: the offset in lane n of batch b's sample; empty: file order
};

// Global batch b: a tensor over the whole input shape whose samples at the positions in
// `needed` are filled and the others zero, and every label.
struct GlobalBatch {
  Tensor images;
  std::vector<int64_t> labels;
};
GlobalBatch assemble_batch(const SampleSource& source, const EpochOrder& order, int epoch, int64_t b,
                           const Shape& input, const std::vector<Interval>& needed);

// splitmix64 of a pair: distinct, well-mixed seeds for every (seed, index).
uint64_t mix_seeds(uint64_t a, uint64_t b);

}  // namespace layerplan
