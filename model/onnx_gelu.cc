#include "model/onnx_gelu.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <numbers>
#include <optional>

namespace layerplan::onnx_import {

namespace {

constexpr int kMaxNodesAfterCore = 6;  // the erf form has 3 after its Erf, the tanh form 3

bool is_default(const onnx::NodeProto& n) { return n.domain().empty() || n.domain() == "ai.onnx"; }

bool is_arithmetic(const onnx::NodeProto& n) {
  return is_default(n) && n.output_size() == 1 &&
         (n.op_type() == "Add" || n.op_type() == "Sub" || n.op_type() == "Mul" || n.op_type() == "Div" ||
          n.op_type() == "Pow");
}

// A one-element float or double tensor's value.
std::optional<double> scalar_of(const onnx::TensorProto& t) {
  int64_t elements = 1;
  for (const int64_t d : t.dims()) elements *= d;
  if (elements != 1) return std::nullopt;
  if (t.data_type() == onnx::TensorProto::FLOAT) {
    if (t.float_data_size() == 1) return t.float_data(0);
    float v = 0;
    if (t.raw_data().size() != sizeof v) return std::nullopt;
    std::memcpy(&v, t.raw_data().data(), sizeof v);  // little-endian, as ONNX stores it
    return v;
  }
  if (t.data_type() == onnx::TensorProto::DOUBLE) {
    if (t.double_data_size() == 1) return t.double_data(0);
    double v = 0;
    if (t.raw_data().size() != sizeof v) return std::nullopt;
    std::memcpy(&v, t.raw_data().data(), sizeof v);
    return v;
  }
  return std::nullopt;
}

// What the search needs of the graph: producers, readers and scalar constants by tensor.
struct GraphIndex {
  const onnx::GraphProto& graph;
  std::map<std::string, int> producer;
  std::map<std::string, int> reads;  // readers, a graph output counting as one
  std::map<std::string, double> scalars;

