#include "model/onnx_ops.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

#include "common/error.h"
#include "common/text.h"
#include "model/onnx_channel_ops.h"

namespace layerplan::onnx_import {

namespace {

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string out;
  for (const int64_t d : dims) out += (out.empty() ? "" : "x") + std::to_string(d);
  return out.empty() ? "a scalar" : out;
}

}  // namespace

void NodeContext::fail(const std::string& what) const { throw UsageError(where_ + ": " + what); }

bool NodeContext::has_input(int slot) const { return slot < node_.input_size() && !node_.input(slot).empty(); }

Activation NodeContext::activation(int slot) const {
  const Activation a = padded_activation(slot);
  if (a.pad_h != 0 || a.pad_w != 0) {
    fail("input " + std::to_string(slot) + " '" + clipped(node_.input(slot)) +
         "' is zero-padded by a Pad node: only Conv and AveragePool take a padded input");
  }
  return a;
}

Activation NodeContext::activation_named(const std::string& name) const {
  const auto it = state_.activations.find(name);
  if (it == state_.activations.end()) fail("'" + clipped(name) + "' is not the output of a layer");
  if (it->second.pad_h != 0 || it->second.pad_w != 0) {
    fail("'" + clipped(name) + "' is zero-padded by a Pad node: only Conv and AveragePool take a padded input");
  }
  return it->second;
}

const Param* NodeContext::constant_named(const std::string& name) const {
  const auto it = state_.params.find(name);
  return it == state_.params.end() ? nullptr : &it->second;
}

Activation NodeContext::padded_activation(int slot) const {
  if (!has_input(slot)) fail("input " + std::to_string(slot) + " is missing");
  const std::string& name = node_.input(slot);
  const auto it = state_.activations.find(name);
  if (it != state_.activations.end()) return it->second;
  if (state_.params.count(name)) {
    fail("input " + std::to_string(slot) + " '" + clipped(name) +
         "' is a constant: expected the output of a layer (constant operands are not supported)");
  }
  fail("input " + std::to_string(slot) + " '" + clipped(name) + "' is not produced by an earlier node");
}

const Activation* NodeContext::pending_sigmoid(int slot) const {
  if (!has_input(slot)) return nullptr;
  const auto it = state_.pending_sigmoids.find(node_.input(slot));
  return it == state_.pending_sigmoids.end() ? nullptr : &it->second;
}

void NodeContext::take_pending_sigmoid(int slot) { state_.pending_sigmoids.erase(node_.input(slot)); }

void NodeContext::defer_sigmoid(const Activation& input) { state_.pending_sigmoids[node_.output(0)] = input; }

const std::vector<const onnx::NodeProto*>& NodeContext::readers(const std::string& name) const {
  static const std::vector<const onnx::NodeProto*> kNone;
  const auto it = state_.readers.find(name);
  return it == state_.readers.end() ? kNone : it->second;
}

std::vector<int64_t> NodeContext::int64_values(const Param& p) const {
  if (!p.data || p.data->data_type() != onnx::TensorProto::INT64) {
    fail("'" + clipped(p.name) + "' is not an int64 constant in the file");
  }
  if (!p.data->has_raw_data()) return {p.data->int64_data().begin(), p.data->int64_data().end()};
  const std::string& raw = p.data->raw_data();
  std::vector<int64_t> values(raw.size() / sizeof(int64_t));
  if (values.size() * sizeof(int64_t) != raw.size()) fail("'" + clipped(p.name) + "' has a partial int64 value");
  std::memcpy(values.data(), raw.data(), raw.size());  // little-endian, as ONNX stores it
  return values;
}

const Param& NodeContext::param(int slot) const {
  if (!has_input(slot)) fail("input " + std::to_string(slot) + " is missing");
  const std::string& name = node_.input(slot);
  const auto it = state_.params.find(name);
  if (it == state_.params.end()) {
    fail("input " + std::to_string(slot) + " '" + clipped(name) +
         "' is computed: expected an initializer (weights computed in the graph are not supported)");
  }
  return it->second;
}

void NodeContext::expect_dims(const Param& p, const std::vector<int64_t>& dims) const {
  if (p.dims != dims) {
    fail("initializer '" + clipped(p.name) + "' has shape " + dims_text(p.dims) + ", expected " + dims_text(dims));
  }
}

