#include "runtime/kernels/onednn_kernels.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <new>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/kernels/backend_helpers.h"
#include "runtime/kernels/batch_norm_loops.h"

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
  memory wrap(const memory::desc& md, const float* data) { return memory(md, engine, const_cast<float*>(data)); }
  void run(const dnnl::primitive& p, const std::unordered_map<int, memory>& args) {
    p.execute(stream, args);
    stream.wait();
  }
  // Buffers in oneDNN's preferred layouts, one per operand role, kept between calls: a
  // fresh allocation per call would be unmapped on free and page-faulted in again on the
  // next call (docs/BENCHMARKS.md, "CPU kernels").
  enum Scratch { kSrc, kWeights, kDst, kDiffDst, kDiffDstForWeights, kDiffSrc, kDiffWeights, kScratchRoles };
  struct FreeBuffer {
    void operator()(void* p) const { std::free(p); }
  };
  struct Buffer {
    std::unique_ptr<void, FreeBuffer> data;
    size_t bytes = 0;
  };
  std::array<Buffer, kScratchRoles> scratch;

  memory scratch_memory(const memory::desc& md, Scratch role);
  memory input_as(const memory::desc& want, const memory::desc& have, const float* data, Scratch role);
  memory output_as(const memory::desc& want, const memory::desc& have, float* data, Scratch role);
  void finish_output(const memory& result, const memory::desc& have, float* data);
};

namespace {

memory::desc plain(const memory::dims& dims) {
  static const std::unordered_map<size_t, tag> kTags = {{1, tag::x}, {2, tag::nc}, {4, tag::nchw}, {5, tag::goihw}};
  return memory::desc(dims, dt::f32, kTags.at(dims.size()));
}

memory::dims dims_of(const Box& b) { return {b.dim[0].size(), b.dim[1].size(), b.dim[2].size(), b.dim[3].size()}; }

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

std::string_view OnednnKernels::backend_name() const { return "onednn"; }

namespace {

// Convolutions run in the layouts oneDNN prefers (format `any`: blocked, e.g. nChw16c on
// AVX-512), which are faster than plain NCHW (docs/BENCHMARKS.md, "CPU kernels"); our
// tensors stay NCHW between layers, so each call reorders its operands in and its results
// out (as PyTorch's CPU convolution does with NCHW tensors).
struct ConvDescs {
  memory::desc src, wei, bias, dst;  // the plain layouts of our buffers
  DnnlWindow window;
  bool has_bias = false;
  dnnl::convolution_forward::primitive_desc fwd;
};

memory::desc any_layout(const memory::desc& plain_md) { return memory::desc(plain_md.dims(), dt::f32, tag::any); }

// `groups` > 1: the tile holds that many whole groups of a grouped convolution, and the
// weights are (groups, out/groups, in/groups, kh, kw), which is our (out, in/groups, kh,
// kw) shard read as oneDNN's goihw.
ConvDescs conv_descs(const dnnl::engine& eng, const LayerRef& l, const Box& in_box, const Box& out_box, bool bias,
                     int64_t groups) {
  const Window& w = l.layer.window;
  ConvDescs d;
  d.window = dnnl_window(w, out_box, in_box);
  d.has_bias = bias;
  d.src = plain(dims_of(in_box));
  const int64_t out_channels = out_box.dim[1].size(), in_channels = in_box.dim[1].size();
  d.wei = groups > 1 ? plain({groups, out_channels / groups, in_channels / groups, w.kernel_h, w.kernel_w})
                     : plain({out_channels, in_channels, w.kernel_h, w.kernel_w});
  d.bias = plain({out_box.dim[1].size()});
  d.dst = plain(dims_of(out_box));
  const DnnlWindow& dw = d.window;
  const auto desc = bias ? dnnl::convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_direct,
                                                           any_layout(d.src), any_layout(d.wei), d.bias,
                                                           any_layout(d.dst), dw.strides, dw.pad_l, dw.pad_r)
                         : dnnl::convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_direct,
                                                           any_layout(d.src), any_layout(d.wei), any_layout(d.dst),
                                                           dw.strides, dw.pad_l, dw.pad_r);
  d.fwd = dnnl::convolution_forward::primitive_desc(desc, eng);
  return d;
}

}  // namespace

