#include "model/model_graph.h"

#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "common/limits.h"
#include "model/layer_math.h"

namespace layerplan {

std::string Shape::str() const {
  return std::to_string(extent[0]) + "x" + std::to_string(extent[1]) + "x" + std::to_string(extent[2]) + "x" +
         std::to_string(extent[3]);
}

std::string_view kind_name(LayerKind kind) {
  switch (kind) {
    case LayerKind::kInput:
      return "input";
    case LayerKind::kConv2d:
      return "conv2d";
    case LayerKind::kMaxPool:
      return "max_pool";
    case LayerKind::kAvgPool:
      return "avg_pool";
    case LayerKind::kGlobalAvgPool:
      return "global_avg_pool";
    case LayerKind::kFullyConnected:
      return "fully_connected";
    case LayerKind::kRelu:
      return "relu";
    case LayerKind::kBatchNorm:
      return "batch_norm";
    case LayerKind::kConcat:
      return "concat";
    case LayerKind::kAdd:
      return "add";
    case LayerKind::kFlatten:
      return "flatten";
    case LayerKind::kDropout:
      return "dropout";
    case LayerKind::kSoftmaxCrossEntropy:
      return "softmax_cross_entropy";
    case LayerKind::kActivation:
      return "activation";
    case LayerKind::kMul:
      return "mul";
    case LayerKind::kChannelShuffle:
      return "channel_shuffle";
    case LayerKind::kChannelSlice:
      return "channel_slice";
  }
  return "unknown";
}

std::string_view activation_name(ActivationKind activation) {
  switch (activation) {
    case ActivationKind::kClip:
      return "clip";
    case ActivationKind::kSigmoid:
      return "sigmoid";
    case ActivationKind::kSilu:
      return "silu";
    case ActivationKind::kHardSigmoid:
      return "hardsigmoid";
    case ActivationKind::kHardSwish:
      return "hardswish";
    case ActivationKind::kGelu:
      return "gelu";
  }
  return "unknown";
}

std::string_view gelu_approximation_name(GeluApproximation approximation) {
  return approximation == GeluApproximation::kTanh ? "tanh" : "none";
}

namespace {

int64_t window_extent(int64_t in, int kernel, int stride, int pad, bool ceil_mode, const std::string& layer) {
  if (kernel <= 0 || stride <= 0 || pad < 0 || in + 2 * int64_t{pad} < kernel) {
    throw std::invalid_argument("layer " + layer + ": window " + std::to_string(kernel) + "/" + std::to_string(stride) +
                                "/" + std::to_string(pad) + " does not fit an input extent of " + std::to_string(in));
  }
  if (!ceil_mode) return (in + 2 * int64_t{pad} - kernel) / stride + 1;
  // PyTorch's pooling_output_shape: round up, but the last window must start inside the
  // input or its left padding.
  int64_t out = (in + 2 * int64_t{pad} - kernel + stride - 1) / stride + 1;
  if ((out - 1) * stride >= in + pad) --out;
  return out;
}

// Pools whose windows PyTorch guarantees to read some input (padding at most half the
// kernel): ceil_mode's overhang and an average that leaves padding out of its count
// (which would divide by zero) need it.
void check_pool_padding(const Window& w, const std::string& layer) {
  if (!w.ceil_mode && w.count_include_pad) return;
  if (2 * w.pad_h > w.kernel_h || 2 * w.pad_w > w.kernel_w) {
    throw std::invalid_argument("layer " + layer + ": padding " + std::to_string(w.pad_h) + "x" +
                                std::to_string(w.pad_w) + " is more than half the kernel " +
                                std::to_string(w.kernel_h) + "x" + std::to_string(w.kernel_w) +
                                ": expected at most half with ceil_mode or count_include_pad false");
  }
}

}  // namespace

int ModelGraph::append(Layer layer) {
  layer.id = size();
  if (layer.id >= kMaxLayers) {
    throw std::invalid_argument("model " + name_ + " has more than " + std::to_string(kMaxLayers) +
                                " layers, the limit");
  }
  if (static_cast<int64_t>(layer.inputs.size()) > kMaxLayerInputs) {
    throw std::invalid_argument("layer " + layer.name + " has " + std::to_string(layer.inputs.size()) +
                                " inputs, more than " + std::to_string(kMaxLayerInputs) + ", the limit");
  }
  for (int in : layer.inputs) {
    if (in < 0 || in >= layer.id) {
      throw std::invalid_argument("layer " + layer.name + ": input id " + std::to_string(in) +
                                  " is not an earlier layer");
    }
  }
  // Every size the planner and the runtime compute from the layer must fit in 64 bits.
  if (const std::string problem = layer_size_problem(*this, layer); !problem.empty()) {
    throw std::invalid_argument("layer " + layer.name + ": " + problem);
  }
  // Plan files name layers, so names must tell them apart.
  if (!names_.insert(layer.name).second) {
    throw std::invalid_argument("model " + name_ + " already has a layer named '" + layer.name + "'");
  }
  for (int in : layer.inputs) consumers_[static_cast<size_t>(in)].push_back(layer.id);
  std::vector<int64_t> offsets;
  if (layer.kind == LayerKind::kConcat) {
    int64_t offset = 0;
    for (int in : layer.inputs) {
      offsets.push_back(offset);
      offset += layers_[static_cast<size_t>(in)].output.c();
    }
  }
  channel_offsets_.push_back(std::move(offsets));
  layers_.push_back(std::move(layer));
  consumers_.emplace_back();
  return layers_.back().id;
}

namespace {

// A layer without window or bias (append() gives it its id).
Layer make_layer(std::string name, LayerKind kind, std::vector<int> inputs, const Shape& output) {
  Layer l;
  l.name = std::move(name);
  l.kind = kind;
  l.inputs = std::move(inputs);
  l.output = output;
  return l;
}

}  // namespace

int ModelGraph::input(std::string name, Shape shape) {
  return append(make_layer(std::move(name), LayerKind::kInput, {}, shape));
}

int ModelGraph::windowed(std::string name, LayerKind kind, int in, int64_t out_channels, Window window, bool bias,
                         int groups) {
  const Shape& s = layer(in).output;
  Layer l;
  l.kind = kind;
  l.inputs = {in};
  l.window = window;
  l.has_bias = bias;
  l.groups = groups;
  if (kind == LayerKind::kConv2d && (window.ceil_mode || !window.count_include_pad)) {
    throw std::invalid_argument("layer " + name + ": ceil_mode and count_include_pad are for pooling only");
  }
  if (kind == LayerKind::kMaxPool && !window.count_include_pad) {
    throw std::invalid_argument("layer " + name + ": count_include_pad is for average pooling only");
  }
  check_pool_padding(window, name);
  l.output = {{s.n(), out_channels,
               window_extent(s.h(), window.kernel_h, window.stride_h, window.pad_h, window.ceil_mode, name),
               window_extent(s.w(), window.kernel_w, window.stride_w, window.pad_w, window.ceil_mode, name)}};
  l.name = std::move(name);
  return append(std::move(l));
}

int ModelGraph::conv2d(std::string name, int in, int out_channels, Window window, bool bias, int groups) {
  const int64_t in_channels = layer(in).output.c();
  if (groups < 1 || in_channels % groups != 0 || out_channels % groups != 0) {
    throw std::invalid_argument("conv2d " + name + ": groups " + std::to_string(groups) + " must be >= 1 and divide " +
                                "its input channels (" + std::to_string(in_channels) + ") and output channels (" +
                                std::to_string(out_channels) + ")");
  }
  return windowed(std::move(name), LayerKind::kConv2d, in, out_channels, window, bias, groups);
}

int ModelGraph::max_pool(std::string name, int in, Window window) {
  const int64_t c = layer(in).output.c();
  return windowed(std::move(name), LayerKind::kMaxPool, in, c, window, false);
}

int ModelGraph::avg_pool(std::string name, int in, Window window) {
  const int64_t c = layer(in).output.c();
  return windowed(std::move(name), LayerKind::kAvgPool, in, c, window, false);
}

int ModelGraph::global_avg_pool(std::string name, int in) {
  const Shape& s = layer(in).output;
  Layer l = make_layer(std::move(name), LayerKind::kGlobalAvgPool, {in}, Shape{{s.n(), s.c(), 1, 1}});
  l.window = {static_cast<int>(s.h()), static_cast<int>(s.w()), 1, 1, 0, 0};
  return append(std::move(l));
}

int ModelGraph::fully_connected(std::string name, int in, int out_features, bool bias) {
  const Shape& s = layer(in).output;
  Layer l = make_layer(std::move(name), LayerKind::kFullyConnected, {in}, Shape{{s.n(), out_features, 1, 1}});
  l.has_bias = bias;
  return append(std::move(l));
}

int ModelGraph::relu(std::string name, int in) {
  return append(make_layer(std::move(name), LayerKind::kRelu, {in}, layer(in).output));
}
namespace {

// The shortest text that reads back as `v` ("6", "1e-40", "0.1").
std::string number_text(double v) {
  std::array<char, 32> text{};
  return {text.data(), std::to_chars(text.data(), text.data() + text.size(), v).ptr};
}

// "layer NAME: WHAT VALUE: expected RANGE" unless lo <= value <= hi (hi_open: value < hi).
void check_range(const std::string& layer, const char* what, double value, double lo, double hi, bool hi_open,
                 const char* expected) {
  if (!std::isfinite(value) || value < lo || value > hi || (hi_open && value == hi)) {
    throw std::invalid_argument("layer " + layer + ": " + what + " " + number_text(value) + ": expected " + expected);
  }
}

}  // namespace

int ModelGraph::batch_norm(std::string name, int in, double epsilon, double momentum) {
  check_range(name, "epsilon", epsilon, 1e-30, 1.0, false, "a positive number up to 1");
  check_range(name, "momentum", momentum, 0.0, 1.0, false, "0 to 1");
  Layer l = make_layer(std::move(name), LayerKind::kBatchNorm, {in}, layer(in).output);
  l.epsilon = epsilon;
  l.momentum = momentum;
  return append(std::move(l));
}
int ModelGraph::dropout(std::string name, int in, double ratio) {
  check_range(name, "ratio", ratio, 0.0, 1.0, true, "0 to less than 1");
  Layer l = make_layer(std::move(name), LayerKind::kDropout, {in}, layer(in).output);
  l.dropout_ratio = ratio;
  return append(std::move(l));
}

int ModelGraph::activation(std::string name, int in, ActivationKind activation, double alpha, double beta) {
  const double kHuge = std::numeric_limits<float>::max();  // constants are finite and fit a float
  check_range(name, "alpha", alpha, -kHuge, kHuge, false, "a finite number");
  check_range(name, "beta", beta, -kHuge, kHuge, false, "a finite number");
  if (activation == ActivationKind::kClip && alpha > beta) {
    throw std::invalid_argument("layer " + name + ": clip min " + number_text(alpha) + " above max " +
                                number_text(beta));
  }
  const bool has_constants = activation == ActivationKind::kClip || activation == ActivationKind::kHardSigmoid;
  Layer l = make_layer(std::move(name), LayerKind::kActivation, {in}, layer(in).output);
  l.activation = activation;
  l.alpha = has_constants ? alpha : 0;
  l.beta = has_constants ? beta : 0;
  return append(std::move(l));
}

int ModelGraph::gelu(std::string name, int in, GeluApproximation approximation) {
  Layer l = make_layer(std::move(name), LayerKind::kActivation, {in}, layer(in).output);
  l.activation = ActivationKind::kGelu;
  l.gelu_approximation = approximation;
  return append(std::move(l));
}

int ModelGraph::mul(std::string name, int in, int scale) {
  const Shape& x = layer(in).output;
  const Shape& s = layer(scale).output;
  const bool broadcast = s.n() == x.n() && s.c() == x.c() && s.h() == 1 && s.w() == 1;
  if (s != x && !broadcast) {
    throw std::invalid_argument("mul " + name + ": input " + layer(scale).name + " is " + s.str() + ", expected " +
                                x.str() + " or " + Shape{{x.n(), x.c(), 1, 1}}.str());
  }
  return append(make_layer(std::move(name), LayerKind::kMul, {in, scale}, x));
}
int ModelGraph::softmax_cross_entropy(std::string name, int in) {
  return append(make_layer(std::move(name), LayerKind::kSoftmaxCrossEntropy, {in}, layer(in).output));
}

int ModelGraph::flatten(std::string name, int in) {
  const Shape& s = layer(in).output;
  return append(make_layer(std::move(name), LayerKind::kFlatten, {in}, Shape{{s.n(), s.c() * s.h() * s.w(), 1, 1}}));
}

int ModelGraph::channel_shuffle(std::string name, int in, int groups) {
  const Shape& s = layer(in).output;
  if (groups < 2 || s.c() % groups != 0) {
    throw std::invalid_argument("channel_shuffle " + name + ": groups " + std::to_string(groups) +
                                " must be >= 2 and divide its input channels (" + std::to_string(s.c()) + ")");
  }
  Layer l = make_layer(std::move(name), LayerKind::kChannelShuffle, {in}, s);
  l.groups = groups;
  return append(std::move(l));
}

int ModelGraph::channel_slice(std::string name, int in, int64_t first, int64_t channels) {
  const Shape& s = layer(in).output;
  if (first < 0 || channels < 1 || first >= s.c() || channels > s.c() - first) {
    throw std::invalid_argument("channel_slice " + name + ": channels [" + std::to_string(first) + ", " +
                                std::to_string(first) + " + " + std::to_string(channels) +
                                ") must be a non-empty range inside its input's " + std::to_string(s.c()));
  }
  Layer l = make_layer(std::move(name), LayerKind::kChannelSlice, {in}, Shape{{s.n(), channels, s.h(), s.w()}});
  l.first_channel = first;
  return append(std::move(l));
}

int ModelGraph::concat(std::string name, std::vector<int> ins) {
  if (ins.empty()) throw std::invalid_argument("concat " + name + " has no inputs");
  Shape out = layer(ins.at(0)).output;
  out.extent[1] = 0;
  for (int in : ins) {
    const Shape& s = layer(in).output;
    if (s.n() != out.n() || s.h() != out.h() || s.w() != out.w()) {
      throw std::invalid_argument("concat " + name + ": input " + layer(in).name + " is " + s.str() +
                                  ", other inputs are " + out.str());
    }
    out.extent[1] += s.c();
  }
  return append(make_layer(std::move(name), LayerKind::kConcat, std::move(ins), out));
}

int ModelGraph::add(std::string name, std::vector<int> ins) {
  if (ins.size() < 2) throw std::invalid_argument("add " + name + " needs two inputs");
  const Shape out = layer(ins.at(0)).output;
  for (int in : ins) {
    if (layer(in).output != out) {
      throw std::invalid_argument("add " + name + ": input " + layer(in).name + " is " + layer(in).output.str() +
                                  ", expected " + out.str());
    }
  }
  return append(make_layer(std::move(name), LayerKind::kAdd, std::move(ins), out));
}

}  // namespace layerplan
