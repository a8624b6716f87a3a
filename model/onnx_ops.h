#pragma once
// Private to model/: the ONNX operator table and what each operator's handler sees while
// model/onnx_model.cc walks the graph's nodes in topological order. Adding an operator is
// one handler in onnx_ops.cc and one row of its table.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <set>
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
  // A Transpose node's output: `dims` are the 2-D tensor `name`'s, reversed.
  bool transposed = false;
};

// What the walk builds: the graph, the tensor names known so far and, for every parameter
// tensor of a layer ("<layer>.<role>"), the ONNX tensor that holds its initial values.
struct ImportState {
  explicit ImportState(std::string name) : graph(std::move(name)) {}
  ModelGraph graph;
  std::map<std::string, Activation> activations;
  std::map<std::string, Param> params;
  std::map<std::string, std::string> parameter_sources;
  // The parameters ("<layer>.<role>") whose 2-D source holds PyTorch's layout transposed
  // (a Gemm with transB 0, a MatMul): their initial values are transposed as read.
  std::set<std::string> transposed_parameters;
  // The outputs of nodes a handler has already taken into its layer (a MatMul's bias Add).
  std::set<std::string> absorbed_outputs;
  // 1-D int64 tensors computed from shapes (PyTorch's x.view(x.size(0), -1) exports Shape,
  // Gather, Unsqueeze and Concat nodes), kBatchDim standing for the batch.
  std::map<std::string, std::vector<int64_t>> shape_values;
  // The nodes that read each tensor (null: a graph output), for handlers that look ahead.
  std::map<std::string, std::vector<const onnx::NodeProto*>> readers;
  // Sigmoid outputs whose only reader is a Mul of the sigmoid's own input: PyTorch 1.13
  // exports SiLU as Mul(x, Sigmoid(x)), which becomes one silu layer at the Mul.
  std::map<std::string, Activation> pending_sigmoids;  // output -> the sigmoid's input
};
inline constexpr int64_t kBatchDim = -(int64_t{1} << 62);

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
  Activation activation(int slot) const;                       // input `slot` must be a layer's output, unpadded
  Activation padded_activation(int slot) const;                // the same, maybe zero-padded by a Pad node
  Activation activation_named(const std::string& name) const;  // tensor `name` must be a layer's output, unpadded
  std::vector<int64_t> int64_values(const Param& p) const;     // an int64 constant's values
  const Param& param(int slot) const;                          // input `slot` must be an initializer or constant
  // The constant (initializer, Constant or Transpose output) of that name, or null.
  const Param* constant_named(const std::string& name) const;
  // The shape of input `slot` as the layer kind needs it; fails naming both shapes.
  void expect_dims(const Param& p, const std::vector<int64_t>& dims) const;

  bool has_attribute(const char* name) const;
  int64_t int_attribute(const char* name, int64_t fallback) const;
  std::vector<int64_t> ints_attribute(const char* name, std::vector<int64_t> fallback) const;
  float float_attribute(const char* name, float fallback) const;
  std::string string_attribute(const char* name, const std::string& fallback) const;

  // The name of the node's layer: the weight's name without ".weight", else the node's.
  std::string layer_name(const Param* weight) const;
  // Records that parameter `role` ("weight", "bias", ...) of `layer` starts from `p`
  // (transposed: from `p`'s 2-D source transposed).
  void bind(const std::string& layer, const char* role, const Param& p, bool transposed = false);
  // The one node that reads output 0, or null when none or several do.
  const onnx::NodeProto* sole_consumer() const;
  // `consumer`'s output 0 is this node's layer `layer` (of `rank`): the handler took the
  // consumer into the layer, and the consumer's own handler must then do nothing.
  void absorb(const onnx::NodeProto& consumer, int layer, int rank);
  bool absorbed() const;
  // Output 0 of the node is `layer`'s output, of `rank`; or is `a` (an identity).
  void produce(int layer, int rank);
  void alias(const Activation& a);
  void constant(const onnx::TensorProto& value);
  void constant(const Param& p);  // output 0 is the constant `p`
  // Input `slot` as a shape value, or an int64 constant's values; null when it is neither.
  const std::vector<int64_t>* shape_value(int slot) const;
  void produce_shape_value(std::vector<int64_t> values);  // output 0 is that shape value
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