// A plain buffer as the primitive wants it: wrapped when the layouts agree, else reordered
// into a new buffer of the wanted layout.
memory OnednnKernels::Engine::scratch_memory(const memory::desc& md, Scratch role) {
  Buffer& b = scratch[static_cast<size_t>(role)];
  const size_t bytes = md.get_size();
  if (b.bytes < bytes) {
    const size_t rounded = (bytes + 63) / 64 * 64;  // aligned_alloc wants a multiple of the alignment
    b.data.reset(std::aligned_alloc(64, rounded));
    if (!b.data) throw std::bad_alloc();
    b.bytes = rounded;
  }
  return memory(md, engine, b.data.get());
}

memory OnednnKernels::Engine::input_as(const memory::desc& want, const memory::desc& have, const float* data,
                                       Scratch role) {
  memory user = wrap(have, data);
  if (want == have) return user;
  memory converted = scratch_memory(want, role);
  dnnl::reorder(user, converted).execute(stream, user, converted);
  return converted;
}

// Where a primitive writes a result for the plain buffer `data`: the buffer itself when the
// layouts agree, else a scratch buffer that finish_output() reorders into `data`.
memory OnednnKernels::Engine::output_as(const memory::desc& want, const memory::desc& have, float* data, Scratch role) {
  return want == have ? wrap(have, data) : scratch_memory(want, role);
}

void OnednnKernels::Engine::finish_output(const memory& result, const memory::desc& have, float* data) {
  if (result.get_desc() == have) return;
  memory user = wrap(have, data);
  dnnl::reorder(result, user).execute(stream, const_cast<memory&>(result), user);
}

namespace {

// A convolution tile cut into the pieces oneDNN's primitive takes: whole groups, or
// output channels inside one group. Each piece holds its oneDNN group count (1 inside a
// group). Only a tile that starts or ends inside a group of a grouped convolution (e.g.
// channels [2,6) of groups of 4) has more than one piece; pieces read disjoint input
// channels.
struct ConvPiece {
  Interval channels;
  int64_t groups = 1;
};

std::vector<ConvPiece> conv_pieces(const Layer& layer, Interval out) {
  if (layer.groups <= 1) return {{out, 1}};
  const int64_t per = layer.output.c() / layer.groups;
  const int64_t first_whole = (out.lo + per - 1) / per * per, end_whole = out.hi / per * per;
  std::vector<ConvPiece> pieces;
  if (out.lo < first_whole) pieces.push_back({{out.lo, std::min(first_whole, out.hi)}, 1});
  if (first_whole < end_whole) pieces.push_back({{first_whole, end_whole}, (end_whole - first_whole) / per});
  if (first_whole <= end_whole && end_whole < out.hi) pieces.push_back({{end_whole, out.hi}, 1});
  return pieces;
}

Box with_channels(Box box, Interval channels) {
  box.dim[1] = channels;
  return box;
}

}  // namespace

Tensor OnednnKernels::do_conv2d_forward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                        const Box& out_box) {
  const std::vector<ConvPiece> pieces = conv_pieces(l.layer, out_box.dim[1]);
  if (pieces.size() == 1) return conv_forward_piece(l, params, x, out_box, pieces[0].groups);
  Tensor y(out_box, Tensor::kUninitialized);
  for (const ConvPiece& piece : pieces) {
    const Box piece_box = with_channels(out_box, piece.channels);
    const Tensor part = conv_forward_piece(l, shard(params, piece.channels), crop(x, l.required_input(0, piece_box)),
                                           piece_box, piece.groups);
    copy_intersection(part, &y);
  }
  return y;
}

WeightedGrads OnednnKernels::do_conv2d_backward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                                const Tensor& grad_output) {
  const std::vector<ConvPiece> pieces = conv_pieces(l.layer, grad_output.box().dim[1]);
  if (pieces.size() == 1) return conv_backward_piece(l, params, x, grad_output, pieces[0].groups);
  WeightedGrads out{Tensor(x.box(), Tensor::kUninitialized), gradient_like(params)};
  for (const ConvPiece& piece : pieces) {
    const Box piece_box = with_channels(grad_output.box(), piece.channels);
    const WeightedGrads part =
        conv_backward_piece(l, shard(params, piece.channels), crop(x, l.required_input(0, piece_box)),
                            crop(grad_output, piece_box), piece.groups);
    copy_intersection(part.input, &out.input);  // the pieces' input channels tile x's
    add_shard(part.params, &out.params);
  }
  return out;
}

