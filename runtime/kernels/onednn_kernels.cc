#include "runtime/kernels/onednn_kernels.h"

#include <omp.h>

#include <cmath>
#include <oneapi/dnnl/dnnl.hpp>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "runtime/kernels/kernel_checks.h"

namespace layerplan {

using namespace kernels_internal;
using dnnl::algorithm;
using dnnl::memory;
using dnnl::prop_kind;
using dt = memory::data_type;
using tag = memory::format_tag;

struct OnednnKernels::Engine {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};

  // Wraps a user buffer (no copy); oneDNN only reads buffers passed as sources.
  memory wrap(const memory::desc& md, const float* data) {
    return memory(md, engine, const_cast<float*>(data));
  }
  void run(const dnnl::primitive& p, const std::unordered_map<int, memory>& args) {
    p.execute(stream, args);
    stream.wait();
  }
};

namespace {

memory::desc plain(const memory::dims& dims) {
  static const std::unordered_map<size_t, tag> kTags = {{1, tag::x}, {2, tag::nc}, {4, tag::nchw}};
  return memory::desc(dims, dt::f32, kTags.at(dims.size()));
}

memory::dims dims_of(const Box& b) {
  return {b.dim[0].size(), b.dim[1].size(), b.dim[2].size(), b.dim[3].size()};
}

// The window of a tile as oneDNN wants it: strides, kernel and per-side padding.
struct DnnlWindow {
  memory::dims strides, kernel, pad_l, pad_r;
};

DnnlWindow dnnl_window(const Window& w, const Box& out_box, const Box& in_box) {
  const TilePadding p = tile_padding(w, out_box, in_box);
  return {{w.stride_h, w.stride_w}, {w.kernel_h, w.kernel_w}, {p.l[0], p.l[1]}, {p.r[0], p.r[1]}};
}

}  // namespace

OnednnKernels::OnednnKernels(int threads) {
  if (threads > 0) omp_set_num_threads(threads);
  dnnl_ = std::make_unique<Engine>();
}

OnednnKernels::~OnednnKernels() = default;

std::string_view OnednnKernels::name() const { return "onednn"; }

namespace {

struct ConvDescs {
  memory::desc src, wei, bias, dst;
  dnnl::convolution_forward::primitive_desc fwd;
};

ConvDescs conv_descs(const dnnl::engine& eng, const LayerRef& l, const Box& in_box, const Box& out_box,
                     bool bias) {
  const Window& w = l.layer.window;
  const DnnlWindow dw = dnnl_window(w, out_box, in_box);
  ConvDescs d;
  d.src = plain(dims_of(in_box));
  d.wei = plain({out_box.dim[1].size(), in_box.dim[1].size(), w.kernel_h, w.kernel_w});
  d.bias = plain({out_box.dim[1].size()});
  d.dst = plain(dims_of(out_box));
  const auto desc = bias ? dnnl::convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_direct,
                                                          d.src, d.wei, d.bias, d.dst, dw.strides, dw.pad_l, dw.pad_r)
                         : dnnl::convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_direct,
                                                          d.src, d.wei, d.dst, dw.strides, dw.pad_l, dw.pad_r);
  d.fwd = dnnl::convolution_forward::primitive_desc(desc, eng);
  return d;
}

}  // namespace

Tensor OnednnKernels::conv2d_forward(const LayerRef& l, const LayerParams& params, const Tensor& input,
                                     const Box& out_box) {
  check_kind(l, LayerKind::kConv2d);
  check_out_box(l, out_box);
  check_params(l, params, out_box);
  const Tensor x = required_input(l, 0, input, out_box);
  const bool bias = !params.bias.empty();
  const ConvDescs d = conv_descs(dnnl_->engine, l, x.box(), out_box, bias);
  Tensor y(out_box);
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, dnnl_->wrap(d.src, x.data())},
                                          {DNNL_ARG_WEIGHTS, dnnl_->wrap(d.wei, params.weight.data())},
                                          {DNNL_ARG_DST, dnnl_->wrap(d.dst, y.data())}};
  if (bias) args.emplace(DNNL_ARG_BIAS, dnnl_->wrap(d.bias, params.bias.data()));
  dnnl_->run(dnnl::convolution_forward(d.fwd), args);
  return y;
}

