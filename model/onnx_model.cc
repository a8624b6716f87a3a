#include "model/onnx_model.h"

#include <cstring>

#include "common/error.h"
#include "common/limits.h"
#include "common/text.h"
#include "model/onnx_import.h"

namespace layerplan {

namespace {

// The float32 values of `t` (raw little-endian bytes or float_data), which must hold
// exactly the elements its dims say.
std::vector<float> float_values(const onnx::TensorProto& t, const std::string& origin) {
  const std::string label = origin + ": initializer '" + clipped(t.name()) + "'";
  require(t.data_type() == onnx::TensorProto::FLOAT,
          label + " is not float32 (data type " + std::to_string(t.data_type()) + "): export in float32");
  int64_t elements = 1;
  for (const int64_t d : t.dims()) {
    require(d >= 0 && (d == 0 || elements <= kMaxOnnxFileBytes / d), label + " has an impossible shape");
    elements *= d;
  }
  std::vector<float> values;
  if (t.has_raw_data()) {
    require(t.raw_data().size() == static_cast<size_t>(elements) * sizeof(float),
            label + " holds " + std::to_string(t.raw_data().size()) + " bytes, its shape needs " +
                std::to_string(elements * 4));
    values.resize(static_cast<size_t>(elements));
    std::memcpy(values.data(), t.raw_data().data(), t.raw_data().size());  // x86-64 and ONNX: little-endian
  } else {
    require(t.float_data_size() == elements, label + " holds " + std::to_string(t.float_data_size()) +
                                                 " values, its shape needs " + std::to_string(elements));
    values.assign(t.float_data().begin(), t.float_data().end());
  }
  return values;
}

// A 2-D tensor transposed: a weight the file holds as [in, out], in PyTorch's [out, in].
OnnxTensor transposed(const OnnxTensor& t) {
  const auto rows = static_cast<size_t>(t.shape.at(0)), cols = static_cast<size_t>(t.shape.at(1));
  OnnxTensor out{{t.shape[1], t.shape[0]}, std::vector<float>(t.values.size())};
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) out.values[c * rows + r] = t.values[r * cols + c];
  return out;
}

}  // namespace

bool is_onnx_path(const std::string& path) { return path.size() > 5 && path.ends_with(".onnx"); }

ModelGraph model_from_onnx(const std::string& bytes, int64_t batch, const std::string& origin,
                           const std::string& name) {
  require(batch >= 1, "batch " + std::to_string(batch) + ": expected 1 to " + std::to_string(kMaxBatch) + " images");
  return std::move(onnx_import::import_onnx(bytes, batch, origin, name).state->graph);
}

std::map<std::string, OnnxTensor> onnx_initial_weights(const std::string& bytes, const std::string& origin) {
  const onnx_import::ImportedModel model = onnx_import::import_onnx(bytes, onnx_import::kFileBatch, origin, "weights");
  std::map<std::string, OnnxTensor> out;
  for (const auto& [name, source] : model.state->parameter_sources) {
    const onnx_import::Param& p = model.state->params.at(source);
    require(p.data != nullptr, origin + ": '" + clipped(source) +
                                   "' is a graph input without values: the file has no initial weights for it");
    OnnxTensor t{p.dims, float_values(*p.data, origin)};
    if (model.state->transposed_parameters.count(name)) t = transposed(t);
    out[name] = std::move(t);
  }
  return out;
}

}  // namespace layerplan