Tensor OnednnKernels::conv_forward_piece(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                         const Box& out_box, int64_t groups) {
  const bool bias = !params.bias.empty();
  const ConvDescs d = conv_descs(dnnl_->engine, l, x.box(), out_box, bias, groups);
  Tensor y(out_box, Tensor::kUninitialized);
  const memory dst = dnnl_->output_as(d.fwd.dst_desc(), d.dst, y.data(), Engine::kDst);
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, dnnl_->input_as(d.fwd.src_desc(), d.src, x.data(), Engine::kSrc)},
      {DNNL_ARG_WEIGHTS, dnnl_->input_as(d.fwd.weights_desc(), d.wei, params.weight.data(), Engine::kWeights)},
      {DNNL_ARG_DST, dst}};
  if (bias) args.emplace(DNNL_ARG_BIAS, dnnl_->wrap(d.bias, params.bias.data()));
  dnnl_->run(dnnl::convolution_forward(d.fwd), args);
  dnnl_->finish_output(dst, d.dst, y.data());
  dnnl_->stream.wait();
  return y;
}

WeightedGrads OnednnKernels::conv_backward_piece(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                                 const Tensor& grad_output, int64_t groups) {
  const Box& out_box = grad_output.box();
  const bool bias = !params.bias.empty();
  const ConvDescs d = conv_descs(dnnl_->engine, l, x.box(), out_box, bias, groups);
  const DnnlWindow& dw = d.window;
  WeightedGrads out{Tensor(x.box(), Tensor::kUninitialized), gradient_like(params)};

  const dnnl::convolution_backward_data::primitive_desc data_pd(
      dnnl::convolution_backward_data::desc(algorithm::convolution_direct, any_layout(d.src), any_layout(d.wei),
                                            any_layout(d.dst), dw.strides, dw.pad_l, dw.pad_r),
      dnnl_->engine, d.fwd);
  const memory diff_src = dnnl_->output_as(data_pd.diff_src_desc(), d.src, out.input.data(), Engine::kDiffSrc);
  const memory diff_dst = dnnl_->input_as(data_pd.diff_dst_desc(), d.dst, grad_output.data(), Engine::kDiffDst);
  dnnl_->run(
      dnnl::convolution_backward_data(data_pd),
      {{DNNL_ARG_DIFF_DST, diff_dst},
       {DNNL_ARG_WEIGHTS, dnnl_->input_as(data_pd.weights_desc(), d.wei, params.weight.data(), Engine::kWeights)},
       {DNNL_ARG_DIFF_SRC, diff_src}});
  dnnl_->finish_output(diff_src, d.src, out.input.data());

  const auto weights_desc = bias ? dnnl::convolution_backward_weights::desc(
                                       algorithm::convolution_direct, any_layout(d.src), any_layout(d.wei), d.bias,
                                       any_layout(d.dst), dw.strides, dw.pad_l, dw.pad_r)
                                 : dnnl::convolution_backward_weights::desc(
                                       algorithm::convolution_direct, any_layout(d.src), any_layout(d.wei),
                                       any_layout(d.dst), dw.strides, dw.pad_l, dw.pad_r);
  const dnnl::convolution_backward_weights::primitive_desc weights_pd(weights_desc, dnnl_->engine, d.fwd);
  const memory diff_wei =
      dnnl_->output_as(weights_pd.diff_weights_desc(), d.wei, out.params.weight.data(), Engine::kDiffWeights);
  // The backward-data pass has usually reordered the output gradient already.
  const memory weights_diff_dst =
      weights_pd.diff_dst_desc() == diff_dst.get_desc()
          ? diff_dst
          : dnnl_->input_as(weights_pd.diff_dst_desc(), d.dst, grad_output.data(), Engine::kDiffDstForWeights);
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, dnnl_->input_as(weights_pd.src_desc(), d.src, x.data(), Engine::kSrc)},
      {DNNL_ARG_DIFF_DST, weights_diff_dst},
      {DNNL_ARG_DIFF_WEIGHTS, diff_wei}};
  if (bias) args.emplace(DNNL_ARG_DIFF_BIAS, dnnl_->wrap(d.bias, out.params.bias.data()));
  dnnl_->run(dnnl::convolution_backward_weights(weights_pd), args);
  dnnl_->finish_output(diff_wei, d.wei, out.params.weight.data());
  dnnl_->stream.wait();
  return out;
}

