// safetensors: what we write, we and the reference implementation (PyPI's safetensors,
// run from the venv scripts/setup makes) read back exactly, and what the reference
// writes, we read; every kind of corrupt file is a UsageError naming the file and the
// fault; a failed write leaves nothing behind and the old file intact.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "runtime/safetensors.h"
#include "tests/scratch_dir.h"

namespace layerplan::safetensors {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kPython = std::string(LAYERPLAN_PYREF) + "/bin/python3";
const std::string kReferenceScript = std::string(LAYERPLAN_SOURCE_DIR) + "/tests/safetensors_reference.py";

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// A file made of a given header text and `data_bytes` bytes of data.
std::string file_with_header(const std::string& header, size_t data_bytes) {
  std::string out(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header + std::string(data_bytes, '\x01');
}

Tensor raw(DType dtype, std::vector<int64_t> shape, std::vector<uint8_t> bytes) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  for (uint8_t b : bytes) t.data.push_back(static_cast<std::byte>(b));
  return t;
}

Contents sample() {
  Contents c;
  std::vector<float> w(2 * 3 * 2 * 2);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i) * 0.25f - 1.0f;
  c.tensors["features.0.weight"] = Tensor::from_floats({2, 3, 2, 2}, w);
  const std::vector<int64_t> labels = {3, -7, int64_t{1} << 40};
  c.tensors["labels"] = Tensor::from_int64s({3}, labels);
  c.tensors["mask"] = raw(DType::kBool, {3}, {1, 0, 1});
  c.tensors["bytes"] = raw(DType::kU8, {2}, {0, 255});
  c.tensors["half"] = raw(DType::kF16, {2}, {0x00, 0x3e, 0x00, 0xc0});  // 1.5, -2
  c.tensors["empty"] = Tensor::from_floats({0, 4}, {});
  c.metadata["format"] = "pt";
  c.metadata["step"] = "12";
  return c;
}

TEST(Safetensors, WhatWeWriteWeReadBackExactly) {
  ScratchDir dir;
  const Contents in = sample();
  write_file(dir.file("a.safetensors"), in);
  const Contents out = read_file(dir.file("a.safetensors"));
  EXPECT_EQ(out.metadata, in.metadata);
  ASSERT_EQ(out.tensors.size(), in.tensors.size());
  for (const auto& [name, t] : in.tensors) {
    const Tensor& u = out.tensors.at(name);
    EXPECT_EQ(u.dtype, t.dtype) << name;
    EXPECT_EQ(u.shape, t.shape) << name;
    EXPECT_EQ(u.data, t.data) << name;
  }
  // The header is padded so that the data starts 8-byte aligned.
  uint64_t header = 0;
  std::memcpy(&header, read_bytes(dir.file("a.safetensors")).data(), 8);
  EXPECT_EQ(header % 8, 0u);
}

TEST(Safetensors, ReadRowsReadsOnlyThatSliceOfTheFirstDimension) {
  ScratchDir dir;
  std::vector<float> v(5 * 2);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  Contents c;
  c.tensors["images"] = Tensor::from_floats({5, 2}, v);
  write_file(dir.file("d.safetensors"), c);
  const Reader reader(dir.file("d.safetensors"));
  const Tensor rows = reader.read_rows("images", 1, 3);
  EXPECT_EQ(rows.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(rows.floats(), (std::vector<float>{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(reader.read_rows("images", 5, 0).floats(), std::vector<float>{});
  EXPECT_THROW(reader.read_rows("images", 4, 2), UsageError);
  EXPECT_THROW(reader.read_rows("images", -1, 1), UsageError);
  EXPECT_THROW(reader.info("labels"), UsageError);
}

TEST(Safetensors, AFailedWriteLeavesNothingAndKeepsTheOldFile) {
  ScratchDir dir;
  const std::string path = dir.file("ckpt.safetensors");
  write_file(path, sample());
  const std::string before = read_bytes(path);
  Contents bad = sample();
  bad.tensors["broken"] = Tensor::from_floats({2}, std::vector<float>{1, 2});
  bad.tensors["broken"].shape = {3};  // 8 bytes for 3 floats
  EXPECT_THROW(write_file(path, bad), std::invalid_argument);
  EXPECT_EQ(read_bytes(path), before);
  try {
    write_file(dir.file("no/such/dir/x.safetensors"), sample());
    FAIL() << "wrote into a missing directory";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no/such/dir/x.safetensors"));
  }
  // Only the one file: no temporary left behind.
  int files = 0;
  for ([[maybe_unused]] const auto& f : fs::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1);
}

struct CorruptCase {
  const char* what;
  std::string bytes;
  const char* expected;
};

TEST(Safetensors, EveryKindOfCorruptFileIsAUsageErrorNamingTheFileAndTheFault) {
  const std::string good = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  const std::vector<CorruptCase> cases = {
      {"empty", "", "fewer than the 8-byte header length"},
      {"short length", std::string("\x05\x00\x00", 3), "fewer than the 8-byte header length"},
      {"header past the end", file_with_header(good, 8).substr(0, 20), "the header length says"},
      {"huge header length", std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8) + "{}", "100 MB limit"},
      {"not JSON", file_with_header("{\"a\": [1, 2", 0), "not valid JSON"},
      {"not an object", file_with_header("[1, 2]", 0), "not a JSON object"},
      {"unknown dtype", file_with_header(R"({"a":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}})", 8),
       "unknown dtype 'F33'"},
      {"negative shape", file_with_header(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8),
       "not a non-negative integer"},
      {"size mismatch", file_with_header(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8),
       "has 8 bytes but shape [3] needs 3 elements of 4 bytes"},
      {"offsets out of range", file_with_header(good, 4), "beyond the 4 bytes of data"},
      {"offsets reversed", file_with_header(R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[4,0]}})", 4),
       "end before they begin"},
      {"overlap",
       file_with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                        R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                        8),
       "overlaps tensor"},
      {"gap",
       file_with_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                        R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                        12),
       "data bytes [4, 8) belong to no tensor"},
      {"trailing data", file_with_header(good, 12), "after the last tensor"},
      {"missing offsets", file_with_header(R"({"a":{"dtype":"F32","shape":[2]}})", 8), "no data_offsets"},
      {"unknown field", file_with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})", 8),
       "unknown field 'x'"},
      {"metadata not strings", file_with_header(R"({"__metadata__":{"k":1}})", 0), "is not a string"},
  };
  ScratchDir dir;
  for (const CorruptCase& c : cases) {
    const std::string path = dir.file("bad.safetensors");
    write_bytes(path, c.bytes);
    try {
      Reader reader(path);
      ADD_FAILURE() << c.what << ": accepted";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr("'" + path + "'")) << c.what;
      EXPECT_THAT(e.what(), HasSubstr(c.expected)) << c.what;
    }
  }
  EXPECT_THROW(Reader(dir.file("missing.safetensors")), UsageError);
}

