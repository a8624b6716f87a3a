#include "runtime/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "common/error.h"
#include "common/input_file.h"
#include "common/safe_write.h"
#include "common/text.h"

namespace layerplan::safetensors {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; this code copies it as is");

namespace {

struct DTypeEntry {
  DType dtype;
  const char* name;
  size_t size;
};

constexpr std::array<DTypeEntry, 15> kDTypes = {{
    {DType::kBool, "BOOL", 1},
    {DType::kU8, "U8", 1},
    {DType::kI8, "I8", 1},
    {DType::kU16, "U16", 2},
    {DType::kI16, "I16", 2},
    {DType::kF16, "F16", 2},
    {DType::kBF16, "BF16", 2},
    {DType::kU32, "U32", 4},
    {DType::kI32, "I32", 4},
    {DType::kF32, "F32", 4},
    {DType::kU64, "U64", 8},
    {DType::kI64, "I64", 8},
    {DType::kF64, "F64", 8},
    {DType::kF8E4M3, "F8_E4M3", 1},
    {DType::kF8E5M2, "F8_E5M2", 1},
}};

// The format's reference implementation refuses headers above 100 MB; so do we.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

const DTypeEntry& entry(DType dtype) {
  for (const DTypeEntry& e : kDTypes) {
    if (e.dtype == dtype) return e;
  }
  throw std::logic_error("unknown DType");
}

// Elements of `shape`, or -1 when the product overflows.
int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string range_text(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

// Reads exactly `size` bytes at `offset`; false on a short read.
bool read_at(int fd, void* out, size_t size, uint64_t offset) {
  auto* p = static_cast<char*>(out);
  while (size > 0) {
    const ssize_t n = ::pread(fd, p, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

}  // namespace

const char* dtype_name(DType dtype) { return entry(dtype).name; }
size_t dtype_size(DType dtype) { return entry(dtype).size; }

bool parse_dtype(const std::string& name, DType* dtype) {
  for (const DTypeEntry& e : kDTypes) {
    if (name == e.name) {
      *dtype = e.dtype;
      return true;
    }
  }
  return false;
}

int64_t Tensor::elements() const { return product(shape); }
int64_t TensorInfo::elements() const { return product(shape); }

namespace {

// A tensor of `dtype` holding `values` in `shape`; `what` names the caller in errors.
template <typename T>
Tensor tensor_of(DType dtype, const char* what, std::vector<int64_t> shape, std::span<const T> values) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  if (t.elements() != static_cast<int64_t>(values.size())) {
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(values.size()) + " values for shape " +
                                shape_text(t.shape));
  }
  t.data.resize(values.size_bytes());
  // memcpy of nothing still needs valid pointers; an empty tensor's have none.
  if (!values.empty()) std::memcpy(t.data.data(), values.data(), values.size_bytes());
  return t;
}

}  // namespace

Tensor Tensor::from_floats(std::vector<int64_t> shape, std::span<const float> values) {
  return tensor_of(DType::kF32, "Tensor::from_floats", std::move(shape), values);
}

Tensor Tensor::from_int64s(std::vector<int64_t> shape, std::span<const int64_t> values) {
  return tensor_of(DType::kI64, "Tensor::from_int64s", std::move(shape), values);
}

std::vector<float> Tensor::floats() const {
  if (dtype != DType::kF32) throw std::invalid_argument(std::string("Tensor::floats of a ") + dtype_name(dtype));
  std::vector<float> v(data.size() / sizeof(float));
  if (!v.empty()) std::memcpy(v.data(), data.data(), v.size() * sizeof(float));
  return v;
}

std::vector<int64_t> Tensor::int64s() const {
  if (dtype != DType::kI64) throw std::invalid_argument(std::string("Tensor::int64s of a ") + dtype_name(dtype));
  std::vector<int64_t> v(data.size() / sizeof(int64_t));
  if (!v.empty()) std::memcpy(v.data(), data.data(), v.size() * sizeof(int64_t));
  return v;
}

void write_file(const std::string& path, const Contents& contents, const std::string& what) {
  nlohmann::json header = nlohmann::json::object();
  if (!contents.metadata.empty()) header["__metadata__"] = contents.metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : contents.tensors) {
    if (name.empty() || name == "__metadata__") {
      throw std::invalid_argument("write_safetensors: tensor name '" + name + "' is not allowed");
    }
    const int64_t n = t.elements();
    if (n < 0 || static_cast<uint64_t>(n) * dtype_size(t.dtype) != t.data.size()) {
      throw std::invalid_argument("write_safetensors: tensor '" + name + "' has " + std::to_string(t.data.size()) +
                                  " bytes, not what shape " + shape_text(t.shape) + " of " + dtype_name(t.dtype) +
                                  " needs");
    }
    header[name] = {
        {"dtype", dtype_name(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("write_safetensors: a name or metadata value is not UTF-8: ") + e.what());
  }
  // Pad with spaces so that the data starts 8-byte aligned, as the reference writer does.
  text.append((8 - text.size() % 8) % 8, ' ');
  const uint64_t header_size = text.size();

  // A new file of a random name in the target's folder, renamed onto it when whole
  // (common/safe_write.h); mode 0644 less the umask.
  NewFile file(path, what, 0644);
  file.write(&header_size, sizeof header_size);
  file.write(text);
  for (const auto& [name, t] : contents.tensors) file.write(t.data.data(), t.data.size());
  file.publish();
}

namespace {

// The UsageError of a bad file: "safetensors file 'PATH': WHAT".
struct BadFile {
  const std::string& path;
  UsageError operator()(const std::string& what) const {
    return UsageError("safetensors file '" + path + "': " + what);
  }
};

std::string file_label(const std::string& path) { return "safetensors file '" + path + "'"; }

// The file, opened through common/input_file.h: a regular file, never a FIFO or device.
// It is never read whole (the header has its own limit, tensors are read by range), so
// its size is not capped.
InputFile open_safetensors(const std::string& path) {
  return InputFile(path, file_label(path), std::numeric_limits<int64_t>::max());
}

// A header value as a message shows it: a scalar as written (shortened), not a subtree.
std::string short_json(const nlohmann::json& value) {
  return value.is_structured() ? (value.is_array() ? "an array" : "an object") : clipped(value.dump());
}

// The header's JSON text of an open file, and where its data starts and how long it is.
struct RawHeader {
  std::string text;
  uint64_t data_start = 0, data_size = 0;
};

RawHeader read_raw_header(int fd, const BadFile& bad) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) throw bad("not a regular file");
  const auto file_size = static_cast<uint64_t>(st.st_size);
  uint64_t header_size = 0;
  if (file_size < 8 || !read_at(fd, &header_size, 8, 0)) {
    throw bad("truncated: " + std::to_string(file_size) + " bytes, fewer than the 8-byte header length");
  }
  if (header_size > kMaxHeaderBytes) {
    throw bad("header length " + std::to_string(header_size) + " is above the 100 MB limit (corrupt file?)");
  }
  if (8 + header_size > file_size) {
    throw bad("truncated: the header length says " + std::to_string(header_size) + " bytes but the file has only " +
              std::to_string(file_size - 8) + " after it");
  }
  RawHeader raw;
  raw.text.assign(header_size, '\0');
  if (!read_at(fd, raw.text.data(), raw.text.size(), 8)) throw bad("cannot read the header");
  raw.data_start = 8 + header_size;
  raw.data_size = file_size - raw.data_start;
  return raw;
}

std::map<std::string, std::string> parse_metadata(const nlohmann::json& value, const BadFile& bad) {
  if (!value.is_object()) throw bad("__metadata__ is not an object of strings");
  std::map<std::string, std::string> metadata;
  for (const auto& [key, v] : value.items()) {
    if (!v.is_string()) throw bad("__metadata__ value '" + clipped(key) + "' is not a string");
    metadata[key] = v.get<std::string>();
  }
  return metadata;
}

// The first field of a tensor's header entry that the format does not have.
std::optional<std::string> unknown_field(const nlohmann::json& entry) {
  for (const auto& [key, v] : entry.items()) {
    if (key != "dtype" && key != "shape" && key != "data_offsets") return key;
  }
  return std::nullopt;
}

// The dtype and shape of a tensor's header entry (`where` names the tensor).
void parse_dtype_and_shape(const nlohmann::json& value, const std::string& where, const BadFile& bad,
                           TensorInfo* info) {
  if (!value.is_object()) throw bad(where + " is not an object");
  if (const std::optional<std::string> key = unknown_field(value)) {
    throw bad(where + " has an unknown field '" + clipped(*key) + "'");
  }
  if (!value.contains("dtype") || !value["dtype"].is_string()) throw bad(where + " has no dtype string");
  const std::string dtype = value["dtype"].get<std::string>();
  if (!parse_dtype(dtype, &info->dtype)) throw bad(where + " has unknown dtype '" + clipped(dtype) + "'");
  if (!value.contains("shape") || !value["shape"].is_array()) throw bad(where + " has no shape array");
  for (const auto& d : value["shape"]) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      throw bad(where + " has a shape entry that is not a non-negative integer: " + short_json(d));
    }
    info->shape.push_back(d.get<int64_t>());
  }
}

// The data offsets of a tensor's header entry, checked against the data's size and the shape.
void parse_offsets(const nlohmann::json& value, const std::string& where, uint64_t data_size, const BadFile& bad,
                   TensorInfo* info) {
  const auto& offsets = value.contains("data_offsets") ? value["data_offsets"] : nlohmann::json();
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
      !offsets[1].is_number_unsigned()) {
    throw bad(where + " has no data_offsets [begin, end] of two non-negative integers");
  }
  info->begin = offsets[0].get<uint64_t>();
  info->end = offsets[1].get<uint64_t>();
  const std::string range = range_text(info->begin, info->end);
  if (info->begin > info->end) throw bad(where + " has data_offsets " + range + " that end before they begin");
  if (info->end > data_size) {
    throw bad(where + " has data_offsets " + range + " beyond the " + std::to_string(data_size) +
              " bytes of data (truncated file?)");
  }
  const int64_t n = info->elements();
  const uint64_t bytes = info->end - info->begin, size = dtype_size(info->dtype);
  if (n < 0 || static_cast<uint64_t>(n) > bytes / size + 1 || static_cast<uint64_t>(n) * size != bytes) {
    throw bad(where + " has " + std::to_string(bytes) + " bytes but shape " + shape_text(info->shape) + " needs " +
              (n < 0 ? std::string("more than 2^63") : std::to_string(n)) + " elements of " + std::to_string(size) +
              " bytes (" + dtype_name(info->dtype) + ")");
  }
}

