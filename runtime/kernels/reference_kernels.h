#pragma once
// Kernels as plain loops over global coordinates: the specification every other backend
// is tested against. Accumulates sums in double. Single-threaded and slow.
// reference_windowed.cc has the layers with a window or a weight matrix,
// reference_activation.cc activation and mul, reference_channels.cc channel shuffle and
// slice, reference_pointwise.cc the rest.
#include "runtime/kernels/kernels.h"

namespace layerplan {

class ReferenceKernels : public Kernels {
 protected:
  std::string_view backend_name() const override;
  Tensor do_conv2d_forward(const LayerRef& l, const LayerParams& params, const Tensor& x, const Box& out_box) override;
  WeightedGrads do_conv2d_backward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                   const Tensor& grad_output) override;
  Tensor do_max_pool_forward(const LayerRef& l, const Tensor& x, const Box& out_box) override;
  Tensor do_max_pool_backward(const LayerRef& l, const Tensor& x, const Tensor& grad_output) override;
  Tensor do_avg_pool_forward(const LayerRef& l, const Tensor& x, const Box& out_box) override;
  Tensor do_avg_pool_backward(const LayerRef& l, const Tensor& grad_output) override;
  Tensor do_global_avg_pool_forward(const LayerRef& l, const Tensor& x, const Box& out_box) override;
  Tensor do_global_avg_pool_backward(const LayerRef& l, const Tensor& grad_output) override;
  Tensor do_fully_connected_forward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                    const Box& out_box) override;
  WeightedGrads do_fully_connected_backward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                            const Tensor& grad_output) override;
  Tensor do_relu_forward(const LayerRef& l, const Tensor& x, const Box& out_box) override;
  Tensor do_relu_backward(const LayerRef& l, const Tensor& y, const Tensor& grad_output) override;
  BatchNormStats do_batch_norm_statistics(const LayerRef& l, const Tensor& x, const Box& out_box) override;
  Tensor do_batch_norm_forward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                               const BatchNormStats& global, const Box& out_box) override;
  BatchNormGradStats do_batch_norm_backward_statistics(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                                       const Tensor& grad_output,
                                                       const BatchNormStats& global) override;
  Tensor do_batch_norm_backward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                const Tensor& grad_output, const BatchNormStats& global,
                                const BatchNormGradStats& global_grad) override;
  Tensor do_dropout_forward(const LayerRef& l, const Tensor& x, const Box& out_box, uint64_t seed) override;
  Tensor do_dropout_backward(const LayerRef& l, const Tensor& grad_output, uint64_t seed) override;
  Tensor do_flatten_forward(const LayerRef& l, const Tensor& x, const Box& out_box) override;
  Tensor do_flatten_backward(const LayerRef& l, const Tensor& grad_output) override;
  Tensor do_concat_forward(const LayerRef& l, const std::vector<const Tensor*>& xs, const Box& out_box) override;
  std::vector<Tensor> do_concat_backward(const LayerRef& l, const Tensor& grad_output) override;
  Tensor do_add_forward(const LayerRef& l, const std::vector<const Tensor*>& xs, const Box& out_box) override;
  std::vector<Tensor> do_add_backward(const LayerRef& l, const Tensor& grad_output) override;
  LossTile do_softmax_cross_entropy_forward(const LayerRef& l, const Tensor& x, const std::vector<int64_t>& labels,
                                            const Box& out_box) override;
  Tensor do_softmax_cross_entropy_backward(const LayerRef& l, const Tensor& probabilities,
                                           const std::vector<int64_t>& labels) override;
  Tensor do_activation_forward(const LayerRef& l, const Tensor& x, const Box& out_box) override;
  Tensor do_activation_backward(const LayerRef& l, const Tensor& x, const Tensor& grad_output) override;
  Tensor do_mul_forward(const LayerRef& l, const std::vector<const Tensor*>& xs, const Box& out_box) override;
  std::vector<Tensor> do_mul_backward(const LayerRef& l, const std::vector<const Tensor*>& xs,
                                      const Tensor& grad_output) override;
  Tensor do_channel_copy_forward(const LayerRef& l, const Tensor& x, const Box& out_box) override;
  Tensor do_channel_copy_backward(const LayerRef& l, const Tensor& grad_output) override;
};

}  // namespace layerplan