// Runs the reference script; returns its stdout, failing the test when it fails.
std::string run_reference(const std::string& mode, const std::string& path) {
  const std::string out = path + ".out";
  const std::string command =
      "'" + kPython + "' '" + kReferenceScript + "' " + mode + " '" + path + "' > '" + out + "' 2>&1";
  const int status = std::system(command.c_str());
  const std::string text = read_bytes(out);
  fs::remove(out);
  EXPECT_EQ(status, 0) << command << "\n" << text;
  return text;
}

TEST(SafetensorsReference, TheReferenceIsInstalled) {
  ASSERT_TRUE(fs::exists(kPython)) << kPython << " is missing: scripts/setup installs the reference safetensors there";
}

TEST(SafetensorsReference, TheReferenceReadsWhatWeWrite) {
  ScratchDir dir;
  const std::string path = dir.file("ours.safetensors");
  write_file(path, sample());
  const nlohmann::json got = nlohmann::json::parse(run_reference("read", path));
  EXPECT_EQ(got["metadata"], (nlohmann::json{{"format", "pt"}, {"step", "12"}}));
  const auto& t = got["tensors"];
  ASSERT_EQ(t.size(), 6u) << got.dump();
  EXPECT_EQ(t["features.0.weight"]["dtype"], "F32");
  EXPECT_EQ(t["features.0.weight"]["shape"], (nlohmann::json{2, 3, 2, 2}));
  for (size_t i = 0; i < 24; ++i)
    EXPECT_EQ(t["features.0.weight"]["values"][i].get<double>(), static_cast<double>(i) * 0.25 - 1.0);
  EXPECT_EQ(t["labels"]["values"], (nlohmann::json{3, -7, int64_t{1} << 40}));
  EXPECT_EQ(t["mask"]["values"], (nlohmann::json{true, false, true}));
  EXPECT_EQ(t["bytes"]["values"], (nlohmann::json{0, 255}));
  EXPECT_EQ(t["half"]["values"], (nlohmann::json{1.5, -2.0}));
  EXPECT_EQ(t["empty"]["shape"], (nlohmann::json{0, 4}));
}

TEST(SafetensorsReference, WeReadWhatTheReferenceWrites) {
  ScratchDir dir;
  const std::string path = dir.file("theirs.safetensors");
  run_reference("write", path);
  const Reader reader(path);
  EXPECT_EQ(reader.metadata().at("written_by"), "safetensors-reference");
  const Tensor w = reader.read("conv.weight");
  EXPECT_EQ(w.shape, (std::vector<int64_t>{2, 3, 2, 2}));
  const std::vector<float> values = w.floats();
  for (size_t i = 0; i < 24; ++i) EXPECT_EQ(values[i], static_cast<float>(i) * 0.5f - 3.0f);
  EXPECT_EQ(reader.read("labels").int64s(), (std::vector<int64_t>{-1, int64_t{1} << 40, 7, 0}));
  const Tensor half = reader.read("half");
  EXPECT_EQ(half.dtype, DType::kF16);
  const std::vector<uint8_t> half_bits = {0x00, 0x3e, 0x00, 0xc0, 0xff, 0x7b};  // 1.5, -2, 65504
  ASSERT_EQ(half.data.size(), half_bits.size());
  for (size_t i = 0; i < half_bits.size(); ++i) EXPECT_EQ(static_cast<uint8_t>(half.data[i]), half_bits[i]);
  EXPECT_EQ(reader.read("mask").dtype, DType::kBool);
  EXPECT_EQ(reader.read("bytes").data.size(), 3u);
  EXPECT_EQ(reader.info("empty").shape, (std::vector<int64_t>{0, 3}));
}

}  // namespace
}  // namespace layerplan::safetensors
