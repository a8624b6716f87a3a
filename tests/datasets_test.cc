// Datasets: workers' shares tile the samples; IDX files (plain or gzip) and safetensors
// datasets give each worker exactly its samples; Debian's Fashion-MNIST reads as 60,000
// + 10,000 labelled 28x28 images; bad files are UsageErrors naming the file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "runtime/datasets.h"
#include "runtime/safetensors.h"
#include "tests/scratch_dir.h"

namespace layerplan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

void put_u32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
}

// IDX files of `n` images of h x w where pixel j of image i is (i * 7 + j) % 256 and
// label i is i % 10.
std::pair<std::string, std::string> idx_bytes(uint32_t n, uint32_t h, uint32_t w) {
  std::string images, labels;
  put_u32(images, 0x803);
  put_u32(images, n);
  put_u32(images, h);
  put_u32(images, w);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t j = 0; j < h * w; ++j) images += static_cast<char>((i * 7 + j) % 256);
  }
  put_u32(labels, 0x801);
  put_u32(labels, n);
  for (uint32_t i = 0; i < n; ++i) labels += static_cast<char>(i % 10);
  return {images, labels};
}

void write_plain(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

void write_gzip(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  gzclose(f);
}

void expect_idx_samples(const ImageBatch& b, uint32_t h, uint32_t w) {
  ASSERT_EQ(b.images.size(), static_cast<size_t>(b.range.count) * h * w);
  ASSERT_EQ(b.labels.size(), static_cast<size_t>(b.range.count));
  for (int64_t k = 0; k < b.range.count; ++k) {
    const int64_t i = b.range.first + k;
    EXPECT_EQ(b.labels[static_cast<size_t>(k)], i % 10);
    for (uint32_t j = 0; j < h * w; ++j) {
      ASSERT_EQ(b.images[static_cast<size_t>(k) * h * w + j], static_cast<float>((i * 7 + j) % 256) / 255.0f)
          << "sample " << i << " pixel " << j;
    }
  }
}

TEST(WorkerShare, ContiguousBlocksThatTileTheSamplesFirstOnesLarger) {
  int64_t next = 0;
  for (int w = 0; w < 4; ++w) {
    const SampleRange r = worker_share(10, w, 4);
    EXPECT_EQ(r.first, next);
    EXPECT_EQ(r.count, w < 2 ? 3 : 2);
    next += r.count;
  }
  EXPECT_EQ(next, 10);
  EXPECT_EQ(worker_share(2, 3, 4).count, 0);
  EXPECT_THROW(worker_share(10, 4, 4), std::invalid_argument);
}

TEST(IdxDataset, EachWorkerReadsExactlyItsSamplesFromPlainAndGzipFiles) {
  ScratchDir dir;
  const auto [images, labels] = idx_bytes(11, 3, 2);
  write_plain(dir.file("img"), images);
  write_plain(dir.file("lab"), labels);
  write_gzip(dir.file("img.gz"), images);
  write_gzip(dir.file("lab.gz"), labels);
  for (const std::string suffix : {"", ".gz"}) {
    const DatasetShape shape = idx_dataset_shape(dir.file("img" + suffix), dir.file("lab" + suffix));
    EXPECT_EQ(shape.samples, 11);
    EXPECT_EQ(shape.channels, 1);
    EXPECT_EQ(shape.height, 3);
    EXPECT_EQ(shape.width, 2);
    for (int w = 0; w < 3; ++w) {
      const ImageBatch b = read_idx_dataset(dir.file("img" + suffix), dir.file("lab" + suffix), worker_share(11, w, 3));
      expect_idx_samples(b, 3, 2);
    }
  }
}

TEST(IdxDataset, BadFilesAreUsageErrorsNamingTheFile) {
  ScratchDir dir;
  const auto [images, labels] = idx_bytes(5, 2, 2);
  write_plain(dir.file("img"), images);
  write_plain(dir.file("lab"), labels);
  write_plain(dir.file("truncated"), images.substr(0, images.size() - 1));
  const auto [other_images, other_labels] = idx_bytes(4, 2, 2);
  write_plain(dir.file("lab4"), other_labels);
  const auto expect_error = [](const auto& call, const std::string& file, const std::string& what) {
    try {
      call();
      ADD_FAILURE() << what << ": accepted";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr("'" + file + "'"));
      EXPECT_THAT(e.what(), HasSubstr(what));
    }
  };
  expect_error([&] { idx_dataset_shape(dir.file("missing"), dir.file("lab")); }, dir.file("missing"), "cannot be read");
  expect_error([&] { idx_dataset_shape(dir.file("lab"), dir.file("lab")); }, dir.file("lab"),
               "not an IDX image file (magic 0x00000801, expected 0x00000803)");
  expect_error([&] { idx_dataset_shape(dir.file("img"), dir.file("img")); }, dir.file("img"), "not an IDX label file");
  expect_error([&] { idx_dataset_shape(dir.file("img"), dir.file("lab4")); }, dir.file("lab4"),
               "5 images but 4 labels");
  expect_error(
      [&] {
        read_idx_dataset(dir.file("truncated"), dir.file("lab"), {0, 5});
      },
      dir.file("truncated"), "truncated");
  expect_error(
      [&] {
        read_idx_dataset(dir.file("img"), dir.file("lab"), {3, 3});
      },
      dir.file("img"), "samples [3, 6) outside its 5 samples");
}

