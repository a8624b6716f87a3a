#pragma once
// Private to model/: reading an ONNX file into an ImportState (model/onnx_ops.h), shared by
// model_from_onnx() and onnx_initial_weights() (model/onnx_model.h).
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "model/onnx_ops.h"
#include "model/onnx_parse.h"

namespace layerplan::onnx_import {

// The parsed file and what was built from it; the state points into the proto. The
// float32 initializers in `elided` keep their values in the source (model/onnx_parse.h):
// their Param::data holds a placeholder byte as raw_data, not their values.
struct ImportedModel {
  std::unique_ptr<onnx::ModelProto> proto;
  std::unordered_map<const onnx::TensorProto*, DataSpan> elided;
  std::unique_ptr<ImportState> state;
};

// `batch` images, or kFileBatch: the file's own batch (1 when symbolic).
inline constexpr int64_t kFileBatch = 0;
ImportedModel import_onnx(const OnnxSource& source, int64_t batch, const std::string& origin, const std::string& name);

}  // namespace layerplan::onnx_import
