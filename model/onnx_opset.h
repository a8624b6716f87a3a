#pragma once
// Private to model/: ONNX files of opset 18, read through libonnx 1.12, which knows opsets
// up to 17. Of the operators layerplan reads, opset 18 changed only ReduceMean (its axes
// became an input) and Pad (an optional axes input); the others are the same operator in
// both. So a file of opset 18 is rewritten as opset 17 before libonnx checks it: a
// ReduceMean's constant axes input becomes its axes attribute, and what has no opset-17
// form (computed axes, noop_with_empty_axes, Pad's axes) is refused naming the node.
// Operators layerplan does not read are refused by name afterwards, whatever the opset.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>

namespace layerplan::onnx_import {

// The newest opset libonnx 1.12's checker and shape inference know.
inline constexpr int64_t kLibonnxMaxOpset = 17;

// The default-domain opset the model imports (-1: none).
int64_t default_opset(const onnx::ModelProto& model);

// A model of opset 18 becomes the same model in opset 17 (others are left alone); throws
// UsageError "ORIGIN: node 3 '/ReduceMean' (ReduceMean): ..." for a node it cannot lower.
void lower_to_libonnx_opset(onnx::ModelProto& model, const std::string& origin);

}  // namespace layerplan::onnx_import