WeightedGrads OnednnKernels::conv2d_backward(const LayerRef& l, const LayerParams& params, const Tensor& input,
                                             const Tensor& grad_output) {
  check_kind(l, LayerKind::kConv2d);
  const Box& out_box = grad_output.box();
  check_out_box(l, out_box);
  check_params(l, params, out_box);
  const Tensor x = required_input(l, 0, input, out_box);
  const bool bias = !params.bias.empty();
  const ConvDescs d = conv_descs(dnnl_->engine, l, x.box(), out_box, bias);
  const DnnlWindow dw = dnnl_window(l.layer.window, out_box, x.box());

  WeightedGrads out{Tensor(x.box()), params};
  out.params.running_mean.clear();
  out.params.running_var.clear();
  const dnnl::convolution_backward_data::primitive_desc data_pd(
      dnnl::convolution_backward_data::desc(algorithm::convolution_direct, d.src, d.wei, d.dst, dw.strides, dw.pad_l,
                                            dw.pad_r),
      dnnl_->engine, d.fwd);
  dnnl_->run(dnnl::convolution_backward_data(data_pd),
             {{DNNL_ARG_DIFF_DST, dnnl_->wrap(d.dst, grad_output.data())},
              {DNNL_ARG_WEIGHTS, dnnl_->wrap(d.wei, params.weight.data())},
              {DNNL_ARG_DIFF_SRC, dnnl_->wrap(d.src, out.input.data())}});

  const auto weights_desc =
      bias ? dnnl::convolution_backward_weights::desc(algorithm::convolution_direct, d.src, d.wei, d.bias, d.dst,
                                                      dw.strides, dw.pad_l, dw.pad_r)
           : dnnl::convolution_backward_weights::desc(algorithm::convolution_direct, d.src, d.wei, d.dst, dw.strides,
                                                      dw.pad_l, dw.pad_r);
  const dnnl::convolution_backward_weights::primitive_desc weights_pd(weights_desc, dnnl_->engine, d.fwd);
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, dnnl_->wrap(d.src, x.data())},
                                          {DNNL_ARG_DIFF_DST, dnnl_->wrap(d.dst, grad_output.data())},
                                          {DNNL_ARG_DIFF_WEIGHTS, dnnl_->wrap(d.wei, out.params.weight.data())}};
  if (bias) args.emplace(DNNL_ARG_DIFF_BIAS, dnnl_->wrap(d.bias, out.params.bias.data()));
  dnnl_->run(dnnl::convolution_backward_weights(weights_pd), args);
  return out;
}

namespace {

struct PoolDescs {
  memory::desc src, dst;
  DnnlWindow window;
  dnnl::pooling_forward::primitive_desc fwd;
};

PoolDescs pool_descs(const dnnl::engine& eng, algorithm alg, const LayerRef& l, const Box& in_box,
                     const Box& out_box) {
  PoolDescs d{plain(dims_of(in_box)), plain(dims_of(out_box)), dnnl_window(l.layer.window, out_box, in_box), {}};
  d.fwd = dnnl::pooling_forward::primitive_desc(
      dnnl::pooling_forward::desc(prop_kind::forward_training, alg, d.src, d.dst, d.window.strides, d.window.kernel,
                                  d.window.pad_l, d.window.pad_r),
      eng);
  return d;
}

}  // namespace

Tensor OnednnKernels::max_pool_forward(const LayerRef& l, const Tensor& input, const Box& out_box) {
  check_kind(l, LayerKind::kMaxPool);
  check_out_box(l, out_box);
  const Tensor x = required_input(l, 0, input, out_box);
  const PoolDescs d = pool_descs(dnnl_->engine, algorithm::pooling_max, l, x.box(), out_box);
  Tensor y(out_box);
  memory workspace(d.fwd.workspace_desc(), dnnl_->engine);
  dnnl_->run(dnnl::pooling_forward(d.fwd), {{DNNL_ARG_SRC, dnnl_->wrap(d.src, x.data())},
                                            {DNNL_ARG_DST, dnnl_->wrap(d.dst, y.data())},
                                            {DNNL_ARG_WORKSPACE, workspace}});
  return y;
}

