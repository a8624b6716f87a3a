// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
#include "runtime/gpu/gpu_conv.h"

#include <stdexcept>
#include <string>

#include "runtime/gpu/cuda_check.h"
#include "runtime/gpu/padded_tile.h"

// cuDNN 9 marks the legacy convolution API deprecated (it still ships and works; the graph
// API is the replacement, docs/gpu-backend.md says why this one first).
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace layerplan::gpu {

// Workspace the algorithm search and the calls may use.
constexpr size_t kWorkspaceBytes = size_t{256} << 20;

namespace {

// The cuDNN group count of a tile of a grouped convolution: the whole groups it holds, or 1
// for channels inside one group (its filter then reads that group's input channels).
int64_t tile_groups(const Layer& layer, const Interval& channels) {
  if (layer.groups <= 1) return 1;
  const int64_t per = layer.output.c() / layer.groups;
  if (channels.lo % per == 0 && channels.hi % per == 0) return channels.size() / per;
  if (channels.lo / per == (channels.hi - 1) / per) return 1;
  throw std::logic_error("GPU conv: a tile that starts or ends inside a group of " + layer.name +
                         " and spans more than one group is not supported");
}

}  // namespace

struct GpuConv::Descs {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  Dims4 padded{}, x_at{}, out{};
  Key key{};

  Descs(const GpuContext& ctx, const LayerRef& l, const Box& in_box, const Box& out_box) {
    const Window& win = l.layer.window;
    const PaddedTile tile = padded_tile(win, out_box, in_box);
    padded = tile.extents;
    x_at = tile.at;
    out = extents(out_box);
    check(cudnnCreateTensorDescriptor(&x), "cudnnCreateTensorDescriptor");
    check(cudnnCreateTensorDescriptor(&y), "cudnnCreateTensorDescriptor");
    check(cudnnCreateTensorDescriptor(&bias), "cudnnCreateTensorDescriptor");
    check(cudnnCreateFilterDescriptor(&w), "cudnnCreateFilterDescriptor");
    check(cudnnCreateConvolutionDescriptor(&conv), "cudnnCreateConvolutionDescriptor");
    const auto i = [](int64_t v) { return static_cast<int>(v); };
    check(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, i(padded[0]), i(padded[1]), i(padded[2]),
                                     i(padded[3])),
          "input descriptor");
    check(
        cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, i(out[0]), i(out[1]), i(out[2]), i(out[3])),
        "output descriptor");
    check(cudnnSetTensor4dDescriptor(bias, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, i(out[1]), 1, 1), "bias descriptor");
    const int64_t groups = tile_groups(l.layer, out_box.dim[1]);
    check(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, i(out[1]), i(padded[1] / groups),
                                     win.kernel_h, win.kernel_w),
          "filter descriptor");
    check(cudnnSetConvolution2dDescriptor(conv, 0, 0, win.stride_h, win.stride_w, 1, 1, CUDNN_CROSS_CORRELATION,
                                          CUDNN_DATA_FLOAT),
          "convolution descriptor");
    check(cudnnSetConvolutionGroupCount(conv, i(groups)), "cudnnSetConvolutionGroupCount");
    check(cudnnSetConvolutionMathType(conv, ctx.conv_math()), "cudnnSetConvolutionMathType");
    int n = 0, c = 0, h = 0, wd = 0;
    check(cudnnGetConvolution2dForwardOutputDim(conv, x, w, &n, &c, &h, &wd), "output size");
    if (Dims4{n, c, h, wd} != out) throw std::logic_error("GPU conv: the padded tile does not give its output box");
    key = {0,      padded[0],    padded[1],    padded[2],    padded[3],
           out[1], win.kernel_h, win.kernel_w, win.stride_h, win.stride_w,
           groups};
  }
  ~Descs() {
    cudnnDestroyConvolutionDescriptor(conv);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyTensorDescriptor(bias);
    cudnnDestroyTensorDescriptor(y);
    cudnnDestroyTensorDescriptor(x);
  }
  Descs(const Descs&) = delete;
  Descs& operator=(const Descs&) = delete;
};

