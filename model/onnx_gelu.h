#pragma once
// Private to model/: GELU as PyTorch exports it. ONNX before opset 20 has no Gelu operator,
// so torch.onnx.export writes nn.GELU() as arithmetic around an Erf,
//   Mul(Mul(x, Add(Erf(Div(x, 1.4142135)), 1)), 0.5),
// and nn.GELU(approximate='tanh') around a Tanh,
//   Mul(0.5, Mul(x, Add(1, Tanh(Mul(0.7978846, Add(x, Mul(0.044715, Mul(x, Mul(x, x)))))))))
// (operands in either order). Such a pattern is found by its shape and confirmed by its
// values: the nodes around one Erf or Tanh whose inner results nothing else reads, with
// scalar constants and one input x, whose last output, computed at a few points, is GELU of
// one form or the other. Its nodes then become one gelu activation layer.
#include <onnx/onnx_pb.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "model/model_graph.h"
#include "model/onnx_ops.h"

namespace layerplan::onnx_import {

struct GeluPattern {
  std::string input;       // x
  std::vector<int> nodes;  // the pattern's nodes (graph order); the last computes GELU(x)
  GeluApproximation approximation = GeluApproximation::kNone;
};

struct GeluPatterns {
  std::map<int, GeluPattern> by_last_node;  // keyed by the node whose output is GELU(x)
  std::set<int> inner_nodes;                // the patterns' other nodes
  bool covers(int node) const { return by_last_node.count(node) > 0 || inner_nodes.count(node) > 0; }
};

// The GELU patterns of a graph whose nodes are in topological order.
GeluPatterns find_gelu_patterns(const onnx::GraphProto& graph);

// The pattern's gelu layer, made at its last node `n` (its other nodes make nothing).
void add_gelu_layer(NodeContext& n, const GeluPattern& pattern);

}  // namespace layerplan::onnx_import
