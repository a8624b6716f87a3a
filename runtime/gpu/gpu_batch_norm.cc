// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
// GpuKernels' batch norm (gpu_kernels.h): the kernel interface's four steps on the GPU.
#include "runtime/gpu/batch_norm_kernels.h"
#include "runtime/gpu/gpu_kernels_state.h"
#include "runtime/kernels/backend_helpers.h"

namespace layerplan {

namespace {

gpu::Planes planes_of(const Box& b) { return {b.dim[0].size(), b.dim[1].size(), b.dim[2].size() * b.dim[3].size()}; }

}  // namespace

BatchNormStats GpuKernels::do_batch_norm_statistics(const LayerRef& /*l*/, const Tensor& x, const Box& out_box) {
  gpu::GpuContext& ctx = state_->ctx;
  ctx.arena().reset();
  const gpu::Planes p = planes_of(out_box);
  const float* ux = ctx.upload(x);
  auto* sums = static_cast<double*>(ctx.arena().allocate(2 * static_cast<size_t>(p.c) * sizeof(double)));
  gpu::batch_norm_statistics(ux, p, sums, sums + p.c, ctx.stream());
  const std::vector<double> both = ctx.download_doubles(sums, 2 * p.c);
  BatchNormStats s;
  s.channels = out_box.dim[1];
  s.sum.assign(both.begin(), both.begin() + p.c);
  s.sum_sq.assign(both.begin() + p.c, both.end());
  s.count = p.n * p.hw;
  return s;
}

Tensor GpuKernels::do_batch_norm_forward(const LayerRef& /*l*/, const LayerParams& params, const Tensor& x,
                                         const BatchNormStats& global, const Box& out_box) {
  gpu::GpuContext& ctx = state_->ctx;
  ctx.arena().reset();
  const kernels_internal::Normalization z = kernels_internal::normalization(global, params.eps);
  const float* ux = ctx.upload(x);
  float* y = ctx.arena().allocate_n<float>(static_cast<size_t>(x.size()));
  gpu::batch_norm_forward(ux, y, planes_of(out_box), ctx.upload(z.mean), ctx.upload(z.inv_std),
                          ctx.upload(params.weight), ctx.upload(params.bias), ctx.stream());
  return ctx.download(y, out_box);
}

BatchNormGradStats GpuKernels::do_batch_norm_backward_statistics(const LayerRef& /*l*/, const LayerParams& params,
                                                                 const Tensor& x, const Tensor& grad_output,
                                                                 const BatchNormStats& global) {
  gpu::GpuContext& ctx = state_->ctx;
  ctx.arena().reset();
  const Box& out_box = grad_output.box();
  const gpu::Planes p = planes_of(out_box);
  const kernels_internal::Normalization z = kernels_internal::normalization(global, params.eps);
  const float* ux = ctx.upload(x);
  const float* dy = ctx.upload(grad_output);
  auto* sums = static_cast<double*>(ctx.arena().allocate(2 * static_cast<size_t>(p.c) * sizeof(double)));
  gpu::batch_norm_backward_sums(ux, dy, p, ctx.upload(z.mean), ctx.upload(z.inv_std), sums, sums + p.c, ctx.stream());
  const std::vector<double> both = ctx.download_doubles(sums, 2 * p.c);
  BatchNormGradStats g;
  g.channels = out_box.dim[1];
  g.sum_dy.assign(both.begin(), both.begin() + p.c);
  g.sum_dy_xhat.assign(both.begin() + p.c, both.end());
  return g;
}

Tensor GpuKernels::do_batch_norm_backward(const LayerRef& /*l*/, const LayerParams& params, const Tensor& x,
                                          const Tensor& grad_output, const BatchNormStats& global,
                                          const BatchNormGradStats& global_grad) {
  gpu::GpuContext& ctx = state_->ctx;
  ctx.arena().reset();
  const Box& out_box = grad_output.box();
  const kernels_internal::Normalization z = kernels_internal::normalization(global, params.eps);
  const float* ux = ctx.upload(x);
  const float* dy = ctx.upload(grad_output);
  float* dx = ctx.arena().allocate_n<float>(static_cast<size_t>(x.size()));
  gpu::batch_norm_backward(ux, dy, dx, planes_of(out_box), ctx.upload(z.mean), ctx.upload(z.inv_std),
                           ctx.upload(params.weight), ctx.upload(global_grad.sum_dy),
                           ctx.upload(global_grad.sum_dy_xhat), static_cast<double>(global.count), ctx.stream());
  return ctx.download(dx, out_box);
}

}  // namespace layerplan
