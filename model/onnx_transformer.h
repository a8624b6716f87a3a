#pragma once
// Private to model/: models with layer normalization or attention, refused naming the node
// (layerplan's layer kinds are those of CNNs). They are found before anything else about
// the nodes is judged, so that the message says why such a model cannot be read rather
// than naming whichever of its operators comes first:
//   - LayerNormalization and the other normalization and attention operators;
//   - a layer normalization written out: x - ReduceMean(x) (the decomposed form PyTorch
//     exports before opset 17: ReduceMean over the last axis or the channels, Sub, Pow, ...);
//   - attention: a MatMul of two tensors both computed from the image (queries by keys,
//     weights by values); a MatMul by a weight has a constant operand.
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace layerplan::onnx_import {

// `graph`'s nodes in topological order, `positions[i]` node i's position in the file.
// Throws UsageError "ORIGIN: node 12 '/ln/ReduceMean' (ReduceMean): ..." for the first such
// node in the file.
void refuse_transformer_nodes(const onnx::GraphProto& graph, const std::vector<int>& positions,
                              const std::string& origin);

}  // namespace layerplan::onnx_import
