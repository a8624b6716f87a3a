#include "model/onnx_parse.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "common/error.h"
#include "common/input_file.h"
#include "common/limits.h"

namespace layerplan::onnx_import {

namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using google::protobuf::io::StringOutputStream;

// The fields on the way from a ModelProto to its initializers' bytes (onnx.proto).
constexpr uint32_t kModelGraphTag = WireFormatLite::MakeTag(7, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
constexpr uint32_t kGraphInitializerTag = WireFormatLite::MakeTag(5, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
constexpr uint32_t kTensorRawDataTag = WireFormatLite::MakeTag(9, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);

// The repeated fields of a GraphProto counted against common/limits.h while the file is
// copied, so that a file of a million nodes is refused before protobuf builds them (and
// long before libonnx's checker and shape inference walk them).
struct CountedField {
  const char* what;
  int64_t limit;
};
constexpr std::array<CountedField, 4> kCountedFields = {{
    {"nodes", kMaxOnnxNodes},
    {"initializers (sparse ones included)", kMaxOnnxInitializers},
    {"graph inputs", kMaxOnnxGraphInputs},
    {"graph outputs and value_info entries", kMaxOnnxValueInfos},
}};

// Which of kCountedFields a GraphProto field is (onnx.proto: node 1, initializer 5, input
// 11, output 12, value_info 13, sparse_initializer 15), or -1.
int counted_field(uint32_t tag) {
  if (WireFormatLite::GetTagWireType(tag) != WireFormatLite::WIRETYPE_LENGTH_DELIMITED) return -1;
  switch (WireFormatLite::GetTagFieldNumber(tag)) {
    case 1:
      return 0;
    case 5:
    case 15:
      return 1;
    case 11:
      return 2;
    case 12:
    case 13:
      return 3;
    default:
      return -1;
  }
}

// Blocks a file is read in: a tensor's header reads one, its weights are seeked over.
constexpr int kFileBlockBytes = 64 << 10;

// Copies a serialized ModelProto field by field (protobuf's WireFormatLite::SkipField
// copies each one whole), except that the raw_data of long initializers is skipped and
// replaced by one byte. Lengths are checked against what is left of the enclosing message
// or of the file, as protobuf's parser would; every other field is left for protobuf to
// judge when it parses the copy. The graph's nodes, initializers, inputs and outputs are
// counted on the way (all of the graph field's occurrences together: protobuf merges them).
class LeanCopy {
 public:
  LeanCopy(CodedInputStream& in, int64_t file_size, const std::string& origin)
      : in_(in), file_size_(file_size), origin_(origin) {}

  bool model(CodedOutputStream& out) {
    while (const uint32_t tag = in_.ReadTag()) {
      const bool ok = tag == kModelGraphTag ? nested(tag, out, [this](CodedOutputStream& o) { return graph(o); })
                                            : WireFormatLite::SkipField(&in_, tag, &out);
      if (!ok) return false;
    }
    return in_.ConsumedEntireMessage() && in_.CurrentPosition() == file_size_;
  }

  // Per initializer of the copy, in order: where its skipped raw_data lies, if it was.
  std::vector<std::optional<DataSpan>>& spans() { return spans_; }

 private:
  bool graph(CodedOutputStream& out) {
    while (const uint32_t tag = in_.ReadTag()) {
      count(tag);
      bool ok = false;
      if (tag == kGraphInitializerTag) {
        const size_t index = spans_.size();
        spans_.emplace_back();
        ok = nested(tag, out, [this, index](CodedOutputStream& o) { return tensor(o, index); });
      } else {
        ok = WireFormatLite::SkipField(&in_, tag, &out);
      }
      if (!ok) return false;
    }
    return true;
  }

  bool tensor(CodedOutputStream& out, size_t index) {
    while (const uint32_t tag = in_.ReadTag()) {
      if (tag != kTensorRawDataTag) {
        if (!WireFormatLite::SkipField(&in_, tag, &out)) return false;
        continue;
      }
      uint32_t length = 0;
      if (!read_length(length)) return false;
      out.WriteTag(tag);
      if (length > kElidedRawDataBytes) {
        spans_[index] = DataSpan{in_.CurrentPosition(), length};
        if (!in_.Skip(static_cast<int>(length))) return false;
        out.WriteVarint32(1);
        out.WriteRaw("", 1);  // the placeholder: one zero byte
      } else {
        spans_[index].reset();  // a later raw_data replaces an earlier one, as in protobuf
        std::string bytes;
        if (!in_.ReadString(&bytes, static_cast<int>(length))) return false;
        out.WriteVarint32(length);
        out.WriteString(bytes);
      }
    }
    return true;
  }

  // Throws UsageError once a counted field passes its limit.
  void count(uint32_t tag) {
    const int field = counted_field(tag);
    if (field < 0) return;
    const CountedField& f = kCountedFields[static_cast<size_t>(field)];
    if (++counts_[static_cast<size_t>(field)] > f.limit) {
      throw UsageError(origin_ + ": more than " + std::to_string(f.limit) + " " + f.what +
                       " in the graph: the limit (docs/limits.md)");
    }
  }

  // A length that fits in what is left of the enclosing message, or of the file.
  bool read_length(uint32_t& length) {
    if (!in_.ReadVarint32(&length)) return false;
    const int64_t left = in_.BytesUntilLimit() >= 0 ? in_.BytesUntilLimit() : file_size_ - in_.CurrentPosition();
    return length <= left;
  }

  // A length-delimited message field: its copy, made by `body`, under a new length.
  template <typename Body>
  bool nested(uint32_t tag, CodedOutputStream& out, Body body) {
    uint32_t length = 0;
    if (!read_length(length)) return false;
    const CodedInputStream::Limit limit = in_.PushLimit(static_cast<int>(length));
    std::string copy;
    bool ok = false;
    {
      StringOutputStream stream(&copy);
      CodedOutputStream copy_out(&stream);
      ok = body(copy_out) && in_.ConsumedEntireMessage() && in_.BytesUntilLimit() == 0;
    }  // copy_out's destructor trims `copy` to what was written
    in_.PopLimit(limit);
    if (!ok) return false;
    out.WriteTag(tag);
    out.WriteVarint32(static_cast<uint32_t>(copy.size()));
    out.WriteString(copy);
    return true;
  }

  CodedInputStream& in_;
  int64_t file_size_;
  const std::string& origin_;
  std::array<int64_t, kCountedFields.size()> counts_{};
  std::vector<std::optional<DataSpan>> spans_;
};

}  // namespace

std::unique_ptr<google::protobuf::io::ZeroCopyInputStream> BytesSource::stream() const {
  return std::make_unique<google::protobuf::io::ArrayInputStream>(bytes_.data(), static_cast<int>(bytes_.size()));
}

void BytesSource::read(int64_t offset, int64_t count, char* out) const {
  require(offset >= 0 && count >= 0 && offset + count <= size(),
          "ONNX bytes: no bytes " + std::to_string(offset) + " to " + std::to_string(offset + count));
  std::memcpy(out, bytes_.data() + offset, static_cast<size_t>(count));
}

int64_t FileSource::size() const { return file_.size(); }

std::unique_ptr<google::protobuf::io::ZeroCopyInputStream> FileSource::stream() const {
  require(::lseek(file_.fd(), 0, SEEK_SET) == 0, file_.label() + " cannot be read: " + std::strerror(errno));
  return std::make_unique<google::protobuf::io::FileInputStream>(file_.fd(), kFileBlockBytes);
}

void FileSource::read(int64_t offset, int64_t count, char* out) const {
  int64_t done = 0;
  while (done < count) {
    const ssize_t n = ::pread(file_.fd(), out + done, static_cast<size_t>(count - done), offset + done);
    if (n < 0 && errno == EINTR) continue;
    require(n >= 0, file_.label() + " cannot be read: " + std::strerror(errno));
    require(n > 0, file_.label() + " changed while it was read: it ends before byte " + std::to_string(offset + count));
    done += n;
  }
}

ParsedOnnx parse_onnx(const OnnxSource& source, const std::string& origin) {
  const std::string refusal = origin + ": not an ONNX model (not a protobuf ModelProto, or truncated)";
  require(source.size() < std::numeric_limits<int>::max(), refusal);
  std::string lean;
  std::vector<std::optional<DataSpan>> spans;
  {
    const std::unique_ptr<google::protobuf::io::ZeroCopyInputStream> stream = source.stream();
    CodedInputStream in(stream.get());
    StringOutputStream lean_stream(&lean);
    CodedOutputStream out(&lean_stream);
    LeanCopy copy(in, source.size(), origin);
    require(copy.model(out), refusal);
    spans = std::move(copy.spans());
  }
  ParsedOnnx parsed{std::make_unique<onnx::ModelProto>(), {}};
  require(parsed.proto->ParseFromString(lean), refusal);
  onnx::GraphProto& graph = *parsed.proto->mutable_graph();
  require(static_cast<size_t>(graph.initializer_size()) == spans.size(), refusal);
  for (int i = 0; i < graph.initializer_size(); ++i) {
    const std::optional<DataSpan>& span = spans[static_cast<size_t>(i)];
    if (!span) continue;
    onnx::TensorProto& t = *graph.mutable_initializer(i);
    if (t.data_type() == onnx::TensorProto::FLOAT) {
      parsed.elided[&t] = *span;
      continue;
    }
    // Other types keep their bytes: operators may read integer constants (Reshape's shape).
    std::string raw(static_cast<size_t>(span->size), '\0');
    source.read(span->offset, span->size, raw.data());
    t.set_raw_data(std::move(raw));
  }
  return parsed;
}

}  // namespace layerplan::onnx_import