// Found by tests/fuzz/fuzz_idx: height x width of two large 32-bit sizes overflowed int64.
TEST(IdxDataset, HugeImageSizesAreRefusedWithoutOverflow) {
  ScratchDir dir;
  std::string images, labels;
  put_u32(images, 0x803);
  put_u32(images, 1);
  put_u32(images, 0xfdf5ffff);
  put_u32(images, 0xfff8ff2c);
  put_u32(labels, 0x801);
  put_u32(labels, 1);
  labels += '\0';
  write_plain(dir.file("img"), images);
  write_plain(dir.file("lab"), labels);
  try {
    idx_dataset_shape(dir.file("img"), dir.file("lab"));
    ADD_FAILURE() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("image size 4260757503x4294508332 is not plausible"));
  }
}

int64_t peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// A header that claims 2^32 - 1 labels in a file of 9 bytes: the reader finds the file short
// without first allocating (and zeroing) 4 GiB for the labels.
TEST(IdxDataset, AClaimedSizeIsNotAllocatedBeforeTheBytesAreThere) {
  ScratchDir dir;
  std::string images, labels;
  put_u32(images, 0x803);
  put_u32(images, 0xffffffff);
  put_u32(images, 1);
  put_u32(images, 1);
  put_u32(labels, 0x801);
  put_u32(labels, 0xffffffff);
  labels += '\0';
  write_plain(dir.file("img"), images);
  write_plain(dir.file("lab"), labels);
  const int64_t before = peak_rss_kib();
  try {
    read_idx_labels(dir.file("img"), dir.file("lab"));
    ADD_FAILURE() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("truncated or corrupt"));
  }
  EXPECT_LT(peak_rss_kib() - before, int64_t{512} << 10) << "KiB of peak memory grown";
}

