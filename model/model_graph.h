#pragma once
// The computation graph of a CNN: a DAG of layers with NCHW output shapes. Layers are
// appended in topological order (every input id is smaller than the layer's own id),
// and each builder method infers the output shape from its inputs.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace layerplan {

// The four dimensions of an activation tensor, in NCHW order.
enum class Dim : int { kN = 0, kC = 1, kH = 2, kW = 3 };
inline constexpr int kNumDims = 4;
inline constexpr std::array<char, kNumDims> kDimLetters = {'n', 'c', 'h', 'w'};

// Extents of an NCHW tensor. Fully-connected outputs are (n, features, 1, 1).
struct Shape {
  std::array<int64_t, kNumDims> extent{1, 1, 1, 1};

  int64_t n() const { return extent[0]; }
  int64_t c() const { return extent[1]; }
  int64_t h() const { return extent[2]; }
  int64_t w() const { return extent[3]; }
  int64_t operator[](int d) const { return extent[d]; }
  int64_t elements() const { return extent[0] * extent[1] * extent[2] * extent[3]; }
  std::string str() const;  // "64x3x224x224"
  bool operator==(const Shape&) const = default;
};

enum class LayerKind {
  kInput,
  kConv2d,
  kMaxPool,
  kAvgPool,
  kGlobalAvgPool,
  kFullyConnected,
  kRelu,
  kBatchNorm,
  kConcat,
  kAdd,
  kFlatten,
  kDropout,
  kSoftmaxCrossEntropy,
  kActivation,  // an element-wise function of one input (Layer::activation says which)
  kMul,         // element-wise product of two inputs; the second may be (n, c, 1, 1)
  // Channel permutations and selections, pure copies (docs/kernels.md):
  kChannelShuffle,  // ShuffleNet's: output channel c is input channel (c % groups) * (C / groups) + c / groups
  kChannelSlice,    // output channels are input channels [first_channel, first_channel + C_out)
};
std::string_view kind_name(LayerKind kind);

// The functions of an activation layer, PyTorch's definitions (docs/kernels.md):
//   clip         min(max(x, alpha), beta)            (ReLU6: alpha 0, beta 6)
//   sigmoid      1 / (1 + exp(-x))
//   silu         x * sigmoid(x)                      (Swish)
//   hardsigmoid  min(max(alpha * x + beta, 0), 1)    (PyTorch's: alpha 1/6, beta 1/2)
//   hardswish    x * min(max(x + 3, 0), 6) / 6
//   gelu         x * Φ(x) = x/2 * (1 + erf(x/√2)), or with approximate 'tanh'
//                x/2 * (1 + tanh(√(2/π) * (x + 0.044715 x³)))  (Layer::gelu_approximation)
enum class ActivationKind { kClip, kSigmoid, kSilu, kHardSigmoid, kHardSwish, kGelu };
// "clip", "sigmoid", "silu", "hardsigmoid", "hardswish", "gelu": the JSON kind of the layer.
std::string_view activation_name(ActivationKind activation);

// torch.nn.GELU(approximate=...): 'none' (the exact erf form) or 'tanh'.
enum class GeluApproximation { kNone, kTanh };
// "none", "tanh": the JSON field approximate of a gelu layer, as PyTorch spells it.
std::string_view gelu_approximation_name(GeluApproximation approximation);

// PyTorch's defaults: BatchNorm2d(eps=1e-5, momentum=0.1), Dropout(p=0.5), Hardsigmoid.
inline constexpr double kDefaultBatchNormEpsilon = 1e-5;
inline constexpr double kDefaultBatchNormMomentum = 0.1;
inline constexpr double kDefaultDropoutRatio = 0.5;
inline constexpr double kHardSigmoidAlpha = 1.0 / 6.0;
inline constexpr double kHardSigmoidBeta = 0.5;

// Sliding window of a convolution or pooling layer (kernel, stride, zero padding).
struct Window {
  int kernel_h = 1, kernel_w = 1;
  int stride_h = 1, stride_w = 1;
  int pad_h = 0, pad_w = 0;
  // Pooling only, as torch.nn.MaxPool2d/AvgPool2d: ceil_mode rounds the output size up
  // (the last window must start inside the input or its left padding; its overhang past
  // the padded input reads padding); count_include_pad=false divides an average by the
  // real input elements of its window only.
  bool ceil_mode = false;
  bool count_include_pad = true;

  static Window square(int kernel, int stride = 1, int pad = 0) { return {kernel, kernel, stride, stride, pad, pad}; }
};

