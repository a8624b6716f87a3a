#include "model/onnx_external_data.h"

#include "common/error.h"
#include "common/text.h"

namespace layerplan::onnx_import {

namespace {

void check_graph(const onnx::GraphProto& graph, const std::string& where);

// Whether the tensor says its data lies in another file (data_location or external_data).
bool is_external(const onnx::TensorProto& t) {
  return t.data_location() == onnx::TensorProto::EXTERNAL || t.external_data_size() > 0;
}

// " (LOCATION)" of an external tensor, for the message; the path is only quoted.
std::string location_of(const onnx::TensorProto& t) {
  for (const onnx::StringStringEntryProto& entry : t.external_data()) {
    if (entry.key() == "location") return " ('" + clipped(entry.value()) + "')";
  }
  return "";
}

// `what` names the tensor: "initializer 'w'", "node 3 '/c' (Constant): attribute 'value'".
void check_tensor(const onnx::TensorProto& t, const std::string& what) {
  require(!is_external(t), what + " keeps its data in an external file" + location_of(t) +
                               ": not supported (export the weights inside the file)");
}

void check_sparse(const onnx::SparseTensorProto& t, const std::string& what) {
  check_tensor(t.values(), what + " (values)");
  check_tensor(t.indices(), what + " (indices)");
}

void check_attribute(const onnx::AttributeProto& a, const std::string& node) {
  const std::string what = node + ": attribute '" + clipped(a.name()) + "'";
  if (a.has_t()) check_tensor(a.t(), what + ": tensor '" + clipped(a.t().name()) + "'");
  for (const onnx::TensorProto& t : a.tensors()) check_tensor(t, what + ": tensor '" + clipped(t.name()) + "'");
  if (a.has_sparse_tensor()) check_sparse(a.sparse_tensor(), what + ": sparse tensor");
  for (const onnx::SparseTensorProto& t : a.sparse_tensors()) check_sparse(t, what + ": sparse tensor");
  if (a.has_g()) check_graph(a.g(), what);
  for (const onnx::GraphProto& g : a.graphs()) check_graph(g, what);
}

template <typename Nodes>
void check_nodes(const Nodes& nodes, const std::string& where) {
  int position = 0;
  for (const onnx::NodeProto& n : nodes) {
    const std::string node =
        where + "node " + std::to_string(position++) + " '" + clipped(n.name()) + "' (" + clipped(n.op_type()) + ")";
    for (const onnx::AttributeProto& a : n.attribute()) check_attribute(a, node);
  }
}

// `where` prefixes what is named: the file, and for a subgraph the attribute that holds it.
void check_graph(const onnx::GraphProto& graph, const std::string& where) {
  const std::string prefix = where + ": ";
  for (const onnx::TensorProto& t : graph.initializer())
    check_tensor(t, prefix + "initializer '" + clipped(t.name()) + "'");
  for (const onnx::SparseTensorProto& t : graph.sparse_initializer()) {
    check_sparse(t, prefix + "sparse initializer '" + clipped(t.values().name()) + "'");
  }
  check_nodes(graph.node(), prefix);
}

}  // namespace

void refuse_external_data(const onnx::ModelProto& model, const std::string& origin) {
  check_graph(model.graph(), origin);
  for (const onnx::FunctionProto& f : model.functions()) {
    check_nodes(f.node(), origin + ": function '" + clipped(f.name()) + "': ");
  }
  for (const onnx::TrainingInfoProto& t : model.training_info()) {
    check_graph(t.initialization(), origin + ": training initialization");
    check_graph(t.algorithm(), origin + ": training algorithm");
  }
}

}  // namespace layerplan::onnx_import
