// Fuzz target: an IDX dataset, plain or gzip'd (runtime/datasets.h, Fashion-MNIST's format).
// The input is an image file and a label file: its first byte says how many 16-byte blocks
// the image file takes (the rest is the label file). Both are held in memory files, as the
// reader reads by range.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "runtime/datasets.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static layerplan::fuzz::MemoryFile images_file("fuzz-images.idx"), labels_file("fuzz-labels.idx");
  if (size < 1) return 0;
  const size_t split = std::min(size - 1, size_t{data[0]} * 16);
  const std::string& images = images_file.hold(data + 1, split);
  const std::string& labels = labels_file.hold(data + 1 + split, size - 1 - split);
  layerplan::fuzz::expect_clean_errors([&] {
    const layerplan::DatasetShape shape = layerplan::idx_dataset_shape(images, labels);
    layerplan::read_idx_labels(images, labels);
    layerplan::read_idx_dataset(images, labels, {0, std::min<int64_t>(shape.samples, 2)});
  });
  return 0;
}