const onnx::AttributeProto* NodeContext::attribute(const char* name) const {
  for (const onnx::AttributeProto& a : node_.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

bool NodeContext::has_attribute(const char* name) const { return attribute(name) != nullptr; }

int64_t NodeContext::int_attribute(const char* name, int64_t fallback) const {
  const onnx::AttributeProto* a = attribute(name);
  return a ? a->i() : fallback;
}

std::vector<int64_t> NodeContext::ints_attribute(const char* name, std::vector<int64_t> fallback) const {
  const onnx::AttributeProto* a = attribute(name);
  if (!a) return fallback;
  return {a->ints().begin(), a->ints().end()};
}

float NodeContext::float_attribute(const char* name, float fallback) const {
  const onnx::AttributeProto* a = attribute(name);
  return a ? a->f() : fallback;
}

std::string NodeContext::string_attribute(const char* name, const std::string& fallback) const {
  const onnx::AttributeProto* a = attribute(name);
  return a ? a->s() : fallback;
}

std::string NodeContext::layer_name(const Param* weight) const {
  static const std::string kWeight = ".weight";
  if (weight && weight->name.size() > kWeight.size() && weight->name.ends_with(kWeight)) {
    return weight->name.substr(0, weight->name.size() - kWeight.size());
  }
  return node_.name().empty() ? node_.output(0) : node_.name();
}

void NodeContext::bind(const std::string& layer, const char* role, const Param& p, bool transposed) {
  const std::string key = layer + "." + role;
  state_.parameter_sources[key] = p.name;
  if (transposed) state_.transposed_parameters.insert(key);
}

const onnx::NodeProto* NodeContext::sole_consumer() const {
  const onnx::NodeProto* found = nullptr;
  int reads = 0;
  for (const onnx::NodeProto* reader : readers(node_.output(0))) {
    if (reader == nullptr) continue;  // a graph output, not a node
    found = reader;
    ++reads;
  }
  return reads == 1 ? found : nullptr;
}

void NodeContext::absorb(const onnx::NodeProto& consumer, int layer, int rank) {
  state_.activations[consumer.output(0)] = Activation{layer, rank};
  state_.absorbed_outputs.insert(consumer.output(0));
}

bool NodeContext::absorbed() const { return state_.absorbed_outputs.count(node_.output(0)) > 0; }

void NodeContext::produce(int layer, int rank) { state_.activations[node_.output(0)] = Activation{layer, rank}; }

void NodeContext::alias(const Activation& a) { state_.activations[node_.output(0)] = a; }

void NodeContext::constant(const onnx::TensorProto& value) {
  state_.params[node_.output(0)] = Param{node_.output(0), {value.dims().begin(), value.dims().end()}, &value};
}

void NodeContext::constant(const Param& p) { state_.params[node_.output(0)] = p; }

const std::vector<int64_t>* NodeContext::shape_value(int slot) const {
  if (!has_input(slot)) return nullptr;
  const std::string& name = node_.input(slot);
  if (const auto it = state_.shape_values.find(name); it != state_.shape_values.end()) return &it->second;
  const Param* p = constant_named(name);
  if (!p || !p->data || p->data->data_type() != onnx::TensorProto::INT64 || p->dims.size() > 1) return nullptr;
  // An int64 constant of rank 0 or 1 (a Constant node's -1, Unsqueeze's axes): kept as one.
  return &(state_.shape_values[name] = int64_values(*p));
}

void NodeContext::produce_shape_value(std::vector<int64_t> values) {
  state_.shape_values[node_.output(0)] = std::move(values);
}

namespace {

constexpr int64_t kMaxWindowAttribute = 4096;

// The decimal a float was written as: 0.1F reads as 0.1, not 0.10000000149 (the shortest
// text that reads back as the same float).
double as_written(float v) {
  std::array<char, 32> text{};
  const auto written = std::to_chars(text.data(), text.data() + text.size(), v);
  double out = v;
  std::from_chars(text.data(), written.ptr, out);
  return out;
}

// The value of a one-element float constant (a Clip bound, a Dropout ratio).
double float_scalar(const NodeContext& n, const Param& p) {
  if (!p.data || p.data->data_type() != onnx::TensorProto::FLOAT) {
    n.fail("'" + clipped(p.name) + "' is not a float32 constant in the file");
  }
  float v = 0;
  if (p.data->has_raw_data() && p.data->raw_data().size() == sizeof v) {
    std::memcpy(&v, p.data->raw_data().data(), sizeof v);  // little-endian, as ONNX stores it
  } else if (!p.data->has_raw_data() && p.data->float_data_size() == 1) {
    v = p.data->float_data(0);
  } else {
    n.fail("'" + clipped(p.name) + "' is not a single value");
  }
  return as_written(v);
}

// An attribute of two values (height, width) in 1..4096, or `fallback` when absent.
std::array<int, 2> pair_attribute(const NodeContext& n, const char* name, int64_t minimum, int fallback) {
  const std::vector<int64_t> v = n.ints_attribute(name, {fallback, fallback});
  if (v.size() != 2) n.fail(std::string(name) + " has " + std::to_string(v.size()) + " values: expected 2 (2-D only)");
  for (const int64_t x : v) {
    if (x < minimum || x > kMaxWindowAttribute) {
      n.fail(std::string(name) + " " + std::to_string(x) + ": expected " + std::to_string(minimum) + " to " +
             std::to_string(kMaxWindowAttribute));
    }
  }
  return {static_cast<int>(v[0]), static_cast<int>(v[1])};
}

// kernel_shape (or `kernel` from the weight), strides and pads of Conv and the pools:
// only explicit, symmetric padding and no dilation.
Window window_of(const NodeContext& n, std::array<int, 2> kernel) {
  if (n.string_attribute("auto_pad", "NOTSET") != "NOTSET" && n.string_attribute("auto_pad", "NOTSET") != "VALID") {
    n.fail("auto_pad " + clipped(n.string_attribute("auto_pad", "")) + ": expected NOTSET with explicit pads");
  }
  if (n.has_attribute("kernel_shape")) kernel = pair_attribute(n, "kernel_shape", 1, 1);
  if (pair_attribute(n, "dilations", 1, 1) != std::array<int, 2>{1, 1})
    n.fail("dilations other than 1 are not supported");
  const std::array<int, 2> stride = pair_attribute(n, "strides", 1, 1);
  const std::vector<int64_t> pads = n.ints_attribute("pads", {0, 0, 0, 0});
  if (pads.size() != 4) n.fail("pads has " + std::to_string(pads.size()) + " values: expected 4");
  if (pads[0] != pads[2] || pads[1] != pads[3]) n.fail("asymmetric pads are not supported");
  for (const int64_t p : pads) {
    if (p < 0 || p > kMaxWindowAttribute) n.fail("pad " + std::to_string(p) + ": expected 0 to 4096");
  }
  return Window{kernel[0], kernel[1], stride[0], stride[1], static_cast<int>(pads[0]), static_cast<int>(pads[1])};
}

// ceil_mode 0 or 1 of a pool, into its window.
void read_ceil_mode(const NodeContext& n, Window* w) {
  const int64_t ceil = n.int_attribute("ceil_mode", 0);
  if (ceil != 0 && ceil != 1) n.fail("ceil_mode " + std::to_string(ceil) + ": expected 0 or 1");
  w->ceil_mode = ceil == 1;
}

Activation padded_image(NodeContext& n, int slot) {
  const Activation a = n.padded_activation(slot);
  if (a.rank != 4) n.fail("input " + std::to_string(slot) + " has rank " + std::to_string(a.rank) + ": expected NCHW");
  return a;
}

Activation image(NodeContext& n, int slot) {
  const Activation a = n.activation(slot);
  if (a.rank != 4) n.fail("input " + std::to_string(slot) + " has rank " + std::to_string(a.rank) + ": expected NCHW");
  return a;
}

// The window with a Pad node's zeros added to its own padding.
Window with_padding(const NodeContext& n, const Activation& x, Window w) {
  if (w.pad_h + int64_t{x.pad_h} > kMaxWindowAttribute || w.pad_w + int64_t{x.pad_w} > kMaxWindowAttribute) {
    n.fail("padding above 4096");
  }
  w.pad_h += x.pad_h;
  w.pad_w += x.pad_w;
  return w;
}

// Pad with zeros around height and width, equal on both sides: kept with the activation
// and added to the padding of the Conv or AveragePool that reads it (PyTorch exports a
// padded average pool that counts padding as Pad + AveragePool).
void pad(NodeContext& n) {
  const Activation x = n.padded_activation(0);
  if (n.string_attribute("mode", "constant") != "constant") n.fail("only constant (zero) padding is supported");
  if (n.has_input(2)) {
    if (!n.param(2).data) n.fail("the padding value is not a constant in the file");
    const onnx::TensorProto& v = *n.param(2).data;
    const bool zero =
        v.data_type() == onnx::TensorProto::FLOAT && ((v.float_data_size() == 1 && v.float_data(0) == 0.0F) ||
                                                      (v.has_raw_data() && v.raw_data() == std::string(4, '\0')));
    if (!zero) n.fail("only padding with zeros is supported");
  }
  if (n.has_input(3)) n.fail("the axes input is not supported");
  const std::vector<int64_t> p = n.int64_values(n.param(1));
  if (x.rank != 4 || p.size() != 8) n.fail("expected pads for the 4 dimensions of an NCHW tensor");
  if (p[0] != 0 || p[1] != 0 || p[4] != 0 || p[5] != 0) n.fail("padding of the batch or channels is not supported");
  if (p[2] != p[6] || p[3] != p[7]) n.fail("asymmetric pads are not supported");
  if (p[2] < 0 || p[3] < 0 || p[2] > kMaxWindowAttribute || p[3] > kMaxWindowAttribute) {
    n.fail("pads " + std::to_string(p[2]) + ", " + std::to_string(p[3]) + ": expected 0 to 4096");
  }
  Activation out = x;
  out.pad_h += static_cast<int>(p[2]);
  out.pad_w += static_cast<int>(p[3]);
  if (out.pad_h > kMaxWindowAttribute || out.pad_w > kMaxWindowAttribute) n.fail("padding above 4096");
  n.alias(out);
}

void conv(NodeContext& n) {
  const Activation x = padded_image(n, 0);
  const Param& w = n.param(1);
  if (w.dims.size() != 4)
    n.fail("weight '" + clipped(w.name) + "' has rank " + std::to_string(w.dims.size()) + ": expected 4");
  const int64_t in_channels = n.graph().layer(x.layer).output.c();
  const int64_t out = w.dims[0];
  if (out < 1 || out > (int64_t{1} << 30))
    n.fail("weight '" + clipped(w.name) + "' has " + std::to_string(out) + " filters");
  // Grouped and depthwise convolutions: each of `group` groups maps in/group input
  // channels to out/group output channels.
  const int64_t group = n.int_attribute("group", 1);
  if (group < 1 || in_channels % group != 0 || out % group != 0) {
    n.fail("group " + std::to_string(group) + ": expected a divisor of the input channels (" +
           std::to_string(in_channels) + ") and of the filters (" + std::to_string(out) + ")");
  }
  const Window win =
      with_padding(n, x,
                   window_of(n, {static_cast<int>(std::clamp<int64_t>(w.dims[2], 1, kMaxWindowAttribute)),
                                 static_cast<int>(std::clamp<int64_t>(w.dims[3], 1, kMaxWindowAttribute))}));
  n.expect_dims(w, {out, in_channels / group, win.kernel_h, win.kernel_w});
  const bool bias = n.has_input(2);
  if (bias) n.expect_dims(n.param(2), {out});
  const std::string name = n.layer_name(&w);
  n.produce(n.graph().conv2d(name, x.layer, static_cast<int>(out), win, bias, static_cast<int>(group)), 4);
  n.bind(name, "weight", w);
  if (bias) n.bind(name, "bias", n.param(2));
}

void max_pool(NodeContext& n) {
  const Activation x = image(n, 0);
  if (n.int_attribute("storage_order", 0) != 0) n.fail("storage_order 1 is not supported");
  if (n.node().output_size() > 1 && !n.node().output(1).empty()) n.fail("the Indices output is not supported");
  Window w = window_of(n, {1, 1});
  read_ceil_mode(n, &w);
  n.produce(n.graph().max_pool(n.layer_name(nullptr), x.layer, w), 4);
}

void average_pool(NodeContext& n) {
  const Activation x = padded_image(n, 0);
  Window own = window_of(n, {1, 1});
  read_ceil_mode(n, &own);
  const int64_t include = n.int_attribute("count_include_pad", 0);
  if (include != 0 && include != 1) n.fail("count_include_pad " + std::to_string(include) + ": expected 0 or 1");
  // Without padding of its own the count is the same either way; a Pad node's zeros are
  // input elements, which always count.
  own.count_include_pad = include == 1 || (own.pad_h == 0 && own.pad_w == 0);
  if (!own.count_include_pad && (x.pad_h > 0 || x.pad_w > 0)) {
    n.fail("count_include_pad 0 on a Pad node's output is not supported (the Pad node's zeros would count)");
  }
  // PyTorch exports avg_pool2d(padding=p, ceil_mode=True) counting padding as Pad + a pool
  // without pads: the Pad's zeros are then the window's padding, ceil_mode and all.
  if (own.ceil_mode && (x.pad_h > 0 || x.pad_w > 0) && (own.pad_h > 0 || own.pad_w > 0)) {
    n.fail("ceil_mode 1 with pads of its own on a Pad node's output is not supported");
  }
  const Window w = with_padding(n, x, own);
  // A 1x1 window of stride 1 is an identity: PyTorch writes one for an adaptive pool whose
  // input already has the output's size (AlexNet's and VGG's 6x6 and 7x7).
  if (w.kernel_h == 1 && w.kernel_w == 1 && w.stride_h == 1 && w.stride_w == 1 && w.pad_h == 0 && w.pad_w == 0) {
    n.alias(x);
    return;
  }
  n.produce(n.graph().avg_pool(n.layer_name(nullptr), x.layer, w), 4);
}

void global_average_pool(NodeContext& n) {
  const Activation x = image(n, 0);
  n.produce(n.graph().global_avg_pool(n.layer_name(nullptr), x.layer), 4);
}

// ReduceMean over height and width is global average pooling (torchvision's x.mean([2, 3])):
// keepdims 1 keeps N x C x 1 x 1, keepdims 0 gives N x C. An axis of extent 1 may be
// reduced or not alike. No layer kind takes a mean over other axes.
void reduce_mean(NodeContext& n) {
  const Activation x = n.activation(0);
  const Shape& s = n.graph().layer(x.layer).output;
  const int64_t keepdims = n.int_attribute("keepdims", 1);
  if (keepdims != 0 && keepdims != 1) n.fail("keepdims " + std::to_string(keepdims) + ": expected 0 or 1");
  std::vector<int64_t> axes = n.ints_attribute("axes", {});
  std::array<bool, 4> reduced{};
  std::string text;
  for (int64_t d = 0; axes.empty() && d < x.rank; ++d) reduced[static_cast<size_t>(d)] = true;  // none: all
  for (const int64_t a : axes) {
    if (a < -x.rank || a >= x.rank)
      n.fail("axis " + std::to_string(a) + " of a rank-" + std::to_string(x.rank) + " input");
    reduced[static_cast<size_t>(a < 0 ? a + x.rank : a)] = true;
    text += (text.empty() ? "" : ", ") + std::to_string(a);
  }
  text = axes.empty() ? "all axes" : "axes [" + text + "]";
  const bool plane =
      x.rank == 4 && !reduced[0] && !reduced[1] && (reduced[2] || s.h() == 1) && (reduced[3] || s.w() == 1);
  if (!plane) {
    n.fail("mean over " + text + " of a " + s.str() +
           " input: only the mean over height and width (axes 2, 3: global average pooling) is supported");
  }
  if (keepdims == 0 && !(reduced[2] && reduced[3])) {
    n.fail("mean over " + text + " with keepdims 0: expected axes 2 and 3 (the result N x C)");
  }
  n.produce(n.graph().global_avg_pool(n.layer_name(nullptr), x.layer), keepdims == 1 ? 4 : 2);
}

// A fully connected layer y = x·M (+ b) of the NC input `x`, where M is `w` (2-D) or, when
// `w_is_out_in`, wᵀ: PyTorch's weight is [out_features, in_features], so a weight
// given as [in, out] is bound transposed (undoing a Transpose node's transposition).
int fully_connected_layer(NodeContext& n, const Activation& x, const Param& w, bool w_is_out_in, const Param* bias) {
  if (x.rank != 2) n.fail("input 0 has rank " + std::to_string(x.rank) + ": expected 2 (flatten first)");
  const size_t out_axis = w_is_out_in ? 0 : 1;
  if (w.dims.size() != 2 || w.dims[out_axis] < 1 || w.dims[out_axis] > (int64_t{1} << 30)) {
    n.fail("weight '" + clipped(w.name) + "' has shape " + dims_text(w.dims) + ": expected " +
           (w_is_out_in ? "[out_features, in_features]" : "[in_features, out_features]"));
  }
  const int64_t out = w.dims[out_axis];
  const int64_t in = n.graph().layer(x.layer).output.c();
  n.expect_dims(w, w_is_out_in ? std::vector<int64_t>{out, in} : std::vector<int64_t>{in, out});
  if (bias) n.expect_dims(*bias, {out});
  const std::string name = n.layer_name(&w);
  const int layer = n.graph().fully_connected(name, x.layer, static_cast<int>(out), bias != nullptr);
  n.bind(name, "weight", w, w_is_out_in == w.transposed);
  if (bias) n.bind(name, "bias", *bias);
  return layer;
}

// Gemm as a fully connected layer: y = x·Bᵀ + C (transB 1, as torch.nn.Linear exports it)
// or x·B + C (transB 0).
void gemm(NodeContext& n) {
  const Activation x = n.activation(0);
  const int64_t trans_b = n.int_attribute("transB", 0);
  if (n.int_attribute("transA", 0) != 0 || (trans_b != 0 && trans_b != 1)) {
    n.fail("transA " + std::to_string(n.int_attribute("transA", 0)) + ", transB " + std::to_string(trans_b) +
           ": expected transA 0 and transB 0 or 1");
  }
  const float alpha = n.float_attribute("alpha", 1.0F), beta = n.float_attribute("beta", 1.0F);
  if (alpha != 1.0F || beta != 1.0F) {
    std::array<char, 64> text{};
    std::snprintf(text.data(), text.size(), "alpha %g, beta %g", static_cast<double>(alpha), static_cast<double>(beta));
    n.fail(std::string(text.data()) + ": expected 1 and 1 (scaled products are not supported)");
  }
  n.produce(fully_connected_layer(n, x, n.param(1), trans_b == 1, n.has_input(2) ? &n.param(2) : nullptr), 2);
}

// MatMul by a constant [in, out] matrix (x·W, or x·Transpose(weight) as PyTorch exports a
// Linear without Gemm), with the Add of a bias constant that follows it taken in.
void matmul(NodeContext& n) {
  const Activation x = n.activation(0);
  const Param& w = n.param(1);
  const Param* bias = nullptr;
  const onnx::NodeProto* next = n.sole_consumer();
  if (next && next->op_type() == "Add" && next->input_size() == 2 && next->domain().empty()) {
    const std::string& other = next->input(next->input(0) == n.node().output(0) ? 1 : 0);
    const Param* p = n.constant_named(other);
    if (p && p->dims.size() == 1) bias = p;
  }
  const int layer = fully_connected_layer(n, x, w, false, bias);
  n.produce(layer, 2);
  if (bias) n.absorb(*next, layer, 2);
}

// Transpose of a 2-D constant (PyTorch's export of a Linear's weight.t()): a constant
// whose values are read transposed. Transposing an activation reorders its data: refused.
void transpose(NodeContext& n) {
  if (n.absorbed()) return;  // a channel shuffle's (onnx_channel_ops.h)
  const Param* p = n.has_input(0) ? n.constant_named(n.node().input(0)) : nullptr;
  if (!p) n.fail("input 0 is an activation: a Transpose reorders data, which layerplan cannot train");
  const std::vector<int64_t> perm = n.ints_attribute("perm", {1, 0});
  if (p->dims.size() != 2 || perm != std::vector<int64_t>{1, 0}) {
    n.fail("expected the transpose of a 2-D constant (perm 1, 0), got " + dims_text(p->dims));
  }
  Param t = *p;
  t.dims = {p->dims[1], p->dims[0]};
  t.transposed = !p->transposed;
  n.constant(t);
}

// The shape of an activation, [N, C, H, W] (or [N, C]), N the batch: where PyTorch's
// x.view(x.size(0), -1) starts.
void shape(NodeContext& n) {
  const Activation x = n.activation(0);
  if (n.has_attribute("start") || n.has_attribute("end")) n.fail("start and end are not supported");
  const Shape& s = n.graph().layer(x.layer).output;
  std::vector<int64_t> v = {kBatchDim, s.c()};
  if (x.rank == 4) v.insert(v.end(), {s.h(), s.w()});
  n.produce_shape_value(std::move(v));
}

// Elements of a shape value at constant indices (axis 0).
void gather(NodeContext& n) {
  const std::vector<int64_t>* data = n.shape_value(0);
  if (!data) {
    n.fail("input 0 is not a shape: a Gather is read only in shape arithmetic (x.view(x.size(0), -1))");
  }
  if (n.int_attribute("axis", 0) != 0) n.fail("axis " + std::to_string(n.int_attribute("axis", 0)) + ": expected 0");
  const std::vector<int64_t>& values = *data;  // std::map: shape_value(1) keeps it valid
  const std::vector<int64_t>* indices = n.shape_value(1);
  if (!indices) n.fail("the indices are not an int64 constant");
  std::vector<int64_t> out;
  const auto size = static_cast<int64_t>(values.size());
  for (int64_t i : *indices) {
    if (i < -size || i >= size) n.fail("index " + std::to_string(i) + " of a shape of " + std::to_string(size));
    out.push_back(values[static_cast<size_t>(i < 0 ? i + size : i)]);
  }
  n.produce_shape_value(std::move(out));
}

// Unsqueeze of a shape value or int64 scalar to 1-D (axes 0): the same values.
void unsqueeze(NodeContext& n) {
  const std::vector<int64_t>* data = n.shape_value(0);
  if (!data) n.fail("input 0 is an activation: an Unsqueeze is read only in shape arithmetic");
  const std::vector<int64_t>& values = *data;
  const std::vector<int64_t>* axes = n.has_input(1) ? n.shape_value(1) : nullptr;
  const std::vector<int64_t> axis = axes ? *axes : n.ints_attribute("axes", {});
  if (axis != std::vector<int64_t>{0}) n.fail("expected axes 0 (a scalar to a 1-D shape)");
  n.produce_shape_value(values);
}

// Reshape that only flattens (N, C, H, W) to (N, C*H*W), as x.reshape(-1, c*h*w) or
// x.view(N, -1) with a constant shape exports; any other shape reorders or merges data,
// except the two of a channel shuffle (onnx_channel_ops.h).
void reshape(NodeContext& n) {
  if (channel_shuffle_reshape(n)) return;
  const Activation x = n.activation(0);
  const Shape& s = n.graph().layer(x.layer).output;
  const std::vector<int64_t>* computed = n.shape_value(1);
  if (!computed) {
    n.fail(
        "the shape is computed from tensors other than shapes: expected a constant shape or one computed "
        "from the input's shape (or export torch.flatten(x, 1))");
  }
  const std::vector<int64_t> shape = *computed;
  const int64_t features = s.c() * s.h() * s.w();
  std::string text;
  for (const int64_t d : shape) text += (text.empty() ? "" : ", ") + (d == kBatchDim ? "N" : std::to_string(d));
  // The batch is kept (0, unless allowzero; or the input's own, x.size(0)) or inferred
  // (-1); a fixed one is the file's.
  const bool keeps_batch =
      shape.size() == 2 && ((shape[0] == 0 && n.int_attribute("allowzero", 0) == 0) || shape[0] == kBatchDim);
  const bool flattens =
      shape.size() == 2 && (shape[1] == features || (shape[1] == -1 && keeps_batch)) && (shape[0] != 0 || keeps_batch);
  if (!flattens) {
    n.fail("shape (" + text + ") of a " + s.str() +
           " input: only a flatten to (N, C*H*W) is supported; a Reshape that reorders data cannot be trained");
  }
  if (x.rank == 2) {
    n.alias(x);
    return;
  }
  n.produce(n.graph().flatten(n.layer_name(nullptr), x.layer), 2);
}

void relu(NodeContext& n) {
  const Activation x = n.activation(0);
  n.produce(n.graph().relu(n.layer_name(nullptr), x.layer), x.rank);
}

// Training-mode exports add outputs 1 and 2 (the updated running statistics); they are
// the layer's own state, not tensors of the graph, so they are left unbound. epsilon and
// momentum are the layer's.
void batch_normalization(NodeContext& n) {
  const Activation x = n.activation(0);
  const int64_t c = n.graph().layer(x.layer).output.c();
  const std::array<const char*, 4> roles = {"weight", "bias", "running_mean", "running_var"};
  for (int slot = 1; slot <= 4; ++slot) n.expect_dims(n.param(slot), {c});
  const std::string name = n.layer_name(&n.param(1));
  // ONNX's momentum weighs the running value (PyTorch's momentum 0.1 is written 0.9).
  const double epsilon = as_written(n.float_attribute("epsilon", 1e-5F));
  const double momentum = as_written(static_cast<float>(1.0 - as_written(n.float_attribute("momentum", 0.9F))));
  n.produce(n.graph().batch_norm(name, x.layer, epsilon, momentum), x.rank);
  for (int slot = 1; slot <= 4; ++slot) n.bind(name, roles[static_cast<size_t>(slot - 1)], n.param(slot));
}

// The ratio input (a constant; 0.5 without it). The training_mode input is not read: the
// runtime's dropout drops while training and passes through in evaluation.
void dropout(NodeContext& n) {
  const Activation x = n.activation(0);
  const double ratio = n.has_input(1) ? float_scalar(n, n.param(1)) : kDefaultDropoutRatio;
  n.produce(n.graph().dropout(n.layer_name(nullptr), x.layer, ratio), x.rank);
}

// Clip's min and max inputs (opset 11 on) are constants; a missing one is unbounded.
void clip(NodeContext& n) {
  const Activation x = n.activation(0);
  const double unbounded = std::numeric_limits<float>::max();
  const double lo = n.has_input(1) ? float_scalar(n, n.param(1)) : -unbounded;
  const double hi = n.has_input(2) ? float_scalar(n, n.param(2)) : unbounded;
  n.produce(n.graph().activation(n.layer_name(nullptr), x.layer, ActivationKind::kClip, lo, hi), x.rank);
}

// A Sigmoid whose only reader multiplies it with the sigmoid's input waits for that Mul,
// which makes one silu layer of the pair (see mul).
void sigmoid(NodeContext& n) {
  const Activation x = n.activation(0);
  const auto& readers = n.readers(n.node().output(0));
  if (readers.size() == 1 && readers[0] && readers[0]->op_type() == "Mul" && readers[0]->input_size() == 2) {
    const onnx::NodeProto& m = *readers[0];
    const std::string& other = m.input(0) == n.node().output(0) ? m.input(1) : m.input(0);
    if (other == n.node().input(0)) {
      n.defer_sigmoid(x);
      return;
    }
  }
  n.produce(n.graph().activation(n.layer_name(nullptr), x.layer, ActivationKind::kSigmoid), x.rank);
}

// x * Sigmoid(x) is one silu layer; otherwise an element-wise product of two activations
// of the same shape, or of one and an (N, C, 1, 1) scale (squeeze-and-excitation), in
// either order.
void mul(NodeContext& n) {
  if (shape_arithmetic(n)) return;
  for (int slot = 0; slot < 2; ++slot) {
    if (const Activation* x = n.pending_sigmoid(slot)) {
      const Activation in = *x;
      n.take_pending_sigmoid(slot);
      n.produce(n.graph().activation(n.layer_name(nullptr), in.layer, ActivationKind::kSilu), in.rank);
      return;
    }
  }
  Activation a = n.activation(0);
  Activation b = n.activation(1);
  if (a.rank != b.rank) n.fail("inputs of rank " + std::to_string(a.rank) + " and " + std::to_string(b.rank));
  const Shape& sa = n.graph().layer(a.layer).output;
  const Shape& sb = n.graph().layer(b.layer).output;
  if (sa.h() * sa.w() == 1 && sb.h() * sb.w() > 1) std::swap(a, b);  // the scale second
  n.produce(n.graph().mul(n.layer_name(nullptr), a.layer, b.layer), a.rank);
}

// alpha * x + beta clipped to [0, 1]; ONNX's default alpha is 0.2, PyTorch writes 1/6.
void hard_sigmoid(NodeContext& n) {
  const Activation x = n.activation(0);
  const float alpha = n.float_attribute("alpha", 0.2F);
  // PyTorch's 1/6, rounded to the attribute's float, computes as 1/6 (its definition).
  const double a = alpha == static_cast<float>(kHardSigmoidAlpha) ? kHardSigmoidAlpha : as_written(alpha);
  const double b = as_written(n.float_attribute("beta", 0.5F));
  n.produce(n.graph().activation(n.layer_name(nullptr), x.layer, ActivationKind::kHardSigmoid, a, b), x.rank);
}

void hard_swish(NodeContext& n) {
  const Activation x = n.activation(0);
  n.produce(n.graph().activation(n.layer_name(nullptr), x.layer, ActivationKind::kHardSwish), x.rank);
}

void flatten(NodeContext& n) {
  const Activation x = n.activation(0);
  if (n.int_attribute("axis", 1) != 1) {
    n.fail("axis " + std::to_string(n.int_attribute("axis", 1)) + ": expected 1 (keep the batch dimension)");
  }
  n.produce(n.graph().flatten(n.layer_name(nullptr), x.layer), 2);
}

// Several activations of the same rank.
std::vector<int> operands(const NodeContext& n, int* rank) {
  std::vector<int> ids;
  for (int slot = 0; slot < n.node().input_size(); ++slot) {
    const Activation a = n.activation(slot);
    if (slot > 0 && a.rank != *rank)
      n.fail("inputs of rank " + std::to_string(*rank) + " and " + std::to_string(a.rank));
    *rank = a.rank;
    ids.push_back(a.layer);
  }
  return ids;
}

// Concat of shape values (along their one axis): a shape for a Reshape.
void concat_shapes(NodeContext& n) {
  std::vector<int64_t> out;
  for (int slot = 0; slot < n.node().input_size(); ++slot) {
    const std::vector<int64_t>* v = n.shape_value(slot);
    if (!v) n.fail("input " + std::to_string(slot) + " is not a shape: expected shapes or int64 constants");
    out.insert(out.end(), v->begin(), v->end());
  }
  n.produce_shape_value(std::move(out));
}

void concat(NodeContext& n) {
  if (n.shape_value(0)) {
    concat_shapes(n);
    return;
  }
  int rank = 4;
  std::vector<int> ids = operands(n, &rank);
  const int64_t axis = n.int_attribute("axis", 1);
  if (axis != 1 && axis != 1 - rank) n.fail("axis " + std::to_string(axis) + ": expected the channel axis, 1");
  n.produce(n.graph().concat(n.layer_name(nullptr), std::move(ids)), rank);
}

void add(NodeContext& n) {
  if (n.absorbed()) return;  // a MatMul's bias
  if (shape_arithmetic(n)) return;
  int rank = 4;
  std::vector<int> ids = operands(n, &rank);
  n.produce(n.graph().add(n.layer_name(nullptr), std::move(ids)), rank);
}

// Softmax or LogSoftmax over the classes ends the model: layerplan's loss layer.
void softmax(NodeContext& n) {
  const Activation x = n.activation(0);
  const int64_t axis = n.int_attribute("axis", -1);
  if (x.rank != 2 || (axis != 1 && axis != -1)) n.fail("expected a softmax over the classes of an NC tensor (axis 1)");
  n.produce(n.graph().softmax_cross_entropy(n.layer_name(nullptr), x.layer), 2);
}

void identity(NodeContext& n) { n.alias(n.activation(0)); }

void constant(NodeContext& n) {
  for (const onnx::AttributeProto& a : n.node().attribute()) {
    if (a.name() == "value" && a.has_t()) {
      n.constant(a.t());
      return;
    }
  }
  n.fail("expected a tensor 'value' attribute");
}

// The one table of operators. Dropout, Identity and Constant keep PyTorch's training-mode
// exports readable; everything else maps to one layer kind (docs/model-format.md).
constexpr std::array<OpEntry, 31> kOps = {{
    {"Add", &add},
    {"AveragePool", &average_pool},
    {"BatchNormalization", &batch_normalization},
    {"Cast", &cast_shape},
    {"Clip", &clip},
    {"Concat", &concat},
    {"Constant", &constant},
    {"Conv", &conv},
    {"Div", &div_shapes},
    {"Dropout", &dropout},
    {"Flatten", &flatten},
    {"Gather", &gather},
    {"Gemm", &gemm},
    {"GlobalAveragePool", &global_average_pool},
    {"HardSigmoid", &hard_sigmoid},
    {"HardSwish", &hard_swish},
    {"Identity", &identity},
    {"LogSoftmax", &softmax},
    {"MatMul", &matmul},
    {"MaxPool", &max_pool},
    {"Mul", &mul},
    {"Pad", &pad},
    {"ReduceMean", &reduce_mean},
    {"Relu", &relu},
    {"Reshape", &reshape},
    {"Shape", &shape},
    {"Sigmoid", &sigmoid},
    {"Slice", &slice_channels},
    {"Softmax", &softmax},
    {"Transpose", &transpose},
    {"Unsqueeze", &unsqueeze},
}};

}  // namespace

const OpEntry* find_op(std::string_view op_type) {
  for (const OpEntry& e : kOps) {
    if (e.op_type == op_type) return &e;
  }
  return nullptr;
}

std::string supported_ops() {
  std::string out;
  for (const OpEntry& e : kOps) out += (out.empty() ? "" : ", ") + std::string(e.op_type);
  return out;
}

}  // namespace layerplan::onnx_import
