#pragma once
// TensorBoard's event files, written without TensorFlow, for `layerplan train --tensorboard`
// (training_logs.h). A file is a sequence of TFRecords, each
//   uint64 length, uint32 masked CRC-32C of the length's 8 bytes, the data, uint32 masked
//   CRC-32C of the data       (all little-endian)
// whose data is a serialized tensorflow.Event: the first holds file_version "brain.Event:2",
// each later one a wall time, a step and a Summary of scalar values (tag, simple_value),
// which TensorBoard's scalar dashboard plots.
//
// The protos are encoded by hand in the protobuf wire format. libprotobuf (already linked for
// ONNX) would need TensorFlow's event.proto and summary.proto compiled by protoc, which the
// build does not otherwise have, for five fields of three messages that never change.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/safe_write.h"

namespace layerplan {

// The CRC TFRecords store: the CRC-32C rotated right by 15 bits plus 0xA282EAD8, so that a
// CRC computed over data that holds CRCs stays well distributed.
uint32_t masked_crc32c(std::string_view bytes);

// One TFRecord holding `data`.
std::string tfrecord(std::string_view data);

// The serialized Event that opens every event file.
std::string file_version_event(double wall_time);

struct ScalarValue {
  std::string tag;  // "train/loss": TensorBoard groups the charts by what comes before the '/'
  float value = 0;  // simple_value is a float in the proto
};

// The serialized Event of `values` at `step`, one Summary.Value each.
std::string scalars_event(double wall_time, int64_t step, const std::vector<ScalarValue>& values);

// "events.out.tfevents.<seconds, 10 digits>.<host>.<pid>": TensorBoard reads every file of a
// folder whose name holds "tfevents", in name order. The process id, which TensorBoard's own
// Python writer appends too, keeps two runs started in the same second apart.
std::string event_file_name(int64_t unix_seconds, const std::string& host, long pid);

// A new event file in the folder `dir` (which must exist), opened with its file_version
// record and put in place by publish(), never replacing a file; then a record per write.
// Errors are UsageErrors naming `what` (the flag) and the path.
class TensorBoardEventFile {
 public:
  TensorBoardEventFile(const std::string& dir, const std::string& what);
  void publish();
  void write_scalars(int64_t step, const std::vector<ScalarValue>& values);
  const std::string& path() const { return file_->path(); }

 private:
  std::string what_;
  std::unique_ptr<NewFile> file_;
};

}  // namespace layerplan