namespace {

// The first (fastest) of cuDNN's measured algorithms that succeeded, fits the workspace and,
// in fp32, runs without TF32.
template <typename Perf>
int chosen(const Perf* results, int count, cudnnMathType_t math, const char* pass) {
  for (int k = 0; k < count; ++k) {
    const Perf& p = results[k];
    if (p.status != CUDNN_STATUS_SUCCESS || p.memory > kWorkspaceBytes) continue;
    if (math == CUDNN_FMA_MATH && p.mathType != CUDNN_FMA_MATH) continue;
    return static_cast<int>(p.algo);
  }
  throw std::runtime_error(std::string("GPU conv: no cuDNN ") + pass + " algorithm for this tile");
}

}  // namespace

int GpuConv::forward_algorithm(const Descs& d, const float* x, const float* w, float* y, void* workspace) {
  Key key = d.key;
  std::get<0>(key) = 0;
  if (const auto it = algorithms_.find(key); it != algorithms_.end()) return it->second;
  cudnnConvolutionFwdAlgoPerf_t results[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int count = 0;
  check(cudnnFindConvolutionForwardAlgorithmEx(ctx_.cudnn(), d.x, x, d.w, w, d.conv, d.y, y,
                                               CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, results, workspace,
                                               kWorkspaceBytes),
        "cudnnFindConvolutionForwardAlgorithmEx");
  return algorithms_[key] = chosen(results, count, ctx_.conv_math(), "forward");
}

int GpuConv::backward_data_algorithm(const Descs& d, const float* w, const float* dy, float* dx, void* workspace) {
  Key key = d.key;
  std::get<0>(key) = 1;
  if (const auto it = algorithms_.find(key); it != algorithms_.end()) return it->second;
  cudnnConvolutionBwdDataAlgoPerf_t results[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  int count = 0;
  check(cudnnFindConvolutionBackwardDataAlgorithmEx(ctx_.cudnn(), d.w, w, d.y, dy, d.conv, d.x, dx,
                                                    CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count, results, workspace,
                                                    kWorkspaceBytes),
        "cudnnFindConvolutionBackwardDataAlgorithmEx");
  return algorithms_[key] = chosen(results, count, ctx_.conv_math(), "backward-data");
}

int GpuConv::backward_filter_algorithm(const Descs& d, const float* x, const float* dy, float* dw, void* workspace) {
  Key key = d.key;
  std::get<0>(key) = 2;
  if (const auto it = algorithms_.find(key); it != algorithms_.end()) return it->second;
  cudnnConvolutionBwdFilterAlgoPerf_t results[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
  int count = 0;
  check(cudnnFindConvolutionBackwardFilterAlgorithmEx(ctx_.cudnn(), d.x, x, d.y, dy, d.conv, d.w, dw,
                                                      CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &count, results,
                                                      workspace, kWorkspaceBytes),
        "cudnnFindConvolutionBackwardFilterAlgorithmEx");
  return algorithms_[key] = chosen(results, count, ctx_.conv_math(), "backward-filter");
}

namespace {

// The tile's input copied into a zeroed buffer of the padded extents.
float* padded_input(GpuContext& ctx, const Tensor& x, const Dims4& padded, const Dims4& at) {
  const float* ux = ctx.upload(x);
  float* xp = ctx.arena().allocate_n<float>(static_cast<size_t>(padded[0] * padded[1] * padded[2] * padded[3]));
  fill(xp, padded[0] * padded[1] * padded[2] * padded[3], 0.0f, ctx.stream());
  const Dims4 ext = extents(x.box());
  copy_box(ux, ext, {0, 0, 0, 0}, xp, padded, at, ext, false, ctx.stream());
  return xp;
}

}  // namespace

Tensor GpuConv::forward(const LayerRef& l, const LayerParams& params, const Tensor& x, const Box& out_box) {
  ctx_.arena().reset();
  const Descs d(ctx_, l, x.box(), out_box);
  const float* xp = padded_input(ctx_, x, d.padded, d.x_at);
  const float* w = ctx_.upload(params.weight);
  float* y = ctx_.arena().allocate_n<float>(static_cast<size_t>(out_box.volume()));
  void* workspace = ctx_.arena().allocate(kWorkspaceBytes);
  const auto algo = static_cast<cudnnConvolutionFwdAlgo_t>(forward_algorithm(d, xp, w, y, workspace));
  const float one = 1.0f, zero = 0.0f;
  check(cudnnConvolutionForward(ctx_.cudnn(), &one, d.x, xp, d.w, w, d.conv, algo, workspace, kWorkspaceBytes, &zero,
                                d.y, y),
        "cudnnConvolutionForward");
  if (!params.bias.empty()) add_channel_bias(y, ctx_.upload(params.bias), d.out, ctx_.stream());
  return ctx_.download(y, out_box);
}

WeightedGrads GpuConv::backward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                const Tensor& grad_output) {
  ctx_.arena().reset();
  const Box& out_box = grad_output.box();
  const Descs d(ctx_, l, x.box(), out_box);
  const float* xp = padded_input(ctx_, x, d.padded, d.x_at);
  const float* w = ctx_.upload(params.weight);
  const float* dy = ctx_.upload(grad_output);
  const int64_t padded_count = d.padded[0] * d.padded[1] * d.padded[2] * d.padded[3];
  float* dxp = ctx_.arena().allocate_n<float>(static_cast<size_t>(padded_count));
  float* dw = ctx_.arena().allocate_n<float>(params.weight.size());
  void* workspace = ctx_.arena().allocate(kWorkspaceBytes);
  const auto data_algo = static_cast<cudnnConvolutionBwdDataAlgo_t>(backward_data_algorithm(d, w, dy, dxp, workspace));
  const auto filter_algo =
      static_cast<cudnnConvolutionBwdFilterAlgo_t>(backward_filter_algorithm(d, xp, dy, dw, workspace));
  const float one = 1.0f, zero = 0.0f;
  check(cudnnConvolutionBackwardData(ctx_.cudnn(), &one, d.w, w, d.y, dy, d.conv, data_algo, workspace, kWorkspaceBytes,
                                     &zero, d.x, dxp),
        "cudnnConvolutionBackwardData");
  check(cudnnConvolutionBackwardFilter(ctx_.cudnn(), &one, d.x, xp, d.y, dy, d.conv, filter_algo, workspace,
                                       kWorkspaceBytes, &zero, d.w, dw),
        "cudnnConvolutionBackwardFilter");
  // The gradient of the tile's own input: the padded buffer without its padding.
  const Dims4 ext = extents(x.box());
  float* dx = ctx_.arena().allocate_n<float>(static_cast<size_t>(x.size()));
  copy_box(dxp, d.padded, d.x_at, dx, ext, {0, 0, 0, 0}, ext, false, ctx_.stream());
  WeightedGrads g;
  g.params.channels = params.channels;
  g.params.row = params.row;
  g.params.eps = params.eps;
  if (!params.bias.empty()) {
    float* db = ctx_.arena().allocate_n<float>(params.bias.size());
    check(cudnnConvolutionBackwardBias(ctx_.cudnn(), &one, d.y, dy, &zero, d.bias, db), "cudnnConvolutionBackwardBias");
    g.params.bias = ctx_.download(db, static_cast<int64_t>(params.bias.size()));
  }
  g.params.weight = ctx_.download(dw, static_cast<int64_t>(params.weight.size()));
  g.input = ctx_.download(dx, x.box());
  return g;
}

}  // namespace layerplan::gpu
