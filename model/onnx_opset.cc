#include "model/onnx_opset.h"

#include <cstring>
#include <map>
#include <vector>

#include "common/error.h"
#include "common/text.h"

namespace layerplan::onnx_import {

namespace {

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

// The int64 tensors of the graph by name: initializers and Constant nodes' values.
std::map<std::string, const onnx::TensorProto*> int64_constants(const onnx::GraphProto& graph) {
  std::map<std::string, const onnx::TensorProto*> out;
  for (const onnx::TensorProto& t : graph.initializer()) {
    if (t.data_type() == onnx::TensorProto::INT64) out[t.name()] = &t;
  }
  for (const onnx::NodeProto& n : graph.node()) {
    if (n.op_type() != "Constant" || !is_default_domain(n.domain()) || n.output_size() != 1) continue;
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.name() == "value" && a.has_t() && a.t().data_type() == onnx::TensorProto::INT64) out[n.output(0)] = &a.t();
    }
  }
  return out;
}

std::vector<int64_t> int64_values(const onnx::TensorProto& t) {
  if (!t.has_raw_data()) return {t.int64_data().begin(), t.int64_data().end()};
  std::vector<int64_t> values(t.raw_data().size() / sizeof(int64_t));
  std::memcpy(values.data(), t.raw_data().data(), values.size() * sizeof(int64_t));  // little-endian, as ONNX's
  return values;
}

void remove_attribute(onnx::NodeProto& node, const char* name) {
  auto* attributes = node.mutable_attribute();
  for (int i = attributes->size() - 1; i >= 0; --i) {
    if (attributes->Get(i).name() == name) attributes->DeleteSubrange(i, 1);
  }
}

const onnx::AttributeProto* attribute(const onnx::NodeProto& node, const char* name) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

// ReduceMean-18 (data, axes) to ReduceMean-13 (data) with an axes attribute.
void lower_reduce_mean(onnx::NodeProto& node, const std::map<std::string, const onnx::TensorProto*>& constants,
                       const std::string& where) {
  const onnx::AttributeProto* noop = attribute(node, "noop_with_empty_axes");
  const bool has_axes = node.input_size() > 1 && !node.input(1).empty();
  require(!has_axes || node.input_size() == 2, where + ": expected 1 or 2 inputs");
  if (!has_axes) {
    require(noop == nullptr || noop->i() == 0,
            where + ": noop_with_empty_axes 1 without axes (an identity) is not supported");
    remove_attribute(node, "noop_with_empty_axes");
    return;
  }
  const auto axes = constants.find(node.input(1));
  require(axes != constants.end(),
          where + ": the axes input '" + clipped(node.input(1)) + "' is computed: expected an int64 constant");
  remove_attribute(node, "noop_with_empty_axes");  // with axes given, it changes nothing
  remove_attribute(node, "axes");
  onnx::AttributeProto& a = *node.add_attribute();
  a.set_name("axes");
  a.set_type(onnx::AttributeProto::INTS);
  for (const int64_t v : int64_values(*axes->second)) a.add_ints(v);
  node.mutable_input()->RemoveLast();
}

}  // namespace

int64_t default_opset(const onnx::ModelProto& model) {
  int64_t opset = -1;
  for (const onnx::OperatorSetIdProto& id : model.opset_import()) {
    if (is_default_domain(id.domain())) opset = id.version();
  }
  return opset;
}

void lower_to_libonnx_opset(onnx::ModelProto& model, const std::string& origin) {
  if (default_opset(model) <= kLibonnxMaxOpset) return;
  onnx::GraphProto& graph = *model.mutable_graph();
  const std::map<std::string, const onnx::TensorProto*> constants = int64_constants(graph);
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto& node = *graph.mutable_node(i);
    if (!is_default_domain(node.domain())) continue;
    const std::string where =
        origin + ": node " + std::to_string(i) + " '" + clipped(node.name()) + "' (" + clipped(node.op_type()) + ")";
    if (node.op_type() == "ReduceMean") lower_reduce_mean(node, constants, where);
    if (node.op_type() == "Pad") {
      require(node.input_size() < 4 || node.input(3).empty(), where + ": the axes input is not supported");
    }
  }
  for (onnx::OperatorSetIdProto& id : *model.mutable_opset_import()) {
    if (is_default_domain(id.domain())) id.set_version(kLibonnxMaxOpset);
  }
}

}  // namespace layerplan::onnx_import
