#include "model/onnx_import.h"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <map>
#include <stdexcept>
#include <vector>

#include "common/error.h"
#include "common/limits.h"
#include "common/text.h"
#include "model/onnx_external_data.h"
#include "model/onnx_gelu.h"
#include "model/onnx_model.h"
#include "model/onnx_opset.h"
#include "model/onnx_transformer.h"

namespace layerplan::onnx_import {

namespace {

// The first line of a library's message, shortened: errors are one line.
std::string first_line(const std::string& text) { return clipped(text.substr(0, text.find('\n')), 200); }

void check_graph_present(const onnx::ModelProto& model, const std::string& origin) {
  require(model.ir_version() > 0 && model.has_graph() && model.graph().node_size() > 0,
          origin + ": not an ONNX model (no IR version or no graph nodes)");
}

void check_opset(const onnx::ModelProto& model, const std::string& origin) {
  const int64_t opset = default_opset(model);
  require(opset >= kMinOnnxOpset && opset <= kMaxOnnxOpset,
          origin + ": opset " + (opset < 0 ? std::string("missing") : std::to_string(opset)) + ": expected " +
              std::to_string(kMinOnnxOpset) + " to " + std::to_string(kMaxOnnxOpset) +
              " (torch.onnx.export(..., opset_version=17))");
}

// Which nodes read each node's outputs, and which nodes each node reads.
struct NodeLinks {
  std::vector<std::vector<int>> consumers;
  std::vector<std::vector<int>> producers;
};

NodeLinks node_links(const onnx::GraphProto& graph) {
  const auto count = static_cast<size_t>(graph.node_size());
  std::map<std::string, int> producer;
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const std::string& out : graph.node(i).output()) {
      if (!out.empty()) producer.emplace(out, i);
    }
  }
  NodeLinks links{std::vector<std::vector<int>>(count), std::vector<std::vector<int>>(count)};
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const std::string& in : graph.node(i).input()) {
      const auto it = producer.find(in);
      if (it == producer.end()) continue;
      links.consumers[static_cast<size_t>(it->second)].push_back(i);
      links.producers[static_cast<size_t>(i)].push_back(it->second);
    }
  }
  return links;
}

// Kahn's order; shorter than the node count when some nodes are on or after a cycle.
std::vector<int> kahn_order(const NodeLinks& links, std::vector<int>& waiting) {
  std::vector<int> order;
  for (size_t i = 0; i < waiting.size(); ++i) {
    waiting[i] = static_cast<int>(links.producers[i].size());
    if (waiting[i] == 0) order.push_back(static_cast<int>(i));
  }
  for (size_t k = 0; k < order.size(); ++k) {
    for (const int c : links.consumers[static_cast<size_t>(order[k])]) {
      if (--waiting[static_cast<size_t>(c)] == 0) order.push_back(c);
    }
  }
  return order;
}

// A node on a cycle: from any unplaced node, unplaced producers lead back into one.
[[noreturn]] void refuse_cycle(const onnx::GraphProto& graph, const NodeLinks& links, const std::vector<int>& waiting,
                               const std::string& origin) {
  int node = 0;
  while (waiting[static_cast<size_t>(node)] == 0) ++node;
  for (int step = 0; step < graph.node_size(); ++step) {
    for (const int p : links.producers[static_cast<size_t>(node)]) {
      if (waiting[static_cast<size_t>(p)] > 0) {
        node = p;
        break;
      }
    }
  }
  const onnx::NodeProto& n = graph.node(node);
  throw UsageError(origin + ": the graph has a cycle through node " + std::to_string(node) + " '" + clipped(n.name()) +
                   "' (" + clipped(n.op_type()) + ")");
}

// Reorders the nodes topologically (the file need not list them so; the checker needs
// them so) and returns each sorted node's position in the file. A file already in order
// keeps its order (Kahn's may differ).
std::vector<int> sort_nodes(onnx::GraphProto& graph, const std::string& origin) {
  const NodeLinks links = node_links(graph);
  std::vector<int> waiting(static_cast<size_t>(graph.node_size()), 0);
  std::vector<int> order = kahn_order(links, waiting);
  if (static_cast<int>(order.size()) < graph.node_size()) refuse_cycle(graph, links, waiting, origin);
  bool in_order = true;
  for (size_t i = 0; in_order && i < links.producers.size(); ++i) {
    for (const int p : links.producers[i]) in_order = in_order && static_cast<size_t>(p) < i;
  }
  if (in_order) {
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    return order;
  }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
  for (const int i : order) *sorted.Add() = graph.node(i);
  graph.mutable_node()->Swap(&sorted);
  return order;
}

