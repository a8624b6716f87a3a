#include "model/onnx_transformer.h"

#include <map>
#include <optional>
#include <set>

#include "common/error.h"
#include "common/text.h"

namespace layerplan::onnx_import {

namespace {

constexpr const char* kWhy = ": models with LayerNorm or attention are not supported (layerplan reads CNNs)";

// Operators that are a normalization over features or an attention block by themselves
// (the default domain's and onnxruntime's fused ones).
const std::map<std::string, std::string>& named_operators() {
  static const std::map<std::string, std::string> ops = {
      {"LayerNormalization", "layer normalization"},
      {"GroupNormalization", "group normalization"},
      {"SimplifiedLayerNormalization", "layer normalization"},
      {"SkipLayerNormalization", "layer normalization"},
      {"EmbedLayerNormalization", "layer normalization"},
      {"Attention", "attention"},
      {"MultiHeadAttention", "attention"},
  };
  return ops;
}

std::string axes_text(const onnx::NodeProto& n) {
  for (const onnx::AttributeProto& a : n.attribute()) {
    if (a.name() != "axes") continue;
    std::string out;
    for (const int64_t v : a.ints()) out += (out.empty() ? "" : ", ") + std::to_string(v);
    return "[" + out + "]";
  }
  return "all axes";
}

// Tensors that do not depend on the image: initializers, weights declared as inputs,
// Constant outputs, and what nodes compute from those alone.
std::set<std::string> constant_tensors(const onnx::GraphProto& graph) {
  std::set<std::string> constant;
  for (const onnx::TensorProto& t : graph.initializer()) constant.insert(t.name());
  bool image = false;
  for (const onnx::ValueInfoProto& v : graph.input()) {
    if (constant.count(v.name())) continue;
    if (image) constant.insert(v.name());  // the first other input is the image
    image = true;
  }
  for (const onnx::NodeProto& n : graph.node()) {
    bool all = true;
    for (const std::string& in : n.input()) all = all && (in.empty() || constant.count(in) > 0);
    if (all) constant.insert(n.output().begin(), n.output().end());
  }
  return constant;
}

// Why node `i` is part of a normalization or attention block, or nullopt.
std::optional<std::string> transformer_part(const onnx::GraphProto& graph, int i,
                                            const std::map<std::string, std::vector<int>>& readers,
                                            const std::set<std::string>& constant) {
  const onnx::NodeProto& n = graph.node(i);
  if (const auto named = named_operators().find(n.op_type()); named != named_operators().end()) {
    return "operator " + named->first + " (" + named->second + ")";
  }
  if (n.op_type() == "ReduceMean" && n.input_size() >= 1 && n.output_size() == 1) {
    const auto r = readers.find(n.output(0));
    for (const int reader : r == readers.end() ? std::vector<int>{} : r->second) {
      const onnx::NodeProto& sub = graph.node(reader);
      if (sub.op_type() == "Sub" && sub.input_size() == 2 && sub.input(0) == n.input(0) &&
          sub.input(1) == n.output(0)) {
        return "x - mean(x) over axes " + axes_text(n) + " (a layer normalization written out)";
      }
    }
  }
  if (n.op_type() == "MatMul" && n.input_size() == 2 && !constant.count(n.input(0)) && !constant.count(n.input(1))) {
    return "a MatMul of two computed tensors (attention)";
  }
  return std::nullopt;
}

}  // namespace

void refuse_transformer_nodes(const onnx::GraphProto& graph, const std::vector<int>& positions,
                              const std::string& origin) {
  std::map<std::string, std::vector<int>> readers;
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const std::string& in : graph.node(i).input()) readers[in].push_back(i);
  }
  const std::set<std::string> constant = constant_tensors(graph);
  int first = -1;
  std::string why;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& n = graph.node(i);
    if (!n.domain().empty() && n.domain() != "ai.onnx" && n.domain() != "com.microsoft") continue;
    if (first >= 0 && positions[static_cast<size_t>(i)] > positions[static_cast<size_t>(first)]) continue;
    if (std::optional<std::string> part = transformer_part(graph, i, readers, constant)) {
      first = i;
      why = std::move(*part);
    }
  }
  if (first < 0) return;
  const onnx::NodeProto& n = graph.node(first);
  throw UsageError(origin + ": node " + std::to_string(positions[static_cast<size_t>(first)]) + " '" +
                   clipped(n.name()) + "' (" + clipped(n.op_type()) + "): " + why + kWhy);
}

}  // namespace layerplan::onnx_import
