#pragma once
// Where `layerplan train` gets its samples: synthetic images, Fashion-MNIST or a
// safetensors dataset (runtime/datasets.h), shaped for the model's input layer.
//
// Every rank holds the same sample order (a seeded shuffle per epoch), so the samples of
// global batch b are the same on every rank; a rank then fills only the samples that its
// input-layer tiles cover (the executor crops each tile's part of the batch) and leaves
// the rest zero.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "planner/model_graph.h"
#include "runtime/kernels/tensor.h"

namespace layerplan {

// One split of a dataset in memory, or generated on demand (synthetic).
class SampleSource {
 public:
  virtual ~SampleSource() = default;
  virtual int64_t samples() const = 0;
  virtual int64_t label(int64_t index) const = 0;
  // Writes sample `index`, shaped as the model's input (C x H x W), to `out`.
  virtual void image(int64_t index, float* out) const = 0;
};

struct TrainingData {
  std::unique_ptr<SampleSource> train;
  std::unique_ptr<SampleSource> test;  // null when the data has no test split
  std::string description;             // one line for the log
};

// `spec` is "synthetic", "fashion-mnist" or a safetensors file. `input` is the model's
// input shape (N x C x H x W) and `classes` its number of classes. Throws UsageError for
// a missing or bad file, images that do not fit the model, or labels outside the classes.
//   synthetic: 100 global batches of standard-normal images and uniform labels per
//     epoch, sample i drawn from a generator seeded by (seed, i).
//   fashion-mnist: the IDX files in kDebianFashionMnistDir (or $LAYERPLAN_FASHION_MNIST_DIR),
//     28x28 images zero-padded by 2 on each side to 32x32 as LeNet-5 was trained on MNIST
//     (so only a model with a 1x32x32 or 1x28x28 input accepts it).
TrainingData load_training_data(const std::string& spec, const Shape& input, int64_t classes, uint64_t seed);

// The order of the samples in epoch `epoch`: 0..n-1, or a permutation drawn from `seed`
// and the epoch (the same on every rank).
std::vector<int64_t> epoch_order(int64_t samples, bool shuffle, uint64_t seed, int epoch);

// The global batch made of samples order[first, first + input.n()): a tensor over the
// whole input shape whose samples in `needed` (global sample positions of the batch) are
// filled and the others zero, and every label.
struct GlobalBatch {
  Tensor images;
  std::vector<int64_t> labels;
};
GlobalBatch assemble_batch(const SampleSource& source, const std::vector<int64_t>& order, int64_t first,
                           const Shape& input, const std::vector<Interval>& needed);

}  // namespace layerplan
