#pragma once
// Models exported to ONNX (torch.onnx.export), read with the ONNX library (libonnx, 1.12):
// the protobuf model, its checker and its shape inference. docs/model-format.md, "ONNX
// models", says which operators map to which layer kinds and what is refused. Each function
// takes the file open (common/input_file.h), or its bytes. Planning reads only the graph:
// the float32 weights' bytes stay in the file (model/onnx_parse.h); onnx_initial_weights()
// reads them.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/model_graph.h"

namespace layerplan {

class InputFile;

// ONNX files larger than this are refused unread: protobuf cannot parse a message of 2 GiB,
// and ONNX keeps larger weights in external files, which layerplan does not read.
inline constexpr int64_t kMaxOnnxFileBytes = (int64_t{2} << 30) - 1;

// The default-domain opsets read: 13 to 17, which torch.onnx.export writes and ONNX 1.12
// knows, and 18, where the operators layerplan reads are those of 17 but for ReduceMean's
// axes, which became an input (model/onnx_opset.h).
inline constexpr int64_t kMinOnnxOpset = 13;
inline constexpr int64_t kMaxOnnxOpset = 18;

// Whether `path` names an ONNX file (ends in ".onnx").
bool is_onnx_path(const std::string& path);

// The model in the ONNX file whose bytes are `bytes`, for a global batch of `batch` images,
// named `name` (layerplan names it after the file). A batch dimension that is symbolic or 1
// takes `batch`. Layers with parameters are named after their weight's initializer without
// ".weight" (a PyTorch export's state_dict module path: "layer1.0.conv1"), other layers
// after their node. Throws UsageError starting with `origin` for a file that is not ONNX,
// of another opset, with an unsupported operator (naming it, the node and its position),
// a cycle, dynamic spatial sizes, or an initializer whose shape disagrees with its layer.
ModelGraph model_from_onnx(const std::string& bytes, int64_t batch, const std::string& origin, const std::string& name);
ModelGraph model_from_onnx(const InputFile& file, int64_t batch, const std::string& origin, const std::string& name);

// One parameter tensor: its PyTorch shape and its values.
struct OnnxTensor {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

// The initial weights the file holds, keyed as layerplan's checkpoints name them
// ("<layer>.weight", ".bias", ".running_mean", ".running_var"; for a PyTorch export these
// are the initializers' own names). Throws UsageError as model_from_onnx, and for a
// parameter without data (declared as a graph input) or stored other than as float32.
std::map<std::string, OnnxTensor> onnx_initial_weights(const std::string& bytes, const std::string& origin);
std::map<std::string, OnnxTensor> onnx_initial_weights(const InputFile& file, const std::string& origin);

}  // namespace layerplan
