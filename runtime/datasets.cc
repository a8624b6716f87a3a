#include "runtime/datasets.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <vector>

#include "common/error.h"
#include "common/index.h"
#include "common/input_file.h"
#include "runtime/safetensors.h"

namespace layerplan {
namespace {

constexpr uint32_t kIdxImagesMagic = 0x00000803;  // unsigned bytes, 3 dimensions
constexpr uint32_t kIdxLabelsMagic = 0x00000801;  // unsigned bytes, 1 dimension

std::string hex(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

// A plain or gzip-compressed file read through zlib (which passes plain files through).
// It is opened through common/input_file.h, so it is a regular file (never a FIFO or a
// device); it is read by range, never whole, so its size is not capped.
class GzReader {
 public:
  explicit GzReader(std::string path) : path_(std::move(path)), file_(open(path_)) {}
  ~GzReader() {
    if (file_) gzclose(file_);
  }
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;

  // Reads exactly `size` bytes at uncompressed offset `offset`; UsageError if the file ends first.
  void read_at(uint64_t offset, void* out, size_t size, const std::string& what) {
    if (gzseek(file_, static_cast<z_off_t>(offset), SEEK_SET) != static_cast<z_off_t>(offset)) {
      throw UsageError("dataset file '" + path_ + "': truncated or corrupt: it ends before " + what);
    }
    auto* p = static_cast<char*>(out);
    while (size > 0) {
      const unsigned chunk = static_cast<unsigned>(std::min<size_t>(size, 1u << 30));
      const int n = gzread(file_, p, chunk);
      if (n <= 0) {
        int code = 0;
        const char* message = gzerror(file_, &code);
        throw UsageError("dataset file '" + path_ + "': truncated or corrupt: it ends before " + what +
                         (code < 0 && message ? std::string(" (") + message + ")" : ""));
      }
      p += n;
      size -= static_cast<size_t>(n);
    }
  }

  // `size` bytes at uncompressed offset `offset`, read in pieces so that memory grows with
  // what the file holds, not with what its header claims (a header can claim 4 GiB).
  std::vector<unsigned char> read_bytes(uint64_t offset, size_t size, const std::string& what) {
    constexpr size_t kPiece = size_t{16} << 20;
    std::vector<unsigned char> bytes;
    while (bytes.size() < size) {
      const size_t done = bytes.size();
      bytes.resize(done + std::min(kPiece, size - done));
      read_at(offset + done, bytes.data() + done, bytes.size() - done, what);
    }
    return bytes;
  }

  uint32_t big_endian_u32(uint64_t offset, const std::string& what) {
    std::array<unsigned char, 4> b{};
    read_at(offset, b.data(), b.size(), what);
    return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
  }

  const std::string& path() const { return path_; }

 private:
  static gzFile open(const std::string& path) {
    InputFile input(path, "dataset file '" + path + "'", std::numeric_limits<int64_t>::max());
    gzFile file = gzdopen(input.fd(), "rb");
    require(file != nullptr, "dataset file '" + path + "' cannot be read: zlib cannot open it");
    input.release();  // zlib closes it
    return file;
  }

  std::string path_;
  gzFile file_;
};

void check_range(const DatasetShape& shape, SampleRange range, const std::string& what) {
  require(range.first >= 0 && range.count >= 0 && range.first <= shape.samples - range.count,
          what + ": samples [" + std::to_string(range.first) + ", " + std::to_string(range.first + range.count) +
              ") outside its " + std::to_string(shape.samples) + " samples");
}

std::vector<int64_t> read_idx_label_range(const std::string& labels_path, SampleRange range) {
  GzReader label_file(labels_path);
  const std::vector<unsigned char> labels =
      label_file.read_bytes(8 + static_cast<uint64_t>(range.first), static_cast<size_t>(range.count),
                            "label " + std::to_string(range.first + range.count - 1));
  return {labels.begin(), labels.end()};
}

}  // namespace

SampleRange worker_share(int64_t total, int worker, int workers) {
  if (workers < 1 || worker < 0 || worker >= workers || total < 0) {
    throw std::invalid_argument("worker_share: worker " + std::to_string(worker) + " of " + std::to_string(workers));
  }
  const int64_t base = total / workers, extra = total % workers;
  SampleRange r;
  r.first = worker * base + std::min<int64_t>(worker, extra);
  r.count = base + (worker < extra ? 1 : 0);
  return r;
}

DatasetShape idx_dataset_shape(const std::string& images_path, const std::string& labels_path) {
  GzReader images(images_path), labels(labels_path);
  const uint32_t image_magic = images.big_endian_u32(0, "the IDX header");
  require(image_magic == kIdxImagesMagic, "dataset file '" + images_path + "': not an IDX image file (magic " +
                                              hex(image_magic) + ", expected " + hex(kIdxImagesMagic) + ")");
  const uint32_t label_magic = labels.big_endian_u32(0, "the IDX header");
  require(label_magic == kIdxLabelsMagic, "dataset file '" + labels_path + "': not an IDX label file (magic " +
                                              hex(label_magic) + ", expected " + hex(kIdxLabelsMagic) + ")");
  DatasetShape shape;
  shape.samples = images.big_endian_u32(4, "the IDX header");
  shape.channels = 1;
  shape.height = images.big_endian_u32(8, "the IDX header");
  shape.width = images.big_endian_u32(12, "the IDX header");
  // Each is at most 2^32 - 1, so their product is checked, not formed (it can pass 2^63).
  require(shape.height >= 1 && shape.width >= 1 && product_within({shape.height, shape.width}, 1 << 24),
          "dataset file '" + images_path + "': image size " + std::to_string(shape.height) + "x" +
              std::to_string(shape.width) + " is not plausible");
  const int64_t label_count = labels.big_endian_u32(4, "the IDX header");
  require(label_count == shape.samples, "dataset files '" + images_path + "' and '" + labels_path +
                                            "': " + std::to_string(shape.samples) + " images but " +
                                            std::to_string(label_count) + " labels");
  return shape;
}

ImageBatch read_idx_dataset(const std::string& images_path, const std::string& labels_path, SampleRange range) {
  ImageBatch batch;
  batch.shape = idx_dataset_shape(images_path, labels_path);
  batch.range = range;
  check_range(batch.shape, range, "dataset file '" + images_path + "'");
  const uint64_t image_bytes = static_cast<uint64_t>(batch.shape.image_elements());
  GzReader images(images_path);
  const std::vector<unsigned char> pixels =
      images.read_bytes(16 + image_bytes * static_cast<uint64_t>(range.first),
                        static_cast<size_t>(image_bytes * static_cast<uint64_t>(range.count)),
                        "image " + std::to_string(range.first + range.count - 1));
  batch.images.resize(pixels.size());
  for (size_t i = 0; i < pixels.size(); ++i) batch.images[i] = static_cast<float>(pixels[i]) / 255.0f;
  batch.labels = read_idx_label_range(labels_path, range);
  return batch;
}

std::vector<int64_t> read_idx_labels(const std::string& images_path, const std::string& labels_path) {
  const DatasetShape shape = idx_dataset_shape(images_path, labels_path);
  return read_idx_label_range(labels_path, {0, shape.samples});
}

FashionMnistFiles fashion_mnist_files(const std::string& dir) {
  return {dir + "/train-images-idx3-ubyte.gz", dir + "/train-labels-idx1-ubyte.gz", dir + "/t10k-images-idx3-ubyte.gz",
          dir + "/t10k-labels-idx1-ubyte.gz"};
}

DatasetShape safetensors_dataset_shape(const std::string& path) {
  const safetensors::Reader reader(path);
  const std::string where = "dataset file '" + path + "'";
  require(reader.tensors().count("images") && reader.tensors().count("labels"),
          where + ": expected tensors 'images' and 'labels'");
  const safetensors::TensorInfo& images = reader.info("images");
  const safetensors::TensorInfo& labels = reader.info("labels");
  require(images.dtype == safetensors::DType::kF32 && images.shape.size() == 4,
          where + ": expected 'images' of F32 with 4 dimensions (N, C, H, W), got " +
              safetensors::dtype_name(images.dtype) + " with " + std::to_string(images.shape.size()));
  require(labels.dtype == safetensors::DType::kI64 && labels.shape.size() == 1,
          where + ": expected 'labels' of I64 with 1 dimension (N), got " + safetensors::dtype_name(labels.dtype) +
              " with " + std::to_string(labels.shape.size()));
  require(labels.shape[0] == images.shape[0], where + ": " + std::to_string(images.shape[0]) + " images but " +
                                                  std::to_string(labels.shape[0]) + " labels");
  DatasetShape shape;
  shape.samples = images.shape[0];
  shape.channels = images.shape[1];
  shape.height = images.shape[2];
  shape.width = images.shape[3];
  return shape;
}

ImageBatch read_safetensors_dataset(const std::string& path, SampleRange range) {
  ImageBatch batch;
  batch.shape = safetensors_dataset_shape(path);
  batch.range = range;
  check_range(batch.shape, range, "dataset file '" + path + "'");
  const safetensors::Reader reader(path);
  batch.images = reader.read_rows("images", range.first, range.count).floats();
  batch.labels = reader.read_rows("labels", range.first, range.count).int64s();
  return batch;
}

std::vector<int64_t> read_safetensors_labels(const std::string& path) {
  const DatasetShape shape = safetensors_dataset_shape(path);
  return safetensors::Reader(path).read_rows("labels", 0, shape.samples).int64s();
}

}  // namespace layerplan