TensorInfo parse_tensor_info(const std::string& name, const nlohmann::json& value, uint64_t data_size,
                             const BadFile& bad) {
  const std::string where = "tensor '" + clipped(name) + "'";
  TensorInfo info;
  info.name = name;
  parse_dtype_and_shape(value, where, bad, &info);
  parse_offsets(value, where, data_size, bad, &info);
  return info;
}

// Throws unless the tensors tile the data exactly: no overlap, no gap, nothing after the last.
void check_tiling(const std::map<std::string, TensorInfo>& tensors, uint64_t data_size, const BadFile& bad) {
  std::vector<const TensorInfo*> by_offset;
  by_offset.reserve(tensors.size());
  for (const auto& [name, info] : tensors) by_offset.push_back(&info);
  std::sort(by_offset.begin(), by_offset.end(), [](const TensorInfo* a, const TensorInfo* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t covered = 0;
  const TensorInfo* previous = nullptr;
  for (const TensorInfo* t : by_offset) {
    if (t->begin < covered) {
      throw bad("tensor '" + t->name + "' at " + range_text(t->begin, t->end) + " overlaps tensor '" + previous->name +
                "' at " + range_text(previous->begin, previous->end));
    }
    if (t->begin > covered) throw bad("data bytes " + range_text(covered, t->begin) + " belong to no tensor");
    covered = t->end;
    previous = t;
  }
  if (covered != data_size) {
    throw bad("data bytes " + range_text(covered, data_size) + " after the last tensor belong to no tensor");
  }
}

}  // namespace

Reader::Reader(std::string path) : path_(std::move(path)) {
  const BadFile bad{path_};
  RawHeader raw;
  raw = read_raw_header(open_safetensors(path_).fd(), bad);
  data_start_ = raw.data_start;
  check_json_depth(raw.text, file_label(path_) + ": the header");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(raw.text);
  } catch (const nlohmann::json::parse_error& e) {
    // Only the position: the parser's message quotes the text.
    throw bad("the header is not valid JSON (syntax error at byte " + std::to_string(e.byte) + ")");
  } catch (const nlohmann::json::exception&) {
    throw bad("the header is not valid JSON that can be read (a number beyond the range of a double?)");
  }
  if (!header.is_object()) throw bad("the header is not a JSON object");
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      metadata_ = parse_metadata(value, bad);
    } else {
      tensors_[name] = parse_tensor_info(name, value, raw.data_size, bad);
    }
  }
  check_tiling(tensors_, raw.data_size, bad);
}