TEST(FashionMnist, DebiansFilesHoldTenBalancedClassesOf28x28Images) {
  const FashionMnistFiles files = fashion_mnist_files();
  ASSERT_TRUE(fs::exists(files.test_images)) << files.test_images << " is missing: scripts/setup installs "
                                             << "Debian's dataset-fashion-mnist";
  const DatasetShape train = idx_dataset_shape(files.train_images, files.train_labels);
  EXPECT_EQ(train.samples, 60000);
  const DatasetShape test = idx_dataset_shape(files.test_images, files.test_labels);
  EXPECT_EQ(test.samples, 10000);
  EXPECT_EQ(test.height, 28);
  EXPECT_EQ(test.width, 28);
  // The test set has 1,000 images of each class; worker 2 of 4 reads only its quarter.
  std::vector<int> per_class(10, 0);
  for (int w = 0; w < 4; ++w) {
    const ImageBatch b = read_idx_dataset(files.test_images, files.test_labels, worker_share(10000, w, 4));
    ASSERT_EQ(b.labels.size(), 2500u);
    for (int64_t label : b.labels) {
      ASSERT_GE(label, 0);
      ASSERT_LT(label, 10);
      ++per_class[static_cast<size_t>(label)];
    }
    float lo = 1, hi = 0;
    for (float x : b.images) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    EXPECT_EQ(lo, 0.0f);
    EXPECT_EQ(hi, 1.0f);
  }
  for (int c = 0; c < 10; ++c) EXPECT_EQ(per_class[static_cast<size_t>(c)], 1000) << "class " << c;
}

TEST(SafetensorsDataset, EachWorkerReadsExactlyItsSamples) {
  ScratchDir dir;
  const int64_t n = 7, c = 2, h = 3, w = 1;
  std::vector<float> images(static_cast<size_t>(n * c * h * w));
  for (size_t i = 0; i < images.size(); ++i) images[i] = static_cast<float>(i);
  std::vector<int64_t> labels(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) labels[static_cast<size_t>(i)] = 100 + i;
  safetensors::Contents contents;
  contents.tensors["images"] = safetensors::Tensor::from_floats({n, c, h, w}, images);
  contents.tensors["labels"] = safetensors::Tensor::from_int64s({n}, labels);
  safetensors::write_file(dir.file("d.safetensors"), contents);
  const DatasetShape shape = safetensors_dataset_shape(dir.file("d.safetensors"));
  EXPECT_EQ(shape.samples, n);
  EXPECT_EQ(shape.channels, c);
  for (int worker = 0; worker < 3; ++worker) {
    const SampleRange r = worker_share(n, worker, 3);
    const ImageBatch b = read_safetensors_dataset(dir.file("d.safetensors"), r);
    ASSERT_EQ(b.labels.size(), static_cast<size_t>(r.count));
    for (int64_t k = 0; k < r.count; ++k) EXPECT_EQ(b.labels[static_cast<size_t>(k)], 100 + r.first + k);
    ASSERT_EQ(b.images.size(), static_cast<size_t>(r.count * c * h * w));
    for (size_t i = 0; i < b.images.size(); ++i) {
      EXPECT_EQ(b.images[i], static_cast<float>(static_cast<size_t>(r.first * c * h * w) + i));
    }
  }
}

TEST(SafetensorsDataset, WrongTensorsAreUsageErrorsNamingTheFile) {
  ScratchDir dir;
  const auto expect_error = [&](const safetensors::Contents& contents, const std::string& what) {
    const std::string path = dir.file("bad.safetensors");
    safetensors::write_file(path, contents);
    try {
      safetensors_dataset_shape(path);
      ADD_FAILURE() << what << ": accepted";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr("'" + path + "'"));
      EXPECT_THAT(e.what(), HasSubstr(what));
    }
  };
  const std::vector<float> four(4, 0.0f);
  const std::vector<int64_t> two(2, 0), one(1, 0);
  safetensors::Contents c;
  c.tensors["images"] = safetensors::Tensor::from_floats({2, 1, 2, 1}, four);
  expect_error(c, "expected tensors 'images' and 'labels'");
  c.tensors["labels"] = safetensors::Tensor::from_int64s({1}, one);
  expect_error(c, "2 images but 1 labels");
  c.tensors["labels"] = safetensors::Tensor::from_floats({2, 2}, four);
  expect_error(c, "expected 'labels' of I64 with 1 dimension");
  c.tensors["labels"] = safetensors::Tensor::from_int64s({2}, two);
  c.tensors["images"] = safetensors::Tensor::from_floats({4}, four);
  expect_error(c, "expected 'images' of F32 with 4 dimensions");
}

}  // namespace
}  // namespace layerplan
