#pragma once
// Private to model/: refusing ONNX tensors whose data lies in external files. ONNX lets any
// tensor (an initializer, a sparse one, a Constant's value or any other attribute tensor,
// in the main graph, a subgraph, a function or training info) say "my bytes are in file
// LOCATION"; libonnx's checker stat()s that path (relative to the working directory) and
// its shape inference may read it. layerplan reads no external data, so every such tensor
// is refused before libonnx sees the model: the path is never looked at.
#include <onnx/onnx_pb.h>

#include <string>

namespace layerplan::onnx_import {

// Throws UsageError "ORIGIN: node 3 '/Constant' (Constant): attribute 'value': tensor 'c'
// keeps its data in an external file ('/etc/shadow'): ..." for the first such tensor, in
// file order (nodes by their position in the file).
void refuse_external_data(const onnx::ModelProto& model, const std::string& origin);

}  // namespace layerplan::onnx_import