namespace {

struct PoolDescs {
  memory::desc src, dst;
  DnnlWindow window;
  dnnl::pooling_forward::primitive_desc fwd;
};

PoolDescs pool_descs(const dnnl::engine& eng, algorithm alg, const LayerRef& l, const Box& in_box, const Box& out_box) {
  PoolDescs d{plain(dims_of(in_box)), plain(dims_of(out_box)), dnnl_window(l.layer.window, out_box, in_box), {}};
  d.fwd = dnnl::pooling_forward::primitive_desc(
      dnnl::pooling_forward::desc(prop_kind::forward_training, alg, d.src, d.dst, d.window.strides, d.window.kernel,
                                  d.window.pad_l, d.window.pad_r),
      eng);
  return d;
}

// Max pooling forward of `x` into `y`; returns its workspace (the argmax positions).
// A template so that it can take the kernels' private Engine.
template <typename Engine>
memory run_max_pool_forward(Engine& onednn, const PoolDescs& d, const Tensor& x, Tensor& y) {
  memory workspace(d.fwd.workspace_desc(), onednn.engine);
  onednn.run(dnnl::pooling_forward(d.fwd), {{DNNL_ARG_SRC, onednn.wrap(d.src, x.data())},
                                            {DNNL_ARG_DST, onednn.wrap(d.dst, y.data())},
                                            {DNNL_ARG_WORKSPACE, workspace}});
  return workspace;
}

}  // namespace

Tensor OnednnKernels::do_max_pool_forward(const LayerRef& l, const Tensor& x, const Box& out_box) {
  const PoolDescs d = pool_descs(dnnl_->engine, algorithm::pooling_max, l, x.box(), out_box);
  Tensor y(out_box, Tensor::kUninitialized);
  run_max_pool_forward(*dnnl_, d, x, y);
  return y;
}

Tensor OnednnKernels::do_max_pool_backward(const LayerRef& l, const Tensor& x, const Tensor& grad_output) {
  const Box& out_box = grad_output.box();
  const PoolDescs d = pool_descs(dnnl_->engine, algorithm::pooling_max, l, x.box(), out_box);
  // The backward needs the forward's workspace (argmax positions): rerun the forward.
  Tensor y(out_box, Tensor::kUninitialized);
  const memory workspace = run_max_pool_forward(*dnnl_, d, x, y);
  const dnnl::pooling_backward::primitive_desc bwd(
      dnnl::pooling_backward::desc(algorithm::pooling_max, d.src, d.dst, d.window.strides, d.window.kernel,
                                   d.window.pad_l, d.window.pad_r),
      dnnl_->engine, d.fwd);
  Tensor dx(x.box(), Tensor::kUninitialized);
  dnnl_->run(dnnl::pooling_backward(bwd), {{DNNL_ARG_DIFF_DST, dnnl_->wrap(d.dst, grad_output.data())},
                                           {DNNL_ARG_DIFF_SRC, dnnl_->wrap(d.src, dx.data())},
                                           {DNNL_ARG_WORKSPACE, workspace}});
  return dx;
}

namespace {

// exclude_padding divides by the real input elements of a window: count_include_pad=False.
// include_padding divides by kh*kw everywhere: count_include_pad=True, except for a
// ceil_mode window that overhangs the padded input, where PyTorch divides by less; those
// results (and gradients) are rescaled (avg_pool_divisor_varies).
algorithm avg_pool_algorithm(const Window& w) {
  return w.count_include_pad ? algorithm::pooling_avg_include_padding : algorithm::pooling_avg_exclude_padding;
}

bool rescales(const LayerRef& l) {
  const Window& w = l.layer.window;
  return w.count_include_pad && avg_pool_divisor_varies(w, l.input_shape(0), l.layer.output);
}

}  // namespace

Tensor OnednnKernels::do_avg_pool_forward(const LayerRef& l, const Tensor& x, const Box& out_box) {
  const PoolDescs d = pool_descs(dnnl_->engine, avg_pool_algorithm(l.layer.window), l, x.box(), out_box);
  Tensor y(out_box, Tensor::kUninitialized);
  dnnl_->run(dnnl::pooling_forward(d.fwd),
             {{DNNL_ARG_SRC, dnnl_->wrap(d.src, x.data())}, {DNNL_ARG_DST, dnnl_->wrap(d.dst, y.data())}});
  if (rescales(l)) rescale_avg_pool(l.layer.window, l.input_shape(0), y);
  return y;
}

