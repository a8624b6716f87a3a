// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
#include "runtime/gpu/gpu_kernels.h"

#include <limits>

#include "runtime/gpu/cuda_check.h"
#include "runtime/gpu/gpu_context.h"
#include "runtime/gpu/gpu_conv.h"
#include "runtime/gpu/gpu_kernels_state.h"
#include "runtime/gpu/padded_tile.h"
#include "runtime/kernels/backend_helpers.h"

// cuDNN 9 marks the legacy pooling API deprecated too (gpu_conv.cc says why it is used).
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace layerplan {

using gpu::check;
using gpu::Dims4;

GpuKernels::GpuKernels(int device, Precision precision, size_t arena_bytes)
    : state_(std::make_unique<State>(device, precision, arena_bytes)) {}

GpuKernels::~GpuKernels() = default;

size_t GpuKernels::peak_device_bytes() const { return state_->ctx.arena().peak(); }

Tensor GpuKernels::do_conv2d_forward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                     const Box& out_box) {
  return state_->conv.forward(l, params, x, out_box);
}

WeightedGrads GpuKernels::do_conv2d_backward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                             const Tensor& grad_output) {
  return state_->conv.backward(l, params, x, grad_output);
}

namespace {

// One cuDNN 4-d float NCHW descriptor.
class TensorDesc {
 public:
  explicit TensorDesc(const Dims4& d) {
    check(cudnnCreateTensorDescriptor(&desc_), "cudnnCreateTensorDescriptor");
    check(cudnnSetTensor4dDescriptor(desc_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, static_cast<int>(d[0]),
                                     static_cast<int>(d[1]), static_cast<int>(d[2]), static_cast<int>(d[3])),
          "cudnnSetTensor4dDescriptor");
  }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(desc_); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
  cudnnTensorDescriptor_t get() const { return desc_; }

 private:
  cudnnTensorDescriptor_t desc_ = nullptr;
};

// A pooling window with padding 0: the padding is in the buffer.
class PoolDesc {
 public:
  PoolDesc(cudnnPoolingMode_t mode, const Window& w) {
    check(cudnnCreatePoolingDescriptor(&desc_), "cudnnCreatePoolingDescriptor");
    check(cudnnSetPooling2dDescriptor(desc_, mode, CUDNN_NOT_PROPAGATE_NAN, w.kernel_h, w.kernel_w, 0, 0, w.stride_h,
                                      w.stride_w),
          "cudnnSetPooling2dDescriptor");
  }
  ~PoolDesc() { cudnnDestroyPoolingDescriptor(desc_); }
  PoolDesc(const PoolDesc&) = delete;
  PoolDesc& operator=(const PoolDesc&) = delete;
  cudnnPoolingDescriptor_t get() const { return desc_; }

 private:
  cudnnPoolingDescriptor_t desc_ = nullptr;
};

// Max pooling pads with -inf (padding never wins, as PyTorch); average pooling with zeros,
// which, divided by kh*kw everywhere, is count_include_pad=True.
Tensor pool_forward(gpu::GpuContext& ctx, cudnnPoolingMode_t mode, float padding, const LayerRef& l, const Tensor& x,
                    const Box& out_box) {
  ctx.arena().reset();
  const gpu::PaddedTile tile = gpu::padded_tile(l.layer.window, out_box, x.box());
  const float* ux = ctx.upload(x);
  float* xp = ctx.arena().allocate_n<float>(static_cast<size_t>(tile.count()));
  gpu::fill(xp, tile.count(), padding, ctx.stream());
  const Dims4 ext = gpu::extents(x.box());
  gpu::copy_box(ux, ext, {0, 0, 0, 0}, xp, tile.extents, tile.at, ext, false, ctx.stream());
  float* y = ctx.arena().allocate_n<float>(static_cast<size_t>(out_box.volume()));
  const TensorDesc xd(tile.extents), yd(gpu::extents(out_box));
  const PoolDesc pd(mode, l.layer.window);
  const float one = 1.0f, zero = 0.0f;
  check(cudnnPoolingForward(ctx.cudnn(), pd.get(), &one, xd.get(), xp, &zero, yd.get(), y), "cudnnPoolingForward");
  return ctx.download(y, out_box);
}

}  // namespace

Tensor GpuKernels::do_max_pool_forward(const LayerRef& l, const Tensor& x, const Box& out_box) {
  return pool_forward(state_->ctx, CUDNN_POOLING_MAX, -std::numeric_limits<float>::infinity(), l, x, out_box);
}

namespace {

// Whether some window of the pool divides by other than kh*kw (count_include_pad false, a
// ceil_mode overhang): its results and gradients are rescaled on the host.
bool rescales(const LayerRef& l) {
  return kernels_internal::avg_pool_divisor_varies(l.layer.window, l.input_shape(0), l.layer.output);
}

}  // namespace

Tensor GpuKernels::do_avg_pool_forward(const LayerRef& l, const Tensor& x, const Box& out_box) {
  Tensor y = pool_forward(state_->ctx, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, 0.0f, l, x, out_box);
  if (rescales(l)) kernels_internal::rescale_avg_pool(l.layer.window, l.input_shape(0), y);
  return y;
}

