#pragma once
// Private to model/: parsing an ONNX file's ModelProto while the bytes of its float32
// weights stay in the file. Planning needs the graph, the initializers' names, types and
// dims, not their values; parsing every weight (hundreds of MB for VGG-16) took most of
// `layerplan plan --model vgg16.onnx`. So the file is read as a stream: the fields down to
// each initializer are copied by protobuf's wire-format reader into a lean copy of the
// file, a float32 initializer's raw_data longer than kElidedRawDataBytes is skipped
// (seeked over in a file: never read) and only its place is kept; protobuf then parses the
// lean copy, and onnx_initial_weights() reads those bytes when it needs the values.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include <google/protobuf/io/zero_copy_stream.h>

namespace layerplan {
class InputFile;
}

namespace layerplan::onnx_import {

// Longer raw_data of a float32 initializer is left in the file (64 floats: weights, never
// the scalar constants an operator reads, such as Pad's value).
inline constexpr int64_t kElidedRawDataBytes = 256;

// Where an ONNX file's bytes come from: memory, or an open file read in parts.
class OnnxSource {
 public:
  virtual ~OnnxSource() = default;
  virtual int64_t size() const = 0;
  // The file from its first byte.
  virtual std::unique_ptr<google::protobuf::io::ZeroCopyInputStream> stream() const = 0;
  // `count` bytes from `offset` into `out`; throws UsageError when the file no longer has them.
  virtual void read(int64_t offset, int64_t count, char* out) const = 0;
};

// The bytes of a file in memory (at most INT_MAX of them).
class BytesSource : public OnnxSource {
 public:
  explicit BytesSource(const std::string& bytes) : bytes_(bytes) {}
  int64_t size() const override { return static_cast<int64_t>(bytes_.size()); }
  std::unique_ptr<google::protobuf::io::ZeroCopyInputStream> stream() const override;
  void read(int64_t offset, int64_t count, char* out) const override;

 private:
  const std::string& bytes_;
};

// An open file, read with read() and pread(); what is skipped is seeked over.
class FileSource : public OnnxSource {
 public:
  explicit FileSource(const InputFile& file) : file_(file) {}
  int64_t size() const override;
  std::unique_ptr<google::protobuf::io::ZeroCopyInputStream> stream() const override;
  void read(int64_t offset, int64_t count, char* out) const override;

 private:
  const InputFile& file_;
};

// Where an initializer's raw_data lies in the file.
struct DataSpan {
  int64_t offset = 0;
  int64_t size = 0;
};

// The ModelProto; a float32 initializer in `elided` holds one placeholder byte as raw_data
// (ONNX's checker wants a value field; it does not compare its size with the dims), its
// bytes are at the span in the source.
struct ParsedOnnx {
  std::unique_ptr<onnx::ModelProto> proto;
  std::unordered_map<const onnx::TensorProto*, DataSpan> elided;
};

// Throws UsageError "ORIGIN: more than 131072 nodes in the graph: the limit ..." as soon as
// the graph has more nodes, initializers, inputs or outputs than common/limits.h allows
// (counted while the file is read: nothing of a larger graph is built), and
// "ORIGIN: not an ONNX model (not a protobuf ModelProto, or truncated)"
// for bytes protobuf would not parse, or that end before the fields they announce.
ParsedOnnx parse_onnx(const OnnxSource& source, const std::string& origin);

}  // namespace layerplan::onnx_import
