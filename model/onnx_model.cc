#include "model/onnx_model.h"

#include <cstring>

#include "common/error.h"
#include "common/input_file.h"
#include "common/limits.h"
#include "common/text.h"
#include "model/onnx_import.h"

namespace layerplan {

namespace {

// The float32 values of `t` (raw little-endian bytes, in the proto or left in the source,
// or float_data), which must hold exactly the elements its dims say.
std::vector<float> float_values(const onnx::TensorProto& t, const onnx_import::ImportedModel& model,
                                const onnx_import::OnnxSource& source, const std::string& origin) {
  const std::string label = origin + ": initializer '" + clipped(t.name()) + "'";
  require(t.data_type() == onnx::TensorProto::FLOAT,
          label + " is not float32 (data type " + std::to_string(t.data_type()) + "): export in float32");
  int64_t elements = 1;
  for (const int64_t d : t.dims()) {
    require(d >= 0 && (d == 0 || elements <= kMaxOnnxFileBytes / d), label + " has an impossible shape");
    elements *= d;
  }
  std::vector<float> values;
  const auto elided = model.elided.find(&t);
  if (elided != model.elided.end()) {
    const onnx_import::DataSpan& span = elided->second;
    require(span.size == elements * int64_t{sizeof(float)},
            label + " holds " + std::to_string(span.size) + " bytes, its shape needs " + std::to_string(elements * 4));
    values.resize(static_cast<size_t>(elements));
    source.read(span.offset, span.size, reinterpret_cast<char*>(values.data()));  // little-endian, as below
  } else if (t.has_raw_data()) {
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

namespace {

// The model and its initial weights, from a file open or in memory.
ModelGraph graph_from(const onnx_import::OnnxSource& input, int64_t batch, const std::string& origin,
                      const std::string& name) {
  require(batch >= 1, "batch " + std::to_string(batch) + ": expected 1 to " + std::to_string(kMaxBatch) + " images");
  return std::move(onnx_import::import_onnx(input, batch, origin, name).state->graph);
}

std::map<std::string, OnnxTensor> weights_from(const onnx_import::OnnxSource& input, const std::string& origin) {
  const onnx_import::ImportedModel model = onnx_import::import_onnx(input, onnx_import::kFileBatch, origin, "weights");
  std::map<std::string, OnnxTensor> out;
  for (const auto& [name, source] : model.state->parameter_sources) {
    const onnx_import::Param& p = model.state->params.at(source);
    require(p.data != nullptr, origin + ": '" + clipped(source) +
                                   "' is a graph input without values: the file has no initial weights for it");
    OnnxTensor t{p.dims, float_values(*p.data, model, input, origin)};
    if (model.state->transposed_parameters.count(name)) t = transposed(t);
    out[name] = std::move(t);
  }
  return out;
}

}  // namespace

ModelGraph model_from_onnx(const std::string& bytes, int64_t batch, const std::string& origin,
                           const std::string& name) {
  return graph_from(onnx_import::BytesSource(bytes), batch, origin, name);
}

ModelGraph model_from_onnx(const InputFile& file, int64_t batch, const std::string& origin, const std::string& name) {
  return graph_from(onnx_import::FileSource(file), batch, origin, name);
}

std::map<std::string, OnnxTensor> onnx_initial_weights(const std::string& bytes, const std::string& origin) {
  return weights_from(onnx_import::BytesSource(bytes), origin);
}

std::map<std::string, OnnxTensor> onnx_initial_weights(const InputFile& file, const std::string& origin) {
  return weights_from(onnx_import::FileSource(file), origin);
}

}  // namespace layerplan