Tensor GpuKernels::do_avg_pool_backward(const LayerRef& l, const Tensor& grad_output) {
  gpu::GpuContext& ctx = state_->ctx;
  ctx.arena().reset();
  const Box& out_box = grad_output.box();
  const Box in_box = l.required_input(0, out_box);
  const gpu::PaddedTile tile = gpu::padded_tile(l.layer.window, out_box, in_box);
  Tensor scaled;
  if (rescales(l)) {
    scaled = grad_output;
    kernels_internal::rescale_avg_pool(l.layer.window, l.input_shape(0), scaled);
  }
  const float* dy = ctx.upload(rescales(l) ? scaled : grad_output);
  float* dxp = ctx.arena().allocate_n<float>(static_cast<size_t>(tile.count()));
  const TensorDesc xd(tile.extents), yd(gpu::extents(out_box));
  const PoolDesc pd(CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, l.layer.window);
  const float one = 1.0f, zero = 0.0f;
  // Average pooling's backward reads neither y nor x; cuDNN still takes them.
  check(cudnnPoolingBackward(ctx.cudnn(), pd.get(), &one, yd.get(), dy, yd.get(), dy, xd.get(), dxp, &zero, xd.get(),
                             dxp),
        "cudnnPoolingBackward");
  const Dims4 ext = gpu::extents(in_box);
  float* dx = ctx.arena().allocate_n<float>(static_cast<size_t>(in_box.volume()));
  gpu::copy_box(dxp, tile.extents, tile.at, dx, ext, {0, 0, 0, 0}, ext, false, ctx.stream());
  return ctx.download(dx, in_box);
}

// Row-major X [n][in], W [out][in], Y [n][out]; in cuBLAS's column-major terms Y^T = W X^T.
Tensor GpuKernels::do_fully_connected_forward(const LayerRef& /*l*/, const LayerParams& params, const Tensor& x,
                                              const Box& out_box) {
  gpu::GpuContext& ctx = state_->ctx;
  ctx.arena().reset();
  const int n = static_cast<int>(out_box.dim[0].size()), out = static_cast<int>(out_box.dim[1].size());
  const int in = static_cast<int>(x.size() / n);
  const float* ux = ctx.upload(x);
  const float* w = ctx.upload(params.weight);
  float* y = ctx.arena().allocate_n<float>(static_cast<size_t>(out_box.volume()));
  const float one = 1.0f, zero = 0.0f;
  check(cublasSgemm(ctx.cublas(), CUBLAS_OP_T, CUBLAS_OP_N, out, n, in, &one, w, in, ux, in, &zero, y, out),
        "cublasSgemm (fully connected forward)");
  if (!params.bias.empty()) gpu::add_channel_bias(y, ctx.upload(params.bias), {n, out, 1, 1}, ctx.stream());
  return ctx.download(y, out_box);
}

WeightedGrads GpuKernels::do_fully_connected_backward(const LayerRef& /*l*/, const LayerParams& params, const Tensor& x,
                                                      const Tensor& grad_output) {
  gpu::GpuContext& ctx = state_->ctx;
  ctx.arena().reset();
  const Box& out_box = grad_output.box();
  const int n = static_cast<int>(out_box.dim[0].size()), out = static_cast<int>(out_box.dim[1].size());
  const int in = static_cast<int>(x.size() / n);
  const float* ux = ctx.upload(x);
  const float* w = ctx.upload(params.weight);
  const float* dy = ctx.upload(grad_output);
  float* dx = ctx.arena().allocate_n<float>(static_cast<size_t>(x.size()));
  float* dw = ctx.arena().allocate_n<float>(params.weight.size());
  const float one = 1.0f, zero = 0.0f;
  // dX^T (in x n) = W^T (in x out) dY^T (out x n); dW^T (in x out) = X^T (in x n) dY (n x out).
  check(cublasSgemm(ctx.cublas(), CUBLAS_OP_N, CUBLAS_OP_N, in, n, out, &one, w, in, dy, out, &zero, dx, in),
        "cublasSgemm (fully connected input gradient)");
  check(cublasSgemm(ctx.cublas(), CUBLAS_OP_N, CUBLAS_OP_T, in, out, n, &one, ux, in, dy, out, &zero, dw, in),
        "cublasSgemm (fully connected weight gradient)");
  WeightedGrads g;
  g.params.channels = params.channels;
  g.params.row = params.row;
  g.params.eps = params.eps;
  if (!params.bias.empty()) {
    // db = dY^T (out x n) times a vector of ones.
    float* ones = ctx.arena().allocate_n<float>(static_cast<size_t>(n));
    gpu::fill(ones, n, 1.0f, ctx.stream());
    float* db = ctx.arena().allocate_n<float>(params.bias.size());
    check(cublasSgemv(ctx.cublas(), CUBLAS_OP_N, out, n, &one, dy, out, ones, 1, &zero, db, 1),
          "cublasSgemv (fully connected bias gradient)");
    g.params.bias = ctx.download(db, out);
  }
  g.params.weight = ctx.download(dw, static_cast<int64_t>(params.weight.size()));
  g.input = ctx.download(dx, x.box());
  return g;
}

Tensor GpuKernels::do_relu_forward(const LayerRef& /*l*/, const Tensor& x, const Box& out_box) {
  gpu::GpuContext& ctx = state_->ctx;
  ctx.arena().reset();
  const float* ux = ctx.upload(x);
  float* y = ctx.arena().allocate_n<float>(static_cast<size_t>(x.size()));
  gpu::relu_forward(ux, y, x.size(), ctx.stream());
  return ctx.download(y, out_box);
}

Tensor GpuKernels::do_relu_backward(const LayerRef& /*l*/, const Tensor& y, const Tensor& grad_output) {
  gpu::GpuContext& ctx = state_->ctx;
  ctx.arena().reset();
  const float* uy = ctx.upload(y);
  const float* dy = ctx.upload(grad_output);
  float* dx = ctx.arena().allocate_n<float>(static_cast<size_t>(y.size()));
  gpu::relu_backward(uy, dy, dx, y.size(), ctx.stream());
  return ctx.download(dx, grad_output.box());
}

}  // namespace layerplan