Tensor OnednnKernels::max_pool_backward(const LayerRef& l, const Tensor& input, const Tensor& grad_output) {
  check_kind(l, LayerKind::kMaxPool);
  const Box& out_box = grad_output.box();
  check_out_box(l, out_box);
  const Tensor x = required_input(l, 0, input, out_box);
  const PoolDescs d = pool_descs(dnnl_->engine, algorithm::pooling_max, l, x.box(), out_box);
  // The backward needs the forward's workspace (argmax positions): rerun the forward.
  Tensor y(out_box);
  memory workspace(d.fwd.workspace_desc(), dnnl_->engine);
  dnnl_->run(dnnl::pooling_forward(d.fwd), {{DNNL_ARG_SRC, dnnl_->wrap(d.src, x.data())},
                                            {DNNL_ARG_DST, dnnl_->wrap(d.dst, y.data())},
                                            {DNNL_ARG_WORKSPACE, workspace}});
  const dnnl::pooling_backward::primitive_desc bwd(
      dnnl::pooling_backward::desc(algorithm::pooling_max, d.src, d.dst, d.window.strides, d.window.kernel,
                                   d.window.pad_l, d.window.pad_r),
      dnnl_->engine, d.fwd);
  Tensor dx(x.box());
  dnnl_->run(dnnl::pooling_backward(bwd), {{DNNL_ARG_DIFF_DST, dnnl_->wrap(d.dst, grad_output.data())},
                                           {DNNL_ARG_DIFF_SRC, dnnl_->wrap(d.src, dx.data())},
                                           {DNNL_ARG_WORKSPACE, workspace}});
  return dx;
}

Tensor OnednnKernels::avg_pool_forward(const LayerRef& l, const Tensor& input, const Box& out_box) {
  check_kind(l, LayerKind::kAvgPool);
  check_out_box(l, out_box);
  const Tensor x = required_input(l, 0, input, out_box);
  // include_padding divides by kh*kw everywhere: PyTorch's count_include_pad=True.
  const PoolDescs d = pool_descs(dnnl_->engine, algorithm::pooling_avg_include_padding, l, x.box(), out_box);
  Tensor y(out_box);
  dnnl_->run(dnnl::pooling_forward(d.fwd),
             {{DNNL_ARG_SRC, dnnl_->wrap(d.src, x.data())}, {DNNL_ARG_DST, dnnl_->wrap(d.dst, y.data())}});
  return y;
}

Tensor OnednnKernels::avg_pool_backward(const LayerRef& l, const Tensor& grad_output) {
  check_kind(l, LayerKind::kAvgPool);
  const Box& out_box = grad_output.box();
  check_out_box(l, out_box);
  const Box in_box = l.required_input(0, out_box);
  const PoolDescs d = pool_descs(dnnl_->engine, algorithm::pooling_avg_include_padding, l, in_box, out_box);
  const dnnl::pooling_backward::primitive_desc bwd(
      dnnl::pooling_backward::desc(algorithm::pooling_avg_include_padding, d.src, d.dst, d.window.strides,
                                   d.window.kernel, d.window.pad_l, d.window.pad_r),
      dnnl_->engine, d.fwd);
  Tensor dx(in_box);
  dnnl_->run(dnnl::pooling_backward(bwd), {{DNNL_ARG_DIFF_DST, dnnl_->wrap(d.dst, grad_output.data())},
                                           {DNNL_ARG_DIFF_SRC, dnnl_->wrap(d.src, dx.data())}});
  return dx;
}

