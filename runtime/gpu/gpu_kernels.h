#pragma once
// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
// The GPU backend of the kernel interface (runtime/kernels/kernels.h, docs/kernels.md
// "Adding a backend"), on one CUDA device:
//   conv2d forward and backward   cuDNN (gpu_conv.h: halo tile padded into its buffer, padding 0)
//   max_pool and avg_pool forward cuDNN pooling on the padded tile (max: -inf padding)
//   avg_pool backward             cuDNN pooling backward
//   fully_connected fwd and bwd   cuBLAS SGEMM (no TF32 in fp32) + own bias kernel
//   relu forward and backward     own kernels
//   batch norm, all four steps    own kernels (batch_norm_kernels.h: partial statistics)
//   dropout, global average pooling, softmax cross-entropy: own kernels (pointwise_kernels.h)
//   add forward, concat forward and backward: own box-copy and add kernels
//   channel shuffle forward and backward: own kernel (pointwise_kernels.h)
// and, inherited from ReferenceKernels, the plain loops on the host for the rest: max-pool
// backward (its first-maximum rule; cuDNN's rule for ties is not documented), and the pure
// copies flatten (forward and backward), channel slice (whose tile holds the same values as
// its input's box) and add backward. The executor's tensors are host memory, so every GPU kernel
// uploads its operands into the device arena and downloads its result.
#include <cstddef>
#include <memory>

#include "runtime/gpu/precision.h"
#include "runtime/kernels/reference_kernels.h"

namespace layerplan {

class GpuKernels : public ReferenceKernels {
 public:
  // On CUDA device `device`, with one device arena of `arena_bytes` (cuDNN's workspace included).
  GpuKernels(int device, Precision precision, size_t arena_bytes = size_t{2} << 30);
  ~GpuKernels() override;
  GpuKernels(const GpuKernels&) = delete;
  GpuKernels& operator=(const GpuKernels&) = delete;

  // The most of the arena any kernel call used.
  size_t peak_device_bytes() const;

 protected:
  std::string_view backend_name() const override { return "gpu"; }
  Tensor do_conv2d_forward(const LayerRef& l, const LayerParams& params, const Tensor& x, const Box& out_box) override;
  WeightedGrads do_conv2d_backward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                   const Tensor& grad_output) override;
  Tensor do_max_pool_forward(const LayerRef& l, const Tensor& x, const Box& out_box) override;
  Tensor do_avg_pool_forward(const LayerRef& l, const Tensor& x, const Box& out_box) override;
  Tensor do_avg_pool_backward(const LayerRef& l, const Tensor& grad_output) override;
  Tensor do_fully_connected_forward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                    const Box& out_box) override;
  WeightedGrads do_fully_connected_backward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                            const Tensor& grad_output) override;
  Tensor do_relu_forward(const LayerRef& l, const Tensor& x, const Box& out_box) override;
  Tensor do_relu_backward(const LayerRef& l, const Tensor& y, const Tensor& grad_output) override;
  // GELU on the GPU; the other activations by the reference loops.
  Tensor do_activation_forward(const LayerRef& l, const Tensor& x, const Box& out_box) override;
  Tensor do_activation_backward(const LayerRef& l, const Tensor& x, const Tensor& grad_output) override;
  BatchNormStats do_batch_norm_statistics(const LayerRef& l, const Tensor& x, const Box& out_box) override;
  Tensor do_batch_norm_forward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                               const BatchNormStats& global, const Box& out_box) override;
  BatchNormGradStats do_batch_norm_backward_statistics(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                                       const Tensor& grad_output,
                                                       const BatchNormStats& global) override;
  Tensor do_batch_norm_backward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                const Tensor& grad_output, const BatchNormStats& global,
                                const BatchNormGradStats& global_grad) override;
  Tensor do_global_avg_pool_forward(const LayerRef& l, const Tensor& x, const Box& out_box) override;
  Tensor do_global_avg_pool_backward(const LayerRef& l, const Tensor& grad_output) override;
  Tensor do_dropout_forward(const LayerRef& l, const Tensor& x, const Box& out_box, uint64_t seed) override;
  Tensor do_dropout_backward(const LayerRef& l, const Tensor& grad_output, uint64_t seed) override;
  Tensor do_concat_forward(const LayerRef& l, const std::vector<const Tensor*>& xs, const Box& out_box) override;
  std::vector<Tensor> do_concat_backward(const LayerRef& l, const Tensor& grad_output) override;
  Tensor do_add_forward(const LayerRef& l, const std::vector<const Tensor*>& xs, const Box& out_box) override;
  LossTile do_softmax_cross_entropy_forward(const LayerRef& l, const Tensor& x, const std::vector<int64_t>& labels,
                                            const Box& out_box) override;
  Tensor do_softmax_cross_entropy_backward(const LayerRef& l, const Tensor& probabilities,
                                           const std::vector<int64_t>& labels) override;
  Tensor do_channel_copy_forward(const LayerRef& l, const Tensor& x, const Box& out_box) override;
  Tensor do_channel_copy_backward(const LayerRef& l, const Tensor& grad_output) override;

 public:
  struct State;  // gpu_kernels_state.h

 private:
  std::unique_ptr<State> state_;
};

}  // namespace layerplan
