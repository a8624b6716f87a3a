#pragma once
// Labelled image datasets read from files, each worker reading only its share of the
// samples:
//   - IDX files, the format of MNIST and Fashion-MNIST (Debian's dataset-fashion-mnist
//     installs them gzip-compressed in /usr/share/datasets/fashion-mnist); plain or
//     .gz files are both read. Pixels (bytes) become floats in [0, 1] (value / 255).
//   - a safetensors file with an `images` tensor (N, C, H, W) of F32 and a `labels`
//     tensor (N) of I64 (runtime/safetensors.h).
// A file that is missing, of another format, truncated, or whose images and labels do
// not agree is a UsageError naming the file and what is wrong.
#include <cstdint>
#include <string>
#include <vector>

namespace layerplan {

// Samples [first, first + count) of a dataset.
struct SampleRange {
  int64_t first = 0;
  int64_t count = 0;
};

// The share of worker `worker` (0-based) among `workers` of `total` samples: contiguous
// blocks in worker order, the first total % workers blocks one sample larger.
SampleRange worker_share(int64_t total, int worker, int workers);

// How many samples a dataset has and the shape of one image.
struct DatasetShape {
  int64_t samples = 0;
  int64_t channels = 0, height = 0, width = 0;
  int64_t image_elements() const { return channels * height * width; }
};

// Some samples of a dataset, in memory.
struct ImageBatch {
  DatasetShape shape;           // of the whole dataset
  SampleRange range;            // which of its samples these are
  std::vector<float> images;    // range.count x C x H x W, row-major
  std::vector<int64_t> labels;  // range.count
};

// IDX files: an idx3-ubyte image file (N x H x W) and an idx1-ubyte label file (N).
// Images come out as N x 1 x H x W.
DatasetShape idx_dataset_shape(const std::string& images_path, const std::string& labels_path);
ImageBatch read_idx_dataset(const std::string& images_path, const std::string& labels_path, SampleRange range);
// Every label of the dataset, without its images.
std::vector<int64_t> read_idx_labels(const std::string& images_path, const std::string& labels_path);

// The four files of Fashion-MNIST in `dir` (names as the dataset publishes them).
struct FashionMnistFiles {
  std::string train_images, train_labels, test_images, test_labels;
};
constexpr const char* kDebianFashionMnistDir = "/usr/share/datasets/fashion-mnist";
FashionMnistFiles fashion_mnist_files(const std::string& dir = kDebianFashionMnistDir);

// A safetensors file with `images` (N, C, H, W) F32 and `labels` (N) I64.
DatasetShape safetensors_dataset_shape(const std::string& path);
ImageBatch read_safetensors_dataset(const std::string& path, SampleRange range);
std::vector<int64_t> read_safetensors_labels(const std::string& path);

}  // namespace layerplan