namespace {

// Global average pooling is average pooling with a window of the whole (unsplit) plane.
dnnl::pooling_forward::primitive_desc global_pool_pd(const dnnl::engine& eng, const memory::desc& src,
                                                     const memory::desc& dst, const Box& in_box) {
  const memory::dims kernel = {in_box.dim[2].size(), in_box.dim[3].size()};
  return dnnl::pooling_forward::primitive_desc(
      dnnl::pooling_forward::desc(prop_kind::forward_training, algorithm::pooling_avg_exclude_padding, src, dst,
                                  {1, 1}, kernel, {0, 0}, {0, 0}),
      eng);
}

}  // namespace

Tensor OnednnKernels::global_avg_pool_forward(const LayerRef& l, const Tensor& input, const Box& out_box) {
  check_kind(l, LayerKind::kGlobalAvgPool);
  check_out_box(l, out_box);
  const Tensor x = required_input(l, 0, input, out_box);
  const memory::desc src = plain(dims_of(x.box())), dst = plain(dims_of(out_box));
  Tensor y(out_box);
  dnnl_->run(dnnl::pooling_forward(global_pool_pd(dnnl_->engine, src, dst, x.box())),
             {{DNNL_ARG_SRC, dnnl_->wrap(src, x.data())}, {DNNL_ARG_DST, dnnl_->wrap(dst, y.data())}});
  return y;
}

Tensor OnednnKernels::global_avg_pool_backward(const LayerRef& l, const Tensor& grad_output) {
  check_kind(l, LayerKind::kGlobalAvgPool);
  const Box& out_box = grad_output.box();
  check_out_box(l, out_box);
  const Box in_box = l.required_input(0, out_box);
  const memory::desc src = plain(dims_of(in_box)), dst = plain(dims_of(out_box));
  const memory::dims kernel = {in_box.dim[2].size(), in_box.dim[3].size()};
  const dnnl::pooling_backward::primitive_desc bwd(
      dnnl::pooling_backward::desc(algorithm::pooling_avg_exclude_padding, src, dst, {1, 1}, kernel, {0, 0}, {0, 0}),
      dnnl_->engine, global_pool_pd(dnnl_->engine, src, dst, in_box));
  Tensor dx(in_box);
  dnnl_->run(dnnl::pooling_backward(bwd), {{DNNL_ARG_DIFF_DST, dnnl_->wrap(dst, grad_output.data())},
                                           {DNNL_ARG_DIFF_SRC, dnnl_->wrap(src, dx.data())}});
  return dx;
}

namespace {

struct InnerProductDescs {
  memory::desc src, wei, bias, dst;
  dnnl::inner_product_forward::primitive_desc fwd;
};

InnerProductDescs inner_product_descs(const dnnl::engine& eng, const LayerParams& params, const Box& out_box) {
  const int64_t n = out_box.dim[0].size(), k = out_box.dim[1].size();
  InnerProductDescs d;
  d.src = plain({n, params.row});
  d.wei = memory::desc({k, params.row}, dt::f32, tag::oi);
  d.bias = plain({k});
  d.dst = plain({n, k});
  const auto desc = params.bias.empty()
                        ? dnnl::inner_product_forward::desc(prop_kind::forward_training, d.src, d.wei, d.dst)
                        : dnnl::inner_product_forward::desc(prop_kind::forward_training, d.src, d.wei, d.bias, d.dst);
  d.fwd = dnnl::inner_product_forward::primitive_desc(desc, eng);
  return d;
}

}  // namespace

Tensor OnednnKernels::fully_connected_forward(const LayerRef& l, const LayerParams& params, const Tensor& input,
                                              const Box& out_box) {
  check_kind(l, LayerKind::kFullyConnected);
  check_out_box(l, out_box);
  check_params(l, params, out_box);
  const Tensor x = required_input(l, 0, input, out_box);
  const InnerProductDescs d = inner_product_descs(dnnl_->engine, params, out_box);
  Tensor y(out_box);
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, dnnl_->wrap(d.src, x.data())},
                                          {DNNL_ARG_WEIGHTS, dnnl_->wrap(d.wei, params.weight.data())},
                                          {DNNL_ARG_DST, dnnl_->wrap(d.dst, y.data())}};
  if (!params.bias.empty()) args.emplace(DNNL_ARG_BIAS, dnnl_->wrap(d.bias, params.bias.data()));
  dnnl_->run(dnnl::inner_product_forward(d.fwd), args);
  return y;
}