  explicit GraphIndex(const onnx::GraphProto& g) : graph(g) {
    for (const onnx::TensorProto& t : g.initializer()) {
      if (const std::optional<double> v = scalar_of(t)) scalars[t.name()] = *v;
    }
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& n = g.node(i);
      for (const std::string& in : n.input()) ++reads[in];
      for (const std::string& out : n.output()) producer[out] = i;
      if (n.op_type() != "Constant" || !is_default(n) || n.output_size() != 1) continue;
      for (const onnx::AttributeProto& a : n.attribute()) {
        if (a.name() != "value" || !a.has_t()) continue;
        if (const std::optional<double> v = scalar_of(a.t())) scalars[n.output(0)] = *v;
      }
    }
    for (const onnx::ValueInfoProto& v : g.output()) ++reads[v.name()];
  }
  const onnx::NodeProto& node(int i) const { return graph.node(i); }
};

// A candidate: the nodes taken so far around one Erf or Tanh, and its one input x.
struct Candidate {
  std::set<int> nodes;
  std::set<std::string> sources;  // the non-constant tensors read from outside
};

// Takes in the producer of `tensor` and, recursively, of its operands, where the tensor is
// an arithmetic node's output that only the candidate reads; other tensors are sources.
void take_backward(const GraphIndex& g, const std::string& tensor, Candidate& c) {
  if (g.scalars.count(tensor)) return;
  const auto p = g.producer.find(tensor);
  const auto r = g.reads.find(tensor);
  if (p == g.producer.end() || r == g.reads.end() || r->second != 1 || !is_arithmetic(g.node(p->second)) ||
      c.nodes.size() > 16) {
    c.sources.insert(tensor);
    return;
  }
  if (!c.nodes.insert(p->second).second) return;
  for (const std::string& in : g.node(p->second).input()) take_backward(g, in, c);
}

// The value of `tensor` for x = `x`, or nullopt where the candidate cannot compute it.
std::optional<double> value_of(const GraphIndex& g, const Candidate& c, const std::string& tensor,
                               const std::string& input, double x) {
  if (tensor == input) return x;
  if (const auto s = g.scalars.find(tensor); s != g.scalars.end()) return s->second;
  const auto p = g.producer.find(tensor);
  if (p == g.producer.end() || !c.nodes.count(p->second)) return std::nullopt;
  const onnx::NodeProto& n = g.node(p->second);
  std::array<double, 2> v{};
  if (n.input_size() != (n.op_type() == "Erf" || n.op_type() == "Tanh" ? 1 : 2)) return std::nullopt;
  for (int i = 0; i < n.input_size(); ++i) {
    const std::optional<double> in = value_of(g, c, n.input(i), input, x);
    if (!in) return std::nullopt;
    v[static_cast<size_t>(i)] = *in;
  }
  const std::string& op = n.op_type();
  if (op == "Erf") return std::erf(v[0]);
  if (op == "Tanh") return std::tanh(v[0]);
  if (op == "Add") return v[0] + v[1];
  if (op == "Sub") return v[0] - v[1];
  if (op == "Mul") return v[0] * v[1];
  if (op == "Div") return v[0] / v[1];
  if (op == "Pow") return std::pow(v[0], v[1]);
  return std::nullopt;
}

// Which GELU `tensor` computes from `input`, within float32 rounding of the constants.
std::optional<GeluApproximation> gelu_form(const GraphIndex& g, const Candidate& c, const std::string& tensor,
                                           const std::string& input) {
  constexpr std::array<double, 8> kPoints = {-4.0, -2.0, -1.0, -0.5, 0.25, 0.75, 1.5, 3.0};
  bool erf_form = true, tanh_form = true;
  for (const double x : kPoints) {
    const std::optional<double> v = value_of(g, c, tensor, input, x);
    if (!v) return std::nullopt;
    const double exact = 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    const double tanh = 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
    erf_form = erf_form && std::abs(*v - exact) <= 1e-6 * std::max(1.0, std::abs(exact));
    tanh_form = tanh_form && std::abs(*v - tanh) <= 1e-6 * std::max(1.0, std::abs(tanh));
  }
  if (erf_form) return GeluApproximation::kNone;
  if (tanh_form) return GeluApproximation::kTanh;
  return std::nullopt;
}

// The node after `after` that reads `tensor`, when it is the tensor's only reader; else -1.
int sole_reader_after(const GraphIndex& g, int after, const std::string& tensor) {
  if (const auto r = g.reads.find(tensor); r == g.reads.end() || r->second != 1) return -1;
  for (int i = after + 1; i < g.graph.node_size(); ++i) {
    for (const std::string& in : g.node(i).input()) {
      if (in == tensor) return i;
    }
  }
  return -1;
}

// The pattern around the Erf or Tanh node `core`, if its nodes compute GELU.
std::optional<GeluPattern> pattern_at(const GraphIndex& g, int core) {
  Candidate c;
  c.nodes.insert(core);
  take_backward(g, g.node(core).input(0), c);
  if (c.sources.size() != 1) return std::nullopt;
  const std::string input = *c.sources.begin();
  int last = core;
  for (int step = 0; step < kMaxNodesAfterCore; ++step) {
    const std::string& out = g.node(last).output(0);
    if (const std::optional<GeluApproximation> form = gelu_form(g, c, out, input)) {
      return GeluPattern{input, {c.nodes.begin(), c.nodes.end()}, *form};
    }
    // The one reader of the output, and what it reads besides: x, constants, or more
    // arithmetic of them (the 0.5 * x of x * 0.5 * (1 + erf(...))).
    const int next = sole_reader_after(g, last, out);
    if (next < 0 || !is_arithmetic(g.node(next))) return std::nullopt;
    c.nodes.insert(next);
    for (const std::string& in : g.node(next).input()) {
      if (in != out) take_backward(g, in, c);
    }
    if (c.sources.size() != 1) return std::nullopt;
    last = next;
  }
  return std::nullopt;
}

}  // namespace

void add_gelu_layer(NodeContext& n, const GeluPattern& pattern) {
  const Activation x = n.activation_named(pattern.input);
  n.produce(n.graph().gelu(n.layer_name(nullptr), x.layer, pattern.approximation), x.rank);
}

GeluPatterns find_gelu_patterns(const onnx::GraphProto& graph) {
  GeluPatterns out;
  std::optional<GraphIndex> index;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& n = graph.node(i);
    if (!is_default(n) || (n.op_type() != "Erf" && n.op_type() != "Tanh") || n.input_size() != 1 ||
        n.output_size() != 1 || out.covers(i)) {
      continue;
    }
    if (!index) index.emplace(graph);  // built only for a graph with an Erf or a Tanh
    std::optional<GeluPattern> p = pattern_at(*index, i);
    if (!p) continue;
    const int last = p->nodes.back();  // every other node of the pattern feeds it: earlier
    out.inner_nodes.insert(p->nodes.begin(), p->nodes.end() - 1);
    out.by_last_node.emplace(last, std::move(*p));
  }
  return out;
}

}  // namespace layerplan::onnx_import