Tensor OnednnKernels::do_avg_pool_backward(const LayerRef& l, const Tensor& grad_output) {
  const Box& out_box = grad_output.box();
  const Box in_box = l.required_input(0, out_box);
  const algorithm alg = avg_pool_algorithm(l.layer.window);
  const PoolDescs d = pool_descs(dnnl_->engine, alg, l, in_box, out_box);
  const dnnl::pooling_backward::primitive_desc bwd(
      dnnl::pooling_backward::desc(alg, d.src, d.dst, d.window.strides, d.window.kernel, d.window.pad_l,
                                   d.window.pad_r),
      dnnl_->engine, d.fwd);
  Tensor scaled;
  if (rescales(l)) {
    scaled = grad_output;
    rescale_avg_pool(l.layer.window, l.input_shape(0), scaled);
  }
  const Tensor& dy = rescales(l) ? scaled : grad_output;
  Tensor dx(in_box, Tensor::kUninitialized);
  dnnl_->run(dnnl::pooling_backward(bwd),
             {{DNNL_ARG_DIFF_DST, dnnl_->wrap(d.dst, dy.data())}, {DNNL_ARG_DIFF_SRC, dnnl_->wrap(d.src, dx.data())}});
  return dx;
}

namespace {

// Global average pooling is average pooling with a window of the whole (unsplit) plane.
dnnl::pooling_forward::primitive_desc global_pool_pd(const dnnl::engine& eng, const memory::desc& src,
                                                     const memory::desc& dst, const Box& in_box) {
  const memory::dims kernel = {in_box.dim[2].size(), in_box.dim[3].size()};
  return dnnl::pooling_forward::primitive_desc(
      dnnl::pooling_forward::desc(prop_kind::forward_training, algorithm::pooling_avg_exclude_padding, src, dst, {1, 1},
                                  kernel, {0, 0}, {0, 0}),
      eng);
}

}  // namespace

Tensor OnednnKernels::do_global_avg_pool_forward(const LayerRef& /*l*/, const Tensor& x, const Box& out_box) {
  const memory::desc src = plain(dims_of(x.box())), dst = plain(dims_of(out_box));
  Tensor y(out_box, Tensor::kUninitialized);
  dnnl_->run(dnnl::pooling_forward(global_pool_pd(dnnl_->engine, src, dst, x.box())),
             {{DNNL_ARG_SRC, dnnl_->wrap(src, x.data())}, {DNNL_ARG_DST, dnnl_->wrap(dst, y.data())}});
  return y;
}

Tensor OnednnKernels::do_global_avg_pool_backward(const LayerRef& l, const Tensor& grad_output) {
  const Box& out_box = grad_output.box();
  const Box in_box = l.required_input(0, out_box);
  const memory::desc src = plain(dims_of(in_box)), dst = plain(dims_of(out_box));
  const memory::dims kernel = {in_box.dim[2].size(), in_box.dim[3].size()};
  const dnnl::pooling_backward::primitive_desc bwd(
      dnnl::pooling_backward::desc(algorithm::pooling_avg_exclude_padding, src, dst, {1, 1}, kernel, {0, 0}, {0, 0}),
      dnnl_->engine, global_pool_pd(dnnl_->engine, src, dst, in_box));
  Tensor dx(in_box, Tensor::kUninitialized);
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

Tensor OnednnKernels::do_fully_connected_forward(const LayerRef& /*l*/, const LayerParams& params, const Tensor& x,
                                                 const Box& out_box) {
  const InnerProductDescs d = inner_product_descs(dnnl_->engine, params, out_box);
  Tensor y(out_box, Tensor::kUninitialized);
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, dnnl_->wrap(d.src, x.data())},
                                          {DNNL_ARG_WEIGHTS, dnnl_->wrap(d.wei, params.weight.data())},
                                          {DNNL_ARG_DST, dnnl_->wrap(d.dst, y.data())}};
  if (!params.bias.empty()) args.emplace(DNNL_ARG_BIAS, dnnl_->wrap(d.bias, params.bias.data()));
  dnnl_->run(dnnl::inner_product_forward(d.fwd), args);
  return y;
}

