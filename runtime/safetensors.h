#pragma once
// Reading and writing the safetensors format (the format of Hugging Face and of recent
// PyTorch checkpoints), for initial weights, checkpoints and datasets.
//
// A file is: 8 bytes, the little-endian length N of the header; N bytes of JSON (UTF-8,
// possibly padded with spaces), an object mapping each tensor name to
// {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]} plus an optional
// "__metadata__" object of string values; then the data: each tensor's bytes,
// little-endian, row-major, at [begin, end) counted from the end of the header.
//
// The reader is strict: anything that is not exactly that is a UsageError whose message
// names the file and what is wrong with it (a truncated file, a header that is not JSON,
// an unknown dtype, a size that does not match the shape, offsets out of range,
// overlapping or leaving gaps). The writer writes atomically: a temporary file in the
// same directory, fsync, rename; on failure nothing is left behind and the old file, if
// any, is intact. Integers and floats are stored little-endian, as on every machine this
// runs on (checked at compile time).
//
// Everything here is in namespace layerplan::safetensors: its Tensor (named bytes of any
// dtype) is not the kernels' layerplan::Tensor (floats of a box).
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace layerplan::safetensors {

enum class DType { kBool, kU8, kI8, kU16, kI16, kF16, kBF16, kU32, kI32, kF32, kU64, kI64, kF64, kF8E4M3, kF8E5M2 };

// "F32", "I64", ... as the format spells them.
const char* dtype_name(DType dtype);
// Bytes per element.
size_t dtype_size(DType dtype);
// The DType named `name`; false when the format has no such dtype (or we do not know it).
bool parse_dtype(const std::string& name, DType* dtype);

// One tensor held in memory: its dtype, shape and raw bytes.
struct Tensor {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::vector<std::byte> data;

  int64_t elements() const;
  static Tensor from_floats(std::vector<int64_t> shape, std::span<const float> values);
  static Tensor from_int64s(std::vector<int64_t> shape, std::span<const int64_t> values);
  // The values, for a tensor of that dtype; throws std::invalid_argument otherwise.
  std::vector<float> floats() const;
  std::vector<int64_t> int64s() const;
};

// What a file holds: named tensors and string metadata.
struct Contents {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;
};

// Writes `contents` to `path` atomically, through common/safe_write.h (never through a
// symbolic link). Throws std::invalid_argument for a tensor whose byte count does not match
// its shape or a bad name (empty or "__metadata__"), and UsageError "WHAT 'PATH': ..." when
// it cannot be written.
void write_file(const std::string& path, const Contents& contents, const std::string& what = "safetensors file");

// Where one tensor's bytes are in a file.
struct TensorInfo {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte offsets from the start of the data

  int64_t elements() const;
};

// An open file whose header has been read and validated; tensors are read on demand,
// whole or a range of rows (the first dimension), so a worker reads only its share.
class Reader {
 public:
  // Opens and validates `path`. Throws UsageError naming the file for anything wrong.
  explicit Reader(std::string path);

  const std::string& path() const { return path_; }
  // All tensors, by name.
  const std::map<std::string, TensorInfo>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // The tensor named `name`; throws UsageError naming the file when there is none.
  const TensorInfo& info(const std::string& name) const;

  Tensor read(const std::string& name) const;
  // Rows [first, first + count) along the first dimension (the whole first dimension
  // is rows 0..shape[0]-1). Throws UsageError for a scalar or an out-of-range range.
  Tensor read_rows(const std::string& name, int64_t first, int64_t count) const;

 private:
  std::string path_;
  uint64_t data_start_ = 0;  // file offset of the data
  std::map<std::string, TensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
};

// Reads every tensor of `path`.
Contents read_file(const std::string& path);

}  // namespace layerplan::safetensors