WeightedGrads OnednnKernels::fully_connected_backward(const LayerRef& l, const LayerParams& params,
                                                      const Tensor& input, const Tensor& grad_output) {
  check_kind(l, LayerKind::kFullyConnected);
  const Box& out_box = grad_output.box();
  check_out_box(l, out_box);
  check_params(l, params, out_box);
  const Tensor x = required_input(l, 0, input, out_box);
  const InnerProductDescs d = inner_product_descs(dnnl_->engine, params, out_box);
  WeightedGrads out{Tensor(x.box()), params};
  const dnnl::inner_product_backward_data::primitive_desc data_pd(
      dnnl::inner_product_backward_data::desc(d.src, d.wei, d.dst), dnnl_->engine, d.fwd);
  dnnl_->run(dnnl::inner_product_backward_data(data_pd),
             {{DNNL_ARG_DIFF_DST, dnnl_->wrap(d.dst, grad_output.data())},
              {DNNL_ARG_WEIGHTS, dnnl_->wrap(d.wei, params.weight.data())},
              {DNNL_ARG_DIFF_SRC, dnnl_->wrap(d.src, out.input.data())}});
  const auto weights_desc = params.bias.empty()
                                ? dnnl::inner_product_backward_weights::desc(d.src, d.wei, d.dst)
                                : dnnl::inner_product_backward_weights::desc(d.src, d.wei, d.bias, d.dst);
  const dnnl::inner_product_backward_weights::primitive_desc weights_pd(weights_desc, dnnl_->engine, d.fwd);
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, dnnl_->wrap(d.src, x.data())},
                                          {DNNL_ARG_DIFF_DST, dnnl_->wrap(d.dst, grad_output.data())},
                                          {DNNL_ARG_DIFF_WEIGHTS, dnnl_->wrap(d.wei, out.params.weight.data())}};
  if (!params.bias.empty()) args.emplace(DNNL_ARG_DIFF_BIAS, dnnl_->wrap(d.bias, out.params.bias.data()));
  dnnl_->run(dnnl::inner_product_backward_weights(weights_pd), args);
  return out;
}

namespace {

dnnl::eltwise_forward::primitive_desc relu_pd(const dnnl::engine& eng, const memory::desc& md) {
  // use_dst_for_bwd: the backward reads the saved output, as the interface promises.
  return dnnl::eltwise_forward::primitive_desc(
      dnnl::eltwise_forward::desc(prop_kind::forward_training, algorithm::eltwise_relu_use_dst_for_bwd, md, 0.f, 0.f),
      eng);
}

}  // namespace

Tensor OnednnKernels::relu_forward(const LayerRef& l, const Tensor& input, const Box& out_box) {
  check_kind(l, LayerKind::kRelu);
  check_out_box(l, out_box);
  const Tensor x = required_input(l, 0, input, out_box);
  const memory::desc md = plain(dims_of(out_box));
  Tensor y(out_box);
  dnnl_->run(dnnl::eltwise_forward(relu_pd(dnnl_->engine, md)),
             {{DNNL_ARG_SRC, dnnl_->wrap(md, x.data())}, {DNNL_ARG_DST, dnnl_->wrap(md, y.data())}});
  return y;
}

Tensor OnednnKernels::relu_backward(const LayerRef& l, const Tensor& output, const Tensor& grad_output) {
  check_kind(l, LayerKind::kRelu);
  const Box& box = grad_output.box();
  check_out_box(l, box);
  const Tensor y = crop(output, box);
  const memory::desc md = plain(dims_of(box));
  const dnnl::eltwise_backward::primitive_desc bwd(
      dnnl::eltwise_backward::desc(algorithm::eltwise_relu_use_dst_for_bwd, md, md, 0.f, 0.f), dnnl_->engine,
      relu_pd(dnnl_->engine, md));
  Tensor dx(box);
  dnnl_->run(dnnl::eltwise_backward(bwd), {{DNNL_ARG_DST, dnnl_->wrap(md, y.data())},
                                           {DNNL_ARG_DIFF_DST, dnnl_->wrap(md, grad_output.data())},
                                           {DNNL_ARG_DIFF_SRC, dnnl_->wrap(md, dx.data())}});
  return dx;
}