WeightedGrads OnednnKernels::do_fully_connected_backward(const LayerRef& /*l*/, const LayerParams& params,
                                                         const Tensor& x, const Tensor& grad_output) {
  const Box& out_box = grad_output.box();
  const InnerProductDescs d = inner_product_descs(dnnl_->engine, params, out_box);
  WeightedGrads out{Tensor(x.box(), Tensor::kUninitialized), gradient_like(params)};
  const dnnl::inner_product_backward_data::primitive_desc data_pd(
      dnnl::inner_product_backward_data::desc(d.src, d.wei, d.dst), dnnl_->engine, d.fwd);
  dnnl_->run(dnnl::inner_product_backward_data(data_pd), {{DNNL_ARG_DIFF_DST, dnnl_->wrap(d.dst, grad_output.data())},
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

Tensor OnednnKernels::do_relu_forward(const LayerRef& /*l*/, const Tensor& x, const Box& out_box) {
  const memory::desc md = plain(dims_of(out_box));
  Tensor y(out_box, Tensor::kUninitialized);
  dnnl_->run(dnnl::eltwise_forward(relu_pd(dnnl_->engine, md)),
             {{DNNL_ARG_SRC, dnnl_->wrap(md, x.data())}, {DNNL_ARG_DST, dnnl_->wrap(md, y.data())}});
  return y;
}

Tensor OnednnKernels::do_relu_backward(const LayerRef& /*l*/, const Tensor& y, const Tensor& grad_output) {
  const Box& box = grad_output.box();
  const memory::desc md = plain(dims_of(box));
  const dnnl::eltwise_backward::primitive_desc bwd(
      dnnl::eltwise_backward::desc(algorithm::eltwise_relu_use_dst_for_bwd, md, md, 0.f, 0.f), dnnl_->engine,
      relu_pd(dnnl_->engine, md));
  Tensor dx(box, Tensor::kUninitialized);
  dnnl_->run(dnnl::eltwise_backward(bwd), {{DNNL_ARG_DST, dnnl_->wrap(md, y.data())},
                                           {DNNL_ARG_DIFF_DST, dnnl_->wrap(md, grad_output.data())},
                                           {DNNL_ARG_DIFF_SRC, dnnl_->wrap(md, dx.data())}});
  return dx;
}

namespace {

batch_norm_loops::Planes planes_of(const Box& b) {
  return {b.dim[0].size(), b.dim[1].size(), b.dim[2].size() * b.dim[3].size()};
}

}  // namespace

BatchNormStats OnednnKernels::do_batch_norm_statistics(const LayerRef& /*l*/, const Tensor& x, const Box& out_box) {
  BatchNormStats s;
  s.channels = out_box.dim[1];
  s.sum.assign(static_cast<size_t>(s.channels.size()), 0.0);
  s.sum_sq = s.sum;
  s.count = out_box.dim[0].size() * out_box.dim[2].size() * out_box.dim[3].size();
  batch_norm_loops::statistics(x.data(), planes_of(out_box), s.sum.data(), s.sum_sq.data());
  return s;
}

Tensor OnednnKernels::do_batch_norm_forward(const LayerRef& /*l*/, const LayerParams& params, const Tensor& x,
                                            const BatchNormStats& global, const Box& out_box) {
  const Normalization z = normalization(global, params.eps);
  Tensor y(out_box, Tensor::kUninitialized);
  batch_norm_loops::forward(x.data(), y.data(), planes_of(out_box), z.mean.data(), z.inv_std.data(),
                            params.weight.data(), params.bias.data());
  return y;
}

BatchNormGradStats OnednnKernels::do_batch_norm_backward_statistics(const LayerRef& /*l*/, const LayerParams& params,
                                                                    const Tensor& x, const Tensor& grad_output,
                                                                    const BatchNormStats& global) {
  const Box& out_box = grad_output.box();
  const Normalization z = normalization(global, params.eps);
  BatchNormGradStats g = zero_grad_stats(out_box);
  batch_norm_loops::backward_sums(x.data(), grad_output.data(), planes_of(out_box), z.mean.data(), z.inv_std.data(),
                                  g.sum_dy.data(), g.sum_dy_xhat.data());
  return g;
}

Tensor OnednnKernels::do_batch_norm_backward(const LayerRef& /*l*/, const LayerParams& params, const Tensor& x,
                                             const Tensor& grad_output, const BatchNormStats& global,
                                             const BatchNormGradStats& global_grad) {
  const Box& out_box = grad_output.box();
  const Normalization z = normalization(global, params.eps);
  Tensor dx(out_box, Tensor::kUninitialized);
  batch_norm_loops::backward(x.data(), grad_output.data(), dx.data(), planes_of(out_box), z.mean.data(),
                             z.inv_std.data(), params.weight.data(), global_grad.sum_dy.data(),
                             global_grad.sum_dy_xhat.data(), static_cast<double>(global.count));
  return dx;
}

LossTile OnednnKernels::do_softmax_cross_entropy_forward(const LayerRef& l, const Tensor& x,
                                                         const std::vector<int64_t>& labels, const Box& out_box) {
  const int64_t classes = out_box.dim[1].size() * out_box.dim[2].size() * out_box.dim[3].size();
  const memory::desc md = plain({out_box.dim[0].size(), classes});
  const dnnl::logsoftmax_forward::primitive_desc pd(dnnl::logsoftmax_forward::desc(prop_kind::forward_training, md, 1),
                                                    dnnl_->engine);
  Tensor log_p(out_box, Tensor::kUninitialized);
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

namespace {

// The oneDNN 2.6 eltwise algorithm of an activation, where one computes PyTorch's function
// (and, for the backward, its gradient at the kinks); nullopt: the reference loop runs it.
// clip_v2 (not clip) has PyTorch's hardtanh gradient, 0 at exactly min and max. 2.6 has
// no hardsigmoid, and its hardswish gradient is 0 at x = -3, where PyTorch's is -dy/2.
struct Eltwise {
  algorithm alg;
  float alpha = 0, beta = 0;
};

std::optional<Eltwise> eltwise_of(const Layer& layer, bool backward) {
  switch (layer.activation) {
    case ActivationKind::kClip:
      return Eltwise{algorithm::eltwise_clip_v2, static_cast<float>(layer.alpha), static_cast<float>(layer.beta)};
    case ActivationKind::kSigmoid:
      return Eltwise{algorithm::eltwise_logistic};
    case ActivationKind::kSilu:
      return Eltwise{algorithm::eltwise_swish, 1.0f};
    case ActivationKind::kHardSwish:
      if (backward) return std::nullopt;
      return Eltwise{algorithm::eltwise_hardswish};
    case ActivationKind::kHardSigmoid:
      return std::nullopt;
    case ActivationKind::kGelu:
      return Eltwise{layer.gelu_approximation == GeluApproximation::kTanh ? algorithm::eltwise_gelu_tanh
                                                                          : algorithm::eltwise_gelu_erf};
  }
  return std::nullopt;
}

dnnl::eltwise_forward::primitive_desc eltwise_pd(const dnnl::engine& eng, const Eltwise& e, const memory::desc& md) {
  return dnnl::eltwise_forward::primitive_desc(
      dnnl::eltwise_forward::desc(prop_kind::forward_training, e.alg, md, e.alpha, e.beta), eng);
}

}  // namespace

Tensor OnednnKernels::do_activation_forward(const LayerRef& l, const Tensor& x, const Box& out_box) {
  const std::optional<Eltwise> e = eltwise_of(l.layer, false);
  if (!e) return ReferenceKernels::do_activation_forward(l, x, out_box);
  const memory::desc md = plain(dims_of(out_box));
  Tensor y(out_box, Tensor::kUninitialized);
  dnnl_->run(dnnl::eltwise_forward(eltwise_pd(dnnl_->engine, *e, md)),
             {{DNNL_ARG_SRC, dnnl_->wrap(md, x.data())}, {DNNL_ARG_DST, dnnl_->wrap(md, y.data())}});
  return y;
}

Tensor OnednnKernels::do_activation_backward(const LayerRef& l, const Tensor& x, const Tensor& grad_output) {
  const std::optional<Eltwise> e = eltwise_of(l.layer, true);
  if (!e) return ReferenceKernels::do_activation_backward(l, x, grad_output);
  const Box& box = grad_output.box();
  const memory::desc md = plain(dims_of(box));
  const dnnl::eltwise_backward::primitive_desc bwd(dnnl::eltwise_backward::desc(e->alg, md, md, e->alpha, e->beta),
                                                   dnnl_->engine, eltwise_pd(dnnl_->engine, *e, md));
  Tensor dx(box, Tensor::kUninitialized);
  dnnl_->run(dnnl::eltwise_backward(bwd), {{DNNL_ARG_SRC, dnnl_->wrap(md, x.data())},
                                           {DNNL_ARG_DIFF_DST, dnnl_->wrap(md, grad_output.data())},
                                           {DNNL_ARG_DIFF_SRC, dnnl_->wrap(md, dx.data())}});
  return dx;
}

}  // namespace layerplan