// Window attributes ONNX's own shape inference divides by or sizes with, checked first:
// libonnx 1.12's convPoolShapeInference dies of SIGFPE on a stride of 0 (found by
// fuzz_onnx_file). strides, dilations, kernel_shape and group must be >= 1, pads >= 0.
void check_window_attributes(const onnx::GraphProto& graph, const std::vector<int>& positions,
                             const std::string& origin) {
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& n = graph.node(i);
    for (const onnx::AttributeProto& a : n.attribute()) {
      const bool positive = a.name() == "strides" || a.name() == "dilations" || a.name() == "kernel_shape";
      const bool group = a.name() == "group";
      if (!positive && !group && a.name() != "pads") continue;
      const int64_t least = positive || group ? 1 : 0;
      bool ok = !group || a.i() >= least;
      for (const int64_t v : a.ints()) ok = ok && v >= least;
      require(ok, origin + ": node " + std::to_string(positions[static_cast<size_t>(i)]) + " '" + clipped(n.name()) +
                      "' (" + clipped(n.op_type()) + "): attribute " + a.name() + " has a value below " +
                      std::to_string(least) + ": expected " + (least == 1 ? "1 or more" : "0 or more"));
    }
  }
}

void check_and_infer(onnx::ModelProto& model, const std::string& origin) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    throw UsageError(origin + ": not a valid ONNX model: " + first_line(e.what()));
  }
  try {
    onnx::shape_inference::InferShapes(model);
  } catch (const std::exception& e) {
    throw UsageError(origin + ": ONNX shape inference failed: " + first_line(e.what()));
  }
}

// Dims of a tensor type; -1 where a dimension is symbolic or unknown.
std::vector<int64_t> dims_of(const onnx::TypeProto& type) {
  std::vector<int64_t> dims;
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return dims;
  for (const onnx::TensorShapeProto::Dimension& d : type.tensor_type().shape().dim()) {
    dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  }
  return dims;
}

// Shapes the file states or ONNX inferred, by tensor name.
std::map<std::string, std::vector<int64_t>> known_shapes(const onnx::GraphProto& graph) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto* list : {&graph.input(), &graph.value_info(), &graph.output()}) {
    for (const onnx::ValueInfoProto& v : *list) {
      if (v.has_type() && v.type().has_tensor_type() && v.type().tensor_type().has_shape()) {
        shapes[v.name()] = dims_of(v.type());
      }
    }
  }
  return shapes;
}

std::string dim_name(const onnx::TensorShapeProto::Dimension& d) {
  return d.has_dim_param()   ? "'" + clipped(d.dim_param()) + "'"
         : d.has_dim_value() ? std::to_string(d.dim_value())
                             : "unknown";
}

// The image input: float32 [N, C, H, W] with C, H, W fixed; N symbolic, 1 or the batch
// (kFileBatch: whatever the file says, for reading weights only).
void add_input(ImportState& s, const onnx::ValueInfoProto& v, int64_t batch, const std::string& origin) {
  const std::string where = origin + ": input '" + clipped(v.name()) + "'";
  require(v.type().has_tensor_type() && v.type().tensor_type().has_shape() &&
              v.type().tensor_type().shape().dim_size() == 4,
          where + ": expected an NCHW image tensor of rank 4");
  require(v.type().tensor_type().elem_type() == onnx::TensorProto::FLOAT,
          where + ": element type " + std::to_string(v.type().tensor_type().elem_type()) + ": expected float32 (1)");
  const auto& dims = v.type().tensor_type().shape().dim();
  const onnx::TensorShapeProto::Dimension& n = dims.Get(0);
  if (batch == kFileBatch)
    batch = n.has_dim_value() && n.dim_value() >= 1 && n.dim_value() <= kMaxBatch ? n.dim_value() : 1;
  require(!n.has_dim_value() || n.dim_value() == 1 || n.dim_value() == batch,
          where + ": batch dimension " + std::to_string(n.dim_value()) +
              ": expected a symbolic batch, 1 or the batch " + std::to_string(batch) +
              " (torch.onnx.export(..., dynamic_axes={'input': {0: 'batch'}}))");
  Shape shape{{batch, 1, 1, 1}};
  const char* names[] = {"batch", "channels", "height", "width"};
  for (int d = 1; d < 4; ++d) {
    const onnx::TensorShapeProto::Dimension& dim = dims.Get(d);
    require(dim.has_dim_value() && dim.dim_value() >= 1 && dim.dim_value() <= kMaxModelField,
            where + ": " + names[d] + " " + dim_name(dim) + ": expected a fixed size from 1 to " +
                std::to_string(kMaxModelField) + " (dynamic spatial shapes are not supported)");
    shape.extent[static_cast<size_t>(d)] = dim.dim_value();
  }
  try {
    s.activations[v.name()] = Activation{s.graph.input("input", shape), 4};
  } catch (const std::invalid_argument& e) {
    throw UsageError(where + ": " + e.what());
  }
}

