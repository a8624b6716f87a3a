// Fuzz target: an ONNX file's bytes (model/onnx_model.h, docs/model-format.md "ONNX
// models"): the model and its initial weights, read with libonnx (protobuf, checker, shape
// inference) and layerplan's operator table. Bad input must be a UsageError.
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/onnx_model.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  layerplan::fuzz::expect_clean_errors([&] { layerplan::model_from_onnx(bytes, 4, "fuzz.onnx", "fuzz.onnx"); });
  layerplan::fuzz::expect_clean_errors([&] { layerplan::onnx_initial_weights(bytes, "fuzz.onnx"); });
  return 0;
}
