#include "runtime/training/tensorboard_events.h"

#include <unistd.h>

#include <array>
#include <bit>
#include <chrono>
#include <cstdio>

#include "common/crc32c.h"
#include "common/error.h"

namespace layerplan {
namespace {

// Protobuf wire types (https://protobuf.dev/programming-guides/encoding/).
constexpr uint32_t kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;

// The field numbers of tensorflow/core/util/event.proto and framework/summary.proto.
constexpr uint32_t kEventWallTime = 1, kEventStep = 2, kEventFileVersion = 3, kEventSummary = 5;
constexpr uint32_t kSummaryValue = 1;
constexpr uint32_t kValueTag = 1, kValueSimpleValue = 2;

void put_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

void put_little_endian(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFF);
}

void put_key(std::string& out, uint32_t field, uint32_t wire_type) { put_varint(out, (field << 3) | wire_type); }

void put_bytes(std::string& out, uint32_t field, std::string_view bytes) {
  put_key(out, field, kLengthDelimited);
  put_varint(out, bytes.size());
  out += bytes;
}

void put_double(std::string& out, uint32_t field, double value) {
  put_key(out, field, kFixed64);
  put_little_endian(out, std::bit_cast<uint64_t>(value), 8);
}

void put_float(std::string& out, uint32_t field, float value) {
  put_key(out, field, kFixed32);
  put_little_endian(out, std::bit_cast<uint32_t>(value), 4);
}

// The wall time and step every event starts with.
std::string event_head(double wall_time, int64_t step) {
  std::string event;
  put_double(event, kEventWallTime, wall_time);
  if (step != 0) {  // proto3 leaves a field at its default out
    put_key(event, kEventStep, kVarint);
    put_varint(event, static_cast<uint64_t>(step));
  }
  return event;
}

double seconds_since_epoch() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0 || name[0] == '\0') return "localhost";
  return name.data();
}

}  // namespace

uint32_t masked_crc32c(std::string_view bytes) {
  const uint32_t crc = crc32c(bytes);
  return ((crc >> 15) | (crc << 17)) + 0xA282EAD8U;
}

std::string tfrecord(std::string_view data) {
  std::string length;
  put_little_endian(length, data.size(), 8);
  std::string record = length;
  put_little_endian(record, masked_crc32c(length), 4);
  record += data;
  put_little_endian(record, masked_crc32c(data), 4);
  return record;
}

std::string file_version_event(double wall_time) {
  std::string event = event_head(wall_time, 0);
  put_bytes(event, kEventFileVersion, "brain.Event:2");
  return event;
}

std::string scalars_event(double wall_time, int64_t step, const std::vector<ScalarValue>& values) {
  std::string summary;
  for (const ScalarValue& v : values) {
    std::string value;
    put_bytes(value, kValueTag, v.tag);
    put_float(value, kValueSimpleValue, v.value);
    put_bytes(summary, kSummaryValue, value);
  }
  std::string event = event_head(wall_time, step);
  put_bytes(event, kEventSummary, summary);
  return event;
}

std::string event_file_name(int64_t unix_seconds, const std::string& host, long pid) {
  std::array<char, 32> seconds{};
  std::snprintf(seconds.data(), seconds.size(), "%010lld", static_cast<long long>(unix_seconds));
  return "events.out.tfevents." + std::string(seconds.data()) + "." + host + "." + std::to_string(pid);
}

TensorBoardEventFile::TensorBoardEventFile(const std::string& dir, const std::string& what) : what_(what) {
  const double now = seconds_since_epoch();
  const std::string name = event_file_name(static_cast<int64_t>(now), host_name(), static_cast<long>(::getpid()));
  file_ = std::make_unique<NewFile>(dir + "/" + name, what);
  file_->write(tfrecord(file_version_event(now)));
}

void TensorBoardEventFile::publish() {
  require(file_->publish_if_absent(), what_ + " '" + file_->path() + "': exists already; expected a new event file");
}

// One write per record, so that TensorBoard reading the file meanwhile sees whole records.
void TensorBoardEventFile::write_scalars(int64_t step, const std::vector<ScalarValue>& values) {
  file_->write(tfrecord(scalars_event(seconds_since_epoch(), step, values)));
}

}  // namespace layerplan