struct Layer {
  int id = -1;
  std::string name;
  LayerKind kind = LayerKind::kInput;
  std::vector<int> inputs;  // ids of producer layers, in argument order
  Shape output;
  Window window;          // conv and pooling only
  bool has_bias = false;  // conv and fully-connected only
  // Grouped convolution (conv only): input and output channels fall into `groups` equal
  // groups, and each output channel reads only its group's input channels (depthwise:
  // groups == input channels). Weight shape (out, in/groups, kh, kw), as PyTorch's.
  // Channel shuffle: the groups the channels are dealt from, as PyTorch's
  // x.view(n, groups, C / groups, h, w).transpose(1, 2).reshape(n, C, h, w).
  int groups = 1;
  int64_t first_channel = 0;  // channel slice only: the input channel of output channel 0
  // kActivation only: the function and its two constants (clip: min, max; hardsigmoid:
  // alpha, beta; unused otherwise).
  ActivationKind activation = ActivationKind::kClip;
  double alpha = 0, beta = 0;
  GeluApproximation gelu_approximation = GeluApproximation::kNone;  // gelu only
  double epsilon = kDefaultBatchNormEpsilon;                        // batch norm only
  double momentum = kDefaultBatchNormMomentum;                      // batch norm only: running statistics
  double dropout_ratio = kDefaultDropoutRatio;                      // dropout only: probability of dropping
};

// The file a model was read from, as a plan file records it (docs/plan-format.md, "The
// model of a plan"). A built-in model has none.
struct ModelFileOrigin {
  std::string path;    // absolute, as named: `.` and `..` resolved, symlinks kept
  int64_t size = 0;    // bytes
  std::string sha256;  // of those bytes, 64 lowercase hex digits
};

class ModelGraph {
 public:
  explicit ModelGraph(std::string name) : name_(std::move(name)) {}

  int input(std::string name, Shape shape);
  // groups must divide both the input and the output channels.
  int conv2d(std::string name, int in, int out_channels, Window window, bool bias, int groups = 1);
  int max_pool(std::string name, int in, Window window);
  int avg_pool(std::string name, int in, Window window);
  int global_avg_pool(std::string name, int in);
  int fully_connected(std::string name, int in, int out_features, bool bias = true);
  int relu(std::string name, int in);
  int batch_norm(std::string name, int in, double epsilon = kDefaultBatchNormEpsilon,
                 double momentum = kDefaultBatchNormMomentum);
  int dropout(std::string name, int in, double ratio = kDefaultDropoutRatio);
  // An element-wise activation; alpha and beta as Layer says (checked: clip needs
  // alpha <= beta, every constant must be finite).
  int activation(std::string name, int in, ActivationKind activation, double alpha = 0, double beta = 0);
  int gelu(std::string name, int in, GeluApproximation approximation);
  // in * scale, where scale has in's shape or is (n, c, 1, 1) (broadcast over h and w).
  int mul(std::string name, int in, int scale);
  int flatten(std::string name, int in);
  // ShuffleNet's channel shuffle; groups >= 2 must divide the input's channels.
  int channel_shuffle(std::string name, int in, int groups);
  // Input channels [first, first + channels), which must lie inside the input's (PyTorch's
  // x[:, first:first + channels], x.chunk and x.split along channels).
  int channel_slice(std::string name, int in, int64_t first, int64_t channels);
  int concat(std::string name, std::vector<int> ins);  // along channels
  int add(std::string name, std::vector<int> ins);
  int softmax_cross_entropy(std::string name, int in);

  const std::string& name() const { return name_; }
  // The file the model was read from (set by resolve_model(), model/model_file.h); nullopt
  // for a built-in model, or one built from bytes.
  const std::optional<ModelFileOrigin>& file() const { return file_; }
  void set_file(ModelFileOrigin file) { file_ = std::move(file); }
  int size() const { return static_cast<int>(layers_.size()); }
  const Layer& layer(int id) const { return layers_.at(static_cast<size_t>(id)); }
  const std::vector<Layer>& layers() const { return layers_; }
  const Shape& input_shape(const Layer& consumer, int slot) const {
    return layer(consumer.inputs.at(static_cast<size_t>(slot))).output;
  }
  // Channels of the inputs before `slot`: where that input starts in a concat's output
  // (0 for other kinds). Kept per layer, so that it costs nothing per call.
  int64_t channel_offset(const Layer& consumer, int slot) const {
    const std::vector<int64_t>& offsets = channel_offsets_.at(static_cast<size_t>(consumer.id));
    return offsets.empty() ? 0 : offsets.at(static_cast<size_t>(slot));
  }
  // Ids of the layers that read `id`'s output, ascending.
  const std::vector<int>& consumers(int id) const { return consumers_.at(static_cast<size_t>(id)); }

 private:
  int append(Layer layer);
  int windowed(std::string name, LayerKind kind, int in, int64_t out_channels, Window window, bool bias,
               int groups = 1);

  std::string name_;
  std::optional<ModelFileOrigin> file_;
  std::vector<Layer> layers_;
  std::vector<std::vector<int>> consumers_;
  std::vector<std::vector<int64_t>> channel_offsets_;  // [layer][slot], concat only
  std::unordered_set<std::string> names_;
};

}  // namespace layerplan
