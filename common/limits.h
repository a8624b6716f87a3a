#pragma once
// The largest models, plans and clusters layerplan accepts (docs/limits.md). Each is far
// above any real network or job and low enough that every product the planner and the
// runtime form from them (elements, parameters, multiply-adds, bytes, tile counts) fits in
// 64 bits. They are enforced where input is read: model files and zoo models
// (ModelGraph), plan files (model/plan_file.h), cluster and admin files (topology/).
#include <cstdint>

namespace layerplan {

inline constexpr int64_t kMaxBatch = int64_t{1} << 24;            // samples in a global batch
inline constexpr int64_t kMaxModelField = int64_t{1} << 30;       // channels, features, input height/width
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 40;   // one layer's output, batch included
inline constexpr int64_t kMaxLayerParameters = int64_t{1} << 40;  // trainable parameters of one layer
inline constexpr int64_t kMaxLayerMacs = int64_t{1} << 52;        // forward multiply-adds of one layer
inline constexpr int64_t kMaxLayers = int64_t{1} << 14;           // layers of a model, the input included
inline constexpr int64_t kMaxLayerInputs = 1024;                  // inputs of one concat or add
inline constexpr int64_t kMaxDevices = int64_t{1} << 16;          // devices of a plan or a cluster
inline constexpr int64_t kMaxPlanDeviceIds = int64_t{1} << 26;    // layers x devices: a plan's device lists

// An ONNX graph (model/onnx_parse.cc), counted as the file is read, before protobuf builds
// the graph and libonnx checks it: PyTorch writes a few nodes per layer (GELU: 5, shape
// arithmetic: a few more), so 8 per layer leaves room; initializers are at most a
// layer's 4 parameters plus constants.
inline constexpr int64_t kMaxOnnxNodes = kMaxLayers * 8;         // nodes of the main graph
inline constexpr int64_t kMaxOnnxInitializers = kMaxLayers * 8;  // initializers, sparse ones included
inline constexpr int64_t kMaxOnnxGraphInputs = kMaxLayers * 8;   // graph inputs (weights declared as inputs)
inline constexpr int64_t kMaxOnnxValueInfos = kMaxLayers * 8;    // graph outputs and value_info entries

// Input files (common/input_file.h): the most bytes read from each kind.
inline constexpr int64_t kMaxTextInputBytes = int64_t{64} << 20;  // model, plan, cluster, admin, link figures
inline constexpr int64_t kMaxHwlocXmlBytes = int64_t{64} << 20;   // an hwloc XML export
// JSON arrays and objects nested deeper than this are refused before parsing: no input
// format of layerplan nests deeper than 5, and nlohmann::json serialises recursively.
inline constexpr int kMaxJsonDepth = 64;

}  // namespace layerplan
