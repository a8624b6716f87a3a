#pragma once
// Kernels as plain loops over global coordinates: the specification every other backend
// is tested against. Accumulates sums in double. Single-threaded and slow.
#include "runtime/kernels/kernels.h"

namespace layerplan {

class ReferenceKernels : public Kernels {
 public:
  std::string_view name() const override;
  Tensor conv2d_forward(const LayerRef& l, const LayerParams& params, const Tensor& input, const Box& out_box) override;
  WeightedGrads conv2d_backward(const LayerRef& l, const LayerParams& params, const Tensor& input, const Tensor& grad_output) override;
  Tensor max_pool_forward(const LayerRef& l, const Tensor& input, const Box& out_box) override;
  Tensor max_pool_backward(const LayerRef& l, const Tensor& input, const Tensor& grad_output) override;
  Tensor avg_pool_forward(const LayerRef& l, const Tensor& input, const Box& out_box) override;
  Tensor avg_pool_backward(const LayerRef& l, const Tensor& grad_output) override;
  Tensor global_avg_pool_forward(const LayerRef& l, const Tensor& input, const Box& out_box) override;
  Tensor global_avg_pool_backward(const LayerRef& l, const Tensor& grad_output) override;
  Tensor fully_connected_forward(const LayerRef& l, const LayerParams& params, const Tensor& input, const Box& out_box) override;
  WeightedGrads fully_connected_backward(const LayerRef& l, const LayerParams& params, const Tensor& input, const Tensor& grad_output) override;
  Tensor relu_forward(const LayerRef& l, const Tensor& input, const Box& out_box) override;
  Tensor relu_backward(const LayerRef& l, const Tensor& output, const Tensor& grad_output) override;
  BatchNormStats batch_norm_statistics(const LayerRef& l, const Tensor& input, const Box& out_box) override;
  Tensor batch_norm_forward(const LayerRef& l, const LayerParams& params, const Tensor& input, const BatchNormStats& global, const Box& out_box) override;
  BatchNormGradStats batch_norm_backward_statistics(const LayerRef& l, const LayerParams& params, const Tensor& input, const Tensor& grad_output, const BatchNormStats& global) override;
  Tensor batch_norm_backward(const LayerRef& l, const LayerParams& params, const Tensor& input, const Tensor& grad_output, const BatchNormStats& global, const BatchNormGradStats& global_grad) override;
  Tensor dropout_forward(const LayerRef& l, const Tensor& input, const Box& out_box, uint64_t seed) override;
  Tensor dropout_backward(const LayerRef& l, const Tensor& grad_output, uint64_t seed) override;
  Tensor flatten_forward(const LayerRef& l, const Tensor& input, const Box& out_box) override;
  Tensor flatten_backward(const LayerRef& l, const Tensor& grad_output) override;
  Tensor concat_forward(const LayerRef& l, const std::vector<const Tensor*>& inputs, const Box& out_box) override;
  std::vector<Tensor> concat_backward(const LayerRef& l, const Tensor& grad_output) override;
  Tensor add_forward(const LayerRef& l, const std::vector<const Tensor*>& inputs, const Box& out_box) override;
  std::vector<Tensor> add_backward(const LayerRef& l, const Tensor& grad_output) override;
  LossTile softmax_cross_entropy_forward(const LayerRef& l, const Tensor& logits, const std::vector<int64_t>& labels, const Box& out_box) override;
  Tensor softmax_cross_entropy_backward(const LayerRef& l, const Tensor& probabilities, const std::vector<int64_t>& labels) override;};

}  // namespace layerplan
