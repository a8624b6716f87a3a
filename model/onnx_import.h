#pragma once
// Private to model/: reading an ONNX file into an ImportState (model/onnx_ops.h), shared by
// model_from_onnx() and onnx_initial_weights() (model/onnx_model.h).
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <memory>
#include <string>

#include "model/onnx_ops.h"

namespace layerplan::onnx_import {

// The parsed file and what was built from it; the state points into the proto.
struct ImportedModel {
  std::unique_ptr<onnx::ModelProto> proto;
  std::unique_ptr<ImportState> state;
};

// `batch` images, or kFileBatch: the file's own batch (1 when symbolic).
inline constexpr int64_t kFileBatch = 0;
ImportedModel import_onnx(const std::string& bytes, int64_t batch, const std::string& origin, const std::string& name);

}  // namespace layerplan::onnx_import
