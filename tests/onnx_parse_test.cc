// Reading an ONNX file with its weights' bytes left in the file (model/onnx_parse.h): the
// graph and the initial weights are those of the whole file, whether it is read open or
// from memory; a file cut anywhere, inside skipped weights too, is refused; weights whose
// byte count disagrees with their shape are refused when they are read.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/input_file.h"
#include "model/model_file.h"
#include "model/onnx_model.h"
#include "model/onnx_parse.h"
#include "tests/scratch_dir.h"

namespace layerplan {
namespace {

using ::testing::HasSubstr;

std::string onnx_path(const std::string& name) {
  return std::string(LAYERPLAN_SOURCE_DIR) + "/tests/onnx_data/" + name;
}

std::string onnx_bytes(const std::string& name) { return read_input_file(onnx_path(name), name, kMaxOnnxFileBytes); }

// The test file with its float32 initializers' values in raw_data, as torch.onnx.export
// writes them (make_onnx_files.py writes float_data, which is parsed, never skipped).
std::string with_raw_data(const std::string& name) {
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(onnx_bytes(name))) << name;
  for (onnx::TensorProto& t : *model.mutable_graph()->mutable_initializer()) {
    if (t.data_type() != onnx::TensorProto::FLOAT || t.float_data_size() == 0) continue;
    std::string raw(static_cast<size_t>(t.float_data_size()) * sizeof(float), '\0');
    std::memcpy(raw.data(), t.float_data().data(), raw.size());  // little-endian, as ONNX stores it
    t.clear_float_data();
    t.set_raw_data(std::move(raw));
  }
  return model.SerializeAsString();
}

// The pattern make_onnx_files.py fills every initializer with.
float weight_value(int64_t i) { return static_cast<float>((i * 7) % 13 - 6) / 16.0F; }

// Where the raw_data of an initializer with more values than are kept in the proto starts:
// the first run of the pattern longer than onnx_import::kElidedRawDataBytes.
size_t skipped_weights_offset(const std::string& bytes) {
  const size_t count = onnx_import::kElidedRawDataBytes / sizeof(float) + 1;
  std::string pattern(count * sizeof(float), '\0');
  for (size_t i = 0; i < count; ++i) {
    const float v = weight_value(static_cast<int64_t>(i));
    std::memcpy(pattern.data() + i * sizeof(float), &v, sizeof v);
  }
  return bytes.find(pattern);
}

std::string write_file(const ScratchDir& dir, const std::string& name, const std::string& bytes) {
  std::string path = dir.file(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

ModelGraph graph_of_file(const std::string& path, int64_t batch) {
  const InputFile file(path, "ONNX file", kMaxOnnxFileBytes);
  return model_from_onnx(file, batch, path, "m.onnx");
}

std::map<std::string, OnnxTensor> weights_of_file(const std::string& path) {
  const InputFile file(path, "ONNX file", kMaxOnnxFileBytes);
  return onnx_initial_weights(file, path);
}

TEST(OnnxParse, SomeWeightsAreLeftInTheFile) {
  // Else the tests below would not read skipped bytes: conv1.weight has 108 values.
  const std::string bytes = with_raw_data("tiny.onnx");
  const onnx_import::BytesSource source(bytes);
  EXPECT_EQ(onnx_import::parse_onnx(source, "tiny.onnx").elided.size(), 3U);  // conv1, branch_b, block.conv
  EXPECT_NE(skipped_weights_offset(bytes), std::string::npos);
}

// The graph and the weights of a file read with its weights skipped (open or in memory)
// are those of the same file with every value parsed (float_data).
TEST(OnnxParse, SkippedWeightsReadAsParsedOnes) {
  ScratchDir dir;
  for (const std::string name : {"tiny.onnx", "tiny_unsorted.onnx", "tiny_folded.onnx", "tiny_pad.onnx"}) {
    const std::string bytes = with_raw_data(name);
    const std::string path = write_file(dir, name, bytes);
    const std::string parsed = model_to_json(model_from_onnx(onnx_bytes(name), 4, name, "m.onnx"));
    EXPECT_EQ(model_to_json(graph_of_file(path, 4)), parsed) << name;
    EXPECT_EQ(model_to_json(model_from_onnx(bytes, 4, name, "m.onnx")), parsed) << name;
    const auto from_file = weights_of_file(path);
    const auto from_memory = onnx_initial_weights(bytes, name);
    const auto from_bytes = onnx_initial_weights(onnx_bytes(name), name);
    ASSERT_EQ(from_file.size(), from_bytes.size()) << name;
    ASSERT_EQ(from_memory.size(), from_bytes.size()) << name;
    for (const auto& [tensor, values] : from_bytes) {
      ASSERT_TRUE(from_file.count(tensor) && from_memory.count(tensor)) << tensor;
      EXPECT_EQ(from_file.at(tensor).shape, values.shape) << tensor;
      EXPECT_EQ(from_file.at(tensor).values, values.values) << tensor;
      EXPECT_EQ(from_memory.at(tensor).values, values.values) << tensor;
    }
  }
  const auto weights = weights_of_file(write_file(dir, "raw.onnx", with_raw_data("tiny.onnx")));
  const OnnxTensor& conv = weights.at("conv1.weight");  // its bytes were skipped, then read
  ASSERT_EQ(conv.values.size(), 108U);
  for (size_t i = 0; i < conv.values.size(); ++i) EXPECT_EQ(conv.values[i], weight_value(static_cast<int64_t>(i)));
}

TEST(OnnxParse, AFileCutInsideSkippedWeightsIsRefused) {
  ScratchDir dir;
  const std::string tiny = with_raw_data("tiny.onnx");
  const size_t weights = skipped_weights_offset(tiny);
  ASSERT_NE(weights, std::string::npos);
  for (const size_t keep : {weights - 1, weights, weights + 4, weights + 300, tiny.size() - 1}) {
    const std::string cut = tiny.substr(0, keep);
    const std::string path = write_file(dir, "cut.onnx", cut);
    const auto refused = ::testing::ThrowsMessage<UsageError>(HasSubstr(": not an ONNX model"));
    EXPECT_THAT([&] { graph_of_file(path, 4); }, refused) << keep;
    EXPECT_THAT([&] { weights_of_file(path); }, refused) << keep;
    EXPECT_THAT([&] { model_from_onnx(cut, 4, "cut.onnx", "cut.onnx"); }, refused) << keep;
    EXPECT_THAT([&] { onnx_initial_weights(cut, "cut.onnx"); }, refused) << keep;
  }
}

TEST(OnnxParse, SkippedWeightsWhoseSizeDisagreesAreRefusedWhenRead) {
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(with_raw_data("tiny.onnx")));
  bool changed = false;
  for (onnx::TensorProto& t : *model.mutable_graph()->mutable_initializer()) {
    if (t.name() != "conv1.weight") continue;
    t.mutable_raw_data()->resize(t.raw_data().size() - sizeof(float));
    changed = true;
  }
  ASSERT_TRUE(changed);
  ScratchDir dir;
  const std::string path = write_file(dir, "short.onnx", model.SerializeAsString());
  EXPECT_EQ(graph_of_file(path, 4).size(), model_from_onnx(onnx_bytes("tiny.onnx"), 4, "t", "t").size());
  EXPECT_THAT([&] { weights_of_file(path); }, ::testing::ThrowsMessage<UsageError>(HasSubstr(
                                                  "initializer 'conv1.weight' holds 428 bytes, its shape needs 432")));
}

// Only float32 weights stay in the file: other types keep their bytes in the proto, where
// operators read integer constants and the checker judges them.
TEST(OnnxParse, LongInitializersOfOtherTypesKeepTheirBytes) {
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(with_raw_data("tiny.onnx")));
  onnx::TensorProto& extra = *model.mutable_graph()->add_initializer();
  extra.set_name("unused_int64");
  extra.set_data_type(onnx::TensorProto::INT64);
  extra.add_dims(100);
  extra.set_raw_data(std::string(100 * sizeof(int64_t), '\x01'));
  const std::string bytes = model.SerializeAsString();
  const onnx_import::BytesSource source(bytes);
  const onnx_import::ParsedOnnx parsed = onnx_import::parse_onnx(source, "extra.onnx");
  const onnx::GraphProto& graph = parsed.proto->graph();
  const onnx::TensorProto& kept = graph.initializer(graph.initializer_size() - 1);
  EXPECT_EQ(kept.raw_data(), extra.raw_data());
  EXPECT_FALSE(parsed.elided.count(&kept));
  size_t elided_bytes = 0;
  for (const auto& [tensor, span] : parsed.elided) {
    EXPECT_EQ(tensor->data_type(), onnx::TensorProto::FLOAT);
    EXPECT_EQ(tensor->raw_data().size(), 1U);  // the placeholder
    EXPECT_GT(span.size, onnx_import::kElidedRawDataBytes);
    elided_bytes += static_cast<size_t>(span.size);
  }
  EXPECT_GT(elided_bytes, 0U);
}

}  // namespace
}  // namespace layerplan
