// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
// GpuKernels' dropout, global average pooling, GELU, concat, add, loss and channel shuffle (gpu_kernels.h).
#include "runtime/gpu/gpu_kernels_state.h"
#include "runtime/gpu/pointwise_kernels.h"

namespace layerplan {

using gpu::Dims4;

namespace {

Dims4 origin_of(const Box& b) { return {b.dim[0].lo, b.dim[1].lo, b.dim[2].lo, b.dim[3].lo}; }
Dims4 whole_of(const Shape& s) { return {s.n(), s.c(), s.h(), s.w()}; }

Tensor dropout_on(gpu::GpuContext& ctx, const LayerRef& l, const Tensor& x, uint64_t seed) {
  ctx.arena().reset();
  const float* ux = ctx.upload(x);
  float* y = ctx.arena().allocate_n<float>(static_cast<size_t>(x.size()));
  gpu::dropout(ux, y, gpu::extents(x.box()), origin_of(x.box()), whole_of(l.layer.output), seed, l.layer.dropout_ratio,
               ctx.stream());
  return ctx.download(y, x.box());
}

// A channel shuffle's tile (it holds every channel) through the CUDA kernel, into a tensor
// of `to_box` (the tile's box again: the permutation keeps the box).
Tensor channel_shuffle_on(gpu::GpuContext& ctx, const LayerRef& l, const Tensor& from, const Box& to_box,
                          bool inverse) {
  ctx.arena().reset();
  const Box& b = from.box();
  const float* x = ctx.upload(from);
  float* y = ctx.arena().allocate_n<float>(static_cast<size_t>(to_box.volume()));
  gpu::channel_shuffle(x, y, b.dim[0].size(), b.dim[1].size(), b.dim[2].size() * b.dim[3].size(), l.layer.groups,
                       inverse, ctx.stream());
  return ctx.download(y, to_box);
}

}  // namespace

Tensor GpuKernels::do_channel_copy_forward(const LayerRef& l, const Tensor& x, const Box& out_box) {
  if (l.layer.kind == LayerKind::kChannelSlice) return ReferenceKernels::do_channel_copy_forward(l, x, out_box);
  return channel_shuffle_on(state_->ctx, l, x, out_box, false);
}

Tensor GpuKernels::do_channel_copy_backward(const LayerRef& l, const Tensor& grad_output) {
  if (l.layer.kind == LayerKind::kChannelSlice) return ReferenceKernels::do_channel_copy_backward(l, grad_output);
  return channel_shuffle_on(state_->ctx, l, grad_output, l.required_input(0, grad_output.box()), true);
}

Tensor GpuKernels::do_dropout_forward(const LayerRef& l, const Tensor& x, const Box& /*out_box*/, uint64_t seed) {
  return dropout_on(state_->ctx, l, x, seed);
}

Tensor GpuKernels::do_dropout_backward(const LayerRef& l, const Tensor& grad_output, uint64_t seed) {
  return dropout_on(state_->ctx, l, grad_output, seed);  // the same mask and scale: dropout is linear
}

Tensor GpuKernels::do_global_avg_pool_forward(const LayerRef& l, const Tensor& x, const Box& out_box) {
  gpu::GpuContext& ctx = state_->ctx;
  ctx.arena().reset();
  const Shape& s = l.input_shape(0);
  const float* ux = ctx.upload(x);
  float* y = ctx.arena().allocate_n<float>(static_cast<size_t>(out_box.volume()));
  gpu::global_avg_pool_forward(ux, y, out_box.volume(), s.h() * s.w(), ctx.stream());
  return ctx.download(y, out_box);
}

Tensor GpuKernels::do_global_avg_pool_backward(const LayerRef& l, const Tensor& grad_output) {
  gpu::GpuContext& ctx = state_->ctx;
  ctx.arena().reset();
  const Shape& s = l.input_shape(0);
  const Box in_box = l.required_input(0, grad_output.box());
  const float* dy = ctx.upload(grad_output);
  float* dx = ctx.arena().allocate_n<float>(static_cast<size_t>(in_box.volume()));
  gpu::global_avg_pool_backward(dy, dx, grad_output.size(), s.h() * s.w(), ctx.stream());
  return ctx.download(dx, in_box);
}

Tensor GpuKernels::do_activation_forward(const LayerRef& l, const Tensor& x, const Box& out_box) {
  if (l.layer.activation != ActivationKind::kGelu) return ReferenceKernels::do_activation_forward(l, x, out_box);
  gpu::GpuContext& ctx = state_->ctx;
  ctx.arena().reset();
  const float* ux = ctx.upload(x);
  float* y = ctx.arena().allocate_n<float>(static_cast<size_t>(x.size()));
  gpu::gelu_forward(ux, y, x.size(), l.layer.gelu_approximation == GeluApproximation::kTanh, ctx.stream());
  return ctx.download(y, out_box);
}

Tensor GpuKernels::do_activation_backward(const LayerRef& l, const Tensor& x, const Tensor& grad_output) {
  if (l.layer.activation != ActivationKind::kGelu) return ReferenceKernels::do_activation_backward(l, x, grad_output);
  gpu::GpuContext& ctx = state_->ctx;
  ctx.arena().reset();
  const float* ux = ctx.upload(x);
  const float* dy = ctx.upload(grad_output);
  float* dx = ctx.arena().allocate_n<float>(static_cast<size_t>(grad_output.size()));
  gpu::gelu_backward(ux, dy, dx, grad_output.size(), l.layer.gelu_approximation == GeluApproximation::kTanh,
                     ctx.stream());
  return ctx.download(dx, grad_output.box());
}

Tensor GpuKernels::do_concat_forward(const LayerRef& l, const std::vector<const Tensor*>& xs, const Box& out_box) {
  gpu::GpuContext& ctx = state_->ctx;
  ctx.arena().reset();
  const Dims4 out = gpu::extents(out_box);
  float* y = ctx.arena().allocate_n<float>(static_cast<size_t>(out_box.volume()));
  gpu::fill(y, out_box.volume(), 0.0f, ctx.stream());
  int64_t offset = 0;  // first channel of the slot in the output
  for (size_t slot = 0; slot < xs.size(); ++slot) {
    const Tensor& x = *xs[slot];  // empty where the tile misses the slot's channels
    if (x.size() > 0) {
      const Dims4 ext = gpu::extents(x.box());
      const Dims4 at = {0, x.box().dim[1].lo + offset - out_box.dim[1].lo, 0, 0};
      gpu::copy_box(ctx.upload(x), ext, {0, 0, 0, 0}, y, out, at, ext, false, ctx.stream());
    }
    offset += l.input_shape(static_cast<int>(slot)).c();
  }
  return ctx.download(y, out_box);
}

std::vector<Tensor> GpuKernels::do_concat_backward(const LayerRef& l, const Tensor& grad_output) {
  gpu::GpuContext& ctx = state_->ctx;
  ctx.arena().reset();
  const Box& out_box = grad_output.box();
  const float* dy = ctx.upload(grad_output);
  std::vector<Tensor> out;
  int64_t offset = 0;
  for (size_t slot = 0; slot < l.layer.inputs.size(); ++slot) {
    const Box in_box = l.required_input(static_cast<int>(slot), out_box);
    if (in_box.empty()) {
      out.emplace_back(in_box);
    } else {
      const Dims4 ext = gpu::extents(in_box);
      const Dims4 at = {0, in_box.dim[1].lo + offset - out_box.dim[1].lo, 0, 0};
      float* dx = ctx.arena().allocate_n<float>(static_cast<size_t>(in_box.volume()));
      gpu::copy_box(dy, gpu::extents(out_box), at, dx, ext, {0, 0, 0, 0}, ext, false, ctx.stream());
      out.push_back(ctx.download(dx, in_box));
    }
    offset += l.input_shape(static_cast<int>(slot)).c();
  }
  return out;
}

Tensor GpuKernels::do_add_forward(const LayerRef& /*l*/, const std::vector<const Tensor*>& xs, const Box& out_box) {
  gpu::GpuContext& ctx = state_->ctx;
  ctx.arena().reset();
  float* y = ctx.arena().allocate_n<float>(static_cast<size_t>(out_box.volume()));
  gpu::fill(y, out_box.volume(), 0.0f, ctx.stream());
  for (const Tensor* x : xs) gpu::add_into(y, ctx.upload(*x), x->size(), ctx.stream());  // each x is the tile's box
  return ctx.download(y, out_box);
}

LossTile GpuKernels::do_softmax_cross_entropy_forward(const LayerRef& l, const Tensor& x,
                                                      const std::vector<int64_t>& labels, const Box& out_box) {
  gpu::GpuContext& ctx = state_->ctx;
  ctx.arena().reset();
  const int64_t samples = out_box.dim[0].size(), classes = x.size() / samples;
  float* p = ctx.arena().allocate_n<float>(static_cast<size_t>(x.size()));
  auto* loss = static_cast<double*>(ctx.arena().allocate(static_cast<size_t>(samples) * sizeof(double)));
  gpu::softmax_cross_entropy_forward(ctx.upload(x), ctx.upload(labels), p, loss, samples, classes, ctx.stream());
  LossTile out{ctx.download(p, out_box), 0.0};
  for (const double share : ctx.download_doubles(loss, samples)) out.loss += share;  // in sample order
  out.loss /= static_cast<double>(l.layer.output.n());
  return out;
}

Tensor GpuKernels::do_softmax_cross_entropy_backward(const LayerRef& l, const Tensor& probabilities,
                                                     const std::vector<int64_t>& labels) {
  gpu::GpuContext& ctx = state_->ctx;
  ctx.arena().reset();
  const int64_t samples = probabilities.box().dim[0].size(), classes = probabilities.size() / samples;
  float* dx = ctx.arena().allocate_n<float>(static_cast<size_t>(probabilities.size()));
  gpu::softmax_cross_entropy_backward(ctx.upload(probabilities), ctx.upload(labels), dx, samples, classes,
                                      static_cast<double>(l.layer.output.n()), ctx.stream());
  return ctx.download(dx, probabilities.box());
}

}  // namespace layerplan
