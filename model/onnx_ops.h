#pragma once
// Private to model/: the ONNX operator table and what each operator's handler sees while
// model/onnx_model.cc walks the graph's nodes in topological order. Adding an operator is
// one handler in onnx_ops.cc and one row of its table.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/model_graph.h"

namespace layerplan::onnx_import {

// An activation tensor: the output of a layer, of rank 4 (NCHW) or 2 (NC, kept as NC11),
// with the zero padding a Pad node added around its height and width (which only a
// convolution or an average pool that counts padding may take into its window).
struct Activation {
  int layer = -1;
  int rank = 4;
  int pad_h = 0, pad_w = 0;
};

// A tensor with a fixed shape that is not computed from the input: an initializer, a
// Constant node's value, or a weight declared as a graph input (then without data).
struct Param {
  std::string name;
  std::vector<int64_t> dims;
  const onnx::TensorProto* data = nullptr;  // null: no values in the file
};

// What the walk builds: the graph, the tensor names known so far and, for every parameter
// tensor of a layer ("<layer>.<role>"), the ONNX tensor that holds its initial values.
struct ImportState {
  explicit ImportState(std::string name) : graph(std::move(name)) {}
  ModelGraph graph;
  std::map<std::string, Activation> activations;
  std::map<std::string, Param> params;
  std::map<std::string, std::string> parameter_sources;
  // The nodes that read each tensor (null: a graph output), for handlers that look ahead.
  std::map<std::string, std::vector<const onnx::NodeProto*>> readers;
  // Sigmoid outputs whose only reader is a Mul of the sigmoid's own input: PyTorch 1.13
  // exports SiLU as Mul(x, Sigmoid(x)), which becomes one silu layer at the Mul.
  std::map<std::string, Activation> pending_sigmoids;  // output -> the sigmoid's input
};

// One node, as its handler sees it. fail() throws UsageError naming the file, the node's
// position, name and operator: "m.onnx: node 3 '/conv1/Conv' (Conv): ...".
class NodeContext {
 public:
  NodeContext(const onnx::NodeProto& node, std::string where, ImportState& state)
      : node_(node), where_(std::move(where)), state_(state) {}

  const onnx::NodeProto& node() const { return node_; }
  ModelGraph& graph() { return state_.graph; }
  [[noreturn]] void fail(const std::string& what) const;

  bool has_input(int slot) const;
  Activation activation(int slot) const;                    // input `slot` must be a layer's output, unpadded
  Activation padded_activation(int slot) const;             // the same, maybe zero-padded by a Pad node
  std::vector<int64_t> int64_values(const Param& p) const;  // an int64 constant's values
  const Param& param(int slot) const;                       // input `slot` must be an initializer or constant
  // The shape of input `slot` as the layer kind needs it; fails naming both shapes.
  void expect_dims(const Param& p, const std::vector<int64_t>& dims) const;

  bool has_attribute(const char* name) const;
  int64_t int_attribute(const char* name, int64_t fallback) const;
  std::vector<int64_t> ints_attribute(const char* name, std::vector<int64_t> fallback) const;
  float float_attribute(const char* name, float fallback) const;
  std::string string_attribute(const char* name, const std::string& fallback) const;

  // The name of the node's layer: the weight's name without ".weight", else the node's.
  std::string layer_name(const Param* weight) const;
  // Records that parameter `role` ("weight", "bias", ...) of `layer` starts from `p`.
  void bind(const std::string& layer, const char* role, const Param& p);
  // Output 0 of the node is `layer`'s output, of `rank`; or is `a` (an identity).
  void produce(int layer, int rank);
  void alias(const Activation& a);
  void constant(const onnx::TensorProto& value);
  // The input of the pending sigmoid (ImportState::pending_sigmoids) input `slot` names,
  // or null.
  const Activation* pending_sigmoid(int slot) const;
  void take_pending_sigmoid(int slot);
  // Output 0 waits, unmade, as a pending sigmoid of `input`.
  void defer_sigmoid(const Activation& input);
  // The nodes that read tensor `name` (null: a graph output).
  const std::vector<const onnx::NodeProto*>& readers(const std::string& name) const;

 private:
  const onnx::AttributeProto* attribute(const char* name) const;
  const onnx::NodeProto& node_;
  std::string where_;
  ImportState& state_;
};

using OpHandler = void (*)(NodeContext&);

struct OpEntry {
  std::string_view op_type;
  OpHandler handle;
};

// The handler of a default-domain operator, or null when layerplan has none.
const OpEntry* find_op(std::string_view op_type);
// "Add, AveragePool, ...": the operators of the table, for messages.
std::string supported_ops();

}  // namespace layerplan::onnx_import