Tensor OnednnKernels::batch_norm_forward(const LayerRef& l, const LayerParams& params, const Tensor& input,
                                         const BatchNormStats& global, const Box& out_box) {
  check_kind(l, LayerKind::kBatchNorm);
  check_out_box(l, out_box);
  check_params(l, params, out_box);
  check_batch_norm_stats(l, global, out_box);
  const Tensor x = required_input(l, 0, input, out_box);
  // oneDNN computes the statistics of its own input in training mode; given the caller's
  // global statistics (use_global_stats) it normalizes with them, which is the forward.
  std::vector<float> mean, variance;
  const auto m = static_cast<double>(global.count);
  for (size_t i = 0; i < global.sum.size(); ++i) {
    const double mu = global.sum[i] / m;
    mean.push_back(static_cast<float>(mu));
    variance.push_back(static_cast<float>(std::max(0.0, global.sum_sq[i] / m - mu * mu)));
  }
  const memory::desc md = plain(dims_of(out_box));
  const memory::desc channel_md = plain({out_box.dim[1].size()});
  const auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
                     dnnl::normalization_flags::use_shift;
  const dnnl::batch_normalization_forward::primitive_desc pd(
      dnnl::batch_normalization_forward::desc(prop_kind::forward_inference, md, static_cast<float>(params.eps), flags),
      dnnl_->engine);
  Tensor y(out_box);
  dnnl_->run(dnnl::batch_normalization_forward(pd), {{DNNL_ARG_SRC, dnnl_->wrap(md, x.data())},
                                                     {DNNL_ARG_MEAN, dnnl_->wrap(channel_md, mean.data())},
                                                     {DNNL_ARG_VARIANCE, dnnl_->wrap(channel_md, variance.data())},
                                                     {DNNL_ARG_SCALE, dnnl_->wrap(channel_md, params.weight.data())},
                                                     {DNNL_ARG_SHIFT, dnnl_->wrap(channel_md, params.bias.data())},
                                                     {DNNL_ARG_DST, dnnl_->wrap(md, y.data())}});
  return y;
}

LossTile OnednnKernels::softmax_cross_entropy_forward(const LayerRef& l, const Tensor& logits,
                                                      const std::vector<int64_t>& labels, const Box& out_box) {
  check_kind(l, LayerKind::kSoftmaxCrossEntropy);
  check_out_box(l, out_box);
  check_samples_only(l, out_box);
  const Tensor x = required_input(l, 0, logits, out_box);
  check_labels(l, labels, out_box);
  const int64_t classes = out_box.dim[1].size() * out_box.dim[2].size() * out_box.dim[3].size();
  const memory::desc md = plain({out_box.dim[0].size(), classes});
  const dnnl::logsoftmax_forward::primitive_desc pd(
      dnnl::logsoftmax_forward::desc(prop_kind::forward_training, md, 1), dnnl_->engine);
  Tensor log_p(out_box);
  dnnl_->run(dnnl::logsoftmax_forward(pd),
             {{DNNL_ARG_SRC, dnnl_->wrap(md, x.data())}, {DNNL_ARG_DST, dnnl_->wrap(md, log_p.data())}});
  LossTile out{Tensor(out_box), 0.0};
  for (int64_t i = 0; i < log_p.size(); ++i) out.probabilities.data()[i] = std::exp(log_p.data()[i]);
  for (size_t i = 0; i < labels.size(); ++i) {
    out.loss -= log_p.data()[static_cast<int64_t>(i) * classes + labels[i]];
  }
  out.loss /= static_cast<double>(l.layer.output.n());
  return out;
}

}  // namespace layerplan