const TensorInfo& Reader::info(const std::string& name) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) throw UsageError("safetensors file '" + path_ + "': has no tensor '" + name + "'");
  return it->second;
}

Tensor Reader::read(const std::string& name) const {
  const TensorInfo& i = info(name);
  if (i.shape.empty()) {
    Tensor t;
    t.dtype = i.dtype;
    t.data.resize(i.end - i.begin);
    const InputFile file = open_safetensors(path_);
    if (!read_at(file.fd(), t.data.data(), t.data.size(), data_start_ + i.begin)) {
      throw UsageError("safetensors file '" + path_ + "': cannot read tensor '" + name + "'");
    }
    return t;
  }
  return read_rows(name, 0, i.shape[0]);
}

Tensor Reader::read_rows(const std::string& name, int64_t first, int64_t count) const {
  const TensorInfo& i = info(name);
  const std::string where = "safetensors file '" + path_ + "': tensor '" + name + "'";
  require(!i.shape.empty(), where + " is a scalar and has no rows");
  require(first >= 0 && count >= 0 && first <= i.shape[0] - count,
          where + ": rows [" + std::to_string(first) + ", " + std::to_string(first + count) + ") outside its " +
              std::to_string(i.shape[0]) + " rows");
  const uint64_t row_bytes = i.shape[0] == 0 ? 0 : (i.end - i.begin) / static_cast<uint64_t>(i.shape[0]);
  Tensor t;
  t.dtype = i.dtype;
  t.shape = i.shape;
  t.shape[0] = count;
  t.data.resize(static_cast<size_t>(row_bytes * static_cast<uint64_t>(count)));
  const InputFile file = open_safetensors(path_);
  if (!read_at(file.fd(), t.data.data(), t.data.size(),
               data_start_ + i.begin + row_bytes * static_cast<uint64_t>(first))) {
    throw UsageError(where + ": cannot read its bytes (the file changed or was truncated?)");
  }
  return t;
}

Contents read_file(const std::string& path) {
  const Reader reader(path);
  Contents contents;
  contents.metadata = reader.metadata();
  for (const auto& [name, info] : reader.tensors()) contents.tensors[name] = reader.read(name);
  return contents;
}

}  // namespace layerplan::safetensors