// Initializers, then the graph inputs: the first that is not an initializer is the image,
// the others are weights declared without values.
void add_inputs(ImportState& s, const onnx::GraphProto& graph, int64_t batch, const std::string& origin) {
  for (const onnx::TensorProto& t : graph.initializer()) {
    s.params[t.name()] = Param{t.name(), {t.dims().begin(), t.dims().end()}, &t};
  }
  bool image = false;
  for (const onnx::ValueInfoProto& v : graph.input()) {
    if (s.params.count(v.name())) continue;
    if (!image) {
      add_input(s, v, batch, origin);
      image = true;
      continue;
    }
    const std::vector<int64_t> dims = dims_of(v.type());
    for (const int64_t d : dims) {
      require(d >= 0, origin + ": input '" + clipped(v.name()) +
                          "': a second input with a dynamic shape: expected one image input, other inputs weights");
    }
    s.params[v.name()] = Param{v.name(), dims, nullptr};
  }
  require(image, origin + ": the graph has no input that is not an initializer: expected an image input");
}

// The node's output 0 against the shape the file or ONNX's inference states for it.
void check_output_shape(const NodeContext& ctx, const ImportState& s,
                        const std::map<std::string, std::vector<int64_t>>& shapes) {
  const auto produced = s.activations.find(ctx.node().output(0));
  const auto stated = shapes.find(ctx.node().output(0));
  if (produced == s.activations.end() || stated == shapes.end() || stated->second.empty()) return;
  Shape ours = s.graph.layer(produced->second.layer).output;
  ours.extent[2] += 2 * int64_t{produced->second.pad_h};  // a Pad node's output
  ours.extent[3] += 2 * int64_t{produced->second.pad_w};
  const std::vector<int64_t>& theirs = stated->second;
  bool agree = static_cast<int>(theirs.size()) == produced->second.rank;
  for (size_t d = 1; agree && d < theirs.size(); ++d) agree = theirs[d] < 0 || theirs[d] == ours[static_cast<int>(d)];
  if (!agree) {
    std::string text;
    for (const int64_t d : theirs) text += (text.empty() ? "" : "x") + (d < 0 ? std::string("?") : std::to_string(d));
    ctx.fail("output shape " + ours.str() + " disagrees with the file's " + text);
  }
}

std::string node_where(const onnx::NodeProto& node, int position, const std::string& origin) {
  return origin + ": node " + std::to_string(position) + " '" + clipped(node.name()) + "' (" + clipped(node.op_type()) +
         ")";
}

const OpEntry* op_of(const onnx::NodeProto& node) {
  return (node.domain().empty() || node.domain() == "ai.onnx") ? find_op(node.op_type()) : nullptr;
}

std::string unsupported(const onnx::NodeProto& node) {
  return "operator " + clipped((node.domain().empty() ? "" : node.domain() + ".") + node.op_type()) +
         " is not supported; layerplan reads " + supported_ops();
}

// Operators without a handler, refused (the first in the file) before ONNX's checker and
// shape inference, whose messages about them (an LSTM on an NCHW tensor) would not say so.
// The nodes of a GELU pattern are read as one layer, whatever their operators.
void refuse_unsupported_operators(const onnx::GraphProto& graph, const std::vector<int>& positions,
                                  const GeluPatterns& gelus, const std::string& origin) {
  int first = -1;
  for (int i = 0; i < graph.node_size(); ++i) {
    if (op_of(graph.node(i)) == nullptr && !gelus.covers(i) &&
        (first < 0 || positions[static_cast<size_t>(i)] < positions[static_cast<size_t>(first)])) {
      first = i;
    }
  }
  if (first >= 0) {
    const onnx::NodeProto& node = graph.node(first);
    throw UsageError(node_where(node, positions[static_cast<size_t>(first)], origin) + ": " + unsupported(node));
  }
}

// One node by its operator's handler, or the last node of a GELU pattern (`gelu`).
void add_node(ImportState& s, const onnx::NodeProto& node, int position, const std::string& origin,
              const std::map<std::string, std::vector<int64_t>>& shapes, const GeluPattern* gelu) {
  NodeContext ctx(node, node_where(node, position, origin), s);
  const OpEntry* op = op_of(node);
  if (!op && !gelu) ctx.fail(unsupported(node));
  try {
    if (gelu) {
      add_gelu_layer(ctx, *gelu);
    } else {
      op->handle(ctx);
    }
  } catch (const std::invalid_argument& e) {
    ctx.fail(clipped(e.what(), 4 * kMaxQuotedChars));
  }
  check_output_shape(ctx, s, shapes);
}

// One graph output: the logits (a loss layer is added) or a softmax (the loss itself).
void add_loss(ImportState& s, const onnx::GraphProto& graph, const std::string& origin) {
  require(graph.output_size() == 1,
          origin + ": " + std::to_string(graph.output_size()) + " graph outputs: expected 1, the logits");
  const auto it = s.activations.find(graph.output(0).name());
  require(it != s.activations.end(),
          origin + ": graph output '" + clipped(graph.output(0).name()) + "' is not the output of a layer");
  require(it->second.pad_h == 0 && it->second.pad_w == 0,
          origin + ": graph output '" + clipped(graph.output(0).name()) + "' is the output of a Pad node");
  if (s.graph.layer(it->second.layer).kind == LayerKind::kSoftmaxCrossEntropy) return;
  require(it->second.rank == 2, origin + ": graph output '" + clipped(graph.output(0).name()) + "' has rank " +
                                    std::to_string(it->second.rank) + ": expected the logits, N x classes");
  try {
    s.graph.softmax_cross_entropy("loss", it->second.layer);
  } catch (const std::invalid_argument& e) {
    throw UsageError(origin + ": " + e.what());
  }
}

}  // namespace

ImportedModel import_onnx(const OnnxSource& source, int64_t batch, const std::string& origin, const std::string& name) {
  require(batch == kFileBatch || (batch >= 1 && batch <= kMaxBatch),
          "batch " + std::to_string(batch) + ": expected 1 to " + std::to_string(kMaxBatch) + " images");
  ParsedOnnx parsed = parse_onnx(source, origin);
  ImportedModel out{std::move(parsed.proto), std::move(parsed.elided), nullptr};
  onnx::ModelProto& model = *out.proto;
  check_graph_present(model, origin);
  check_opset(model, origin);
  refuse_external_data(model, origin);
  lower_to_libonnx_opset(model, origin);
  const std::vector<int> positions = sort_nodes(*model.mutable_graph(), origin);
  check_window_attributes(model.graph(), positions, origin);
  refuse_transformer_nodes(model.graph(), positions, origin);
  const GeluPatterns gelus = find_gelu_patterns(model.graph());
  refuse_unsupported_operators(model.graph(), positions, gelus, origin);
  check_and_infer(model, origin);
  const std::map<std::string, std::vector<int64_t>> shapes = known_shapes(model.graph());
  out.state = std::make_unique<ImportState>(name);
  add_inputs(*out.state, model.graph(), batch, origin);
  for (const onnx::NodeProto& node : model.graph().node()) {
    for (const std::string& in : node.input()) out.state->readers[in].push_back(&node);
  }
  for (const onnx::ValueInfoProto& v : model.graph().output()) out.state->readers[v.name()].push_back(nullptr);
  for (int i = 0; i < model.graph().node_size(); ++i) {
    if (gelus.inner_nodes.count(i)) continue;
    const auto gelu = gelus.by_last_node.find(i);
    add_node(*out.state, model.graph().node(i), positions[static_cast<size_t>(i)], origin, shapes,
             gelu == gelus.by_last_node.end() ? nullptr : &gelu->second);
  }
  add_loss(*out.state, model.graph(), origin);
  return out;
}

}  // namespace layerplan::onnx_import
