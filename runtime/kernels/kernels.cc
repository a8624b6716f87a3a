// The public Kernels functions: each checks its arguments and crops its inputs to the
// tile's boxes once, for every backend, then calls the backend's do_* function.
#include "runtime/kernels/kernels.h"

#include "runtime/kernels/kernel_checks.h"

namespace layerplan {

using namespace kernels_internal;

Tensor Kernels::conv2d_forward(const LayerRef& l, const LayerParams& params, const Tensor& input, const Box& out_box) {
  check_tile(l, LayerKind::kConv2d, out_box);
  check_params(l, params, out_box);
  return do_conv2d_forward(l, params, *input_tile(l, 0, input, out_box), out_box);
}

WeightedGrads Kernels::conv2d_backward(const LayerRef& l, const LayerParams& params, const Tensor& input,
                                       const Tensor& grad_output) {
  const Box& out_box = grad_output.box();
  check_tile(l, LayerKind::kConv2d, out_box);
  check_params(l, params, out_box);
  return do_conv2d_backward(l, params, *input_tile(l, 0, input, out_box), grad_output);
}

Tensor Kernels::max_pool_forward(const LayerRef& l, const Tensor& input, const Box& out_box) {
  check_tile(l, LayerKind::kMaxPool, out_box);
  return do_max_pool_forward(l, *input_tile(l, 0, input, out_box), out_box);
}

Tensor Kernels::max_pool_backward(const LayerRef& l, const Tensor& input, const Tensor& grad_output) {
  check_tile(l, LayerKind::kMaxPool, grad_output.box());
  return do_max_pool_backward(l, *input_tile(l, 0, input, grad_output.box()), grad_output);
}

Tensor Kernels::avg_pool_forward(const LayerRef& l, const Tensor& input, const Box& out_box) {
  check_tile(l, LayerKind::kAvgPool, out_box);
  return do_avg_pool_forward(l, *input_tile(l, 0, input, out_box), out_box);
}

Tensor Kernels::avg_pool_backward(const LayerRef& l, const Tensor& grad_output) {
  check_tile(l, LayerKind::kAvgPool, grad_output.box());
  return do_avg_pool_backward(l, grad_output);
}

Tensor Kernels::global_avg_pool_forward(const LayerRef& l, const Tensor& input, const Box& out_box) {
  check_tile(l, LayerKind::kGlobalAvgPool, out_box);
  return do_global_avg_pool_forward(l, *input_tile(l, 0, input, out_box), out_box);
}

Tensor Kernels::global_avg_pool_backward(const LayerRef& l, const Tensor& grad_output) {
  check_tile(l, LayerKind::kGlobalAvgPool, grad_output.box());
  return do_global_avg_pool_backward(l, grad_output);
}

Tensor Kernels::fully_connected_forward(const LayerRef& l, const LayerParams& params, const Tensor& input,
                                        const Box& out_box) {
  check_tile(l, LayerKind::kFullyConnected, out_box);
  check_params(l, params, out_box);
  return do_fully_connected_forward(l, params, *input_tile(l, 0, input, out_box), out_box);
}

WeightedGrads Kernels::fully_connected_backward(const LayerRef& l, const LayerParams& params, const Tensor& input,
                                                const Tensor& grad_output) {
  const Box& out_box = grad_output.box();
  check_tile(l, LayerKind::kFullyConnected, out_box);
  check_params(l, params, out_box);
  return do_fully_connected_backward(l, params, *input_tile(l, 0, input, out_box), grad_output);
}

Tensor Kernels::relu_forward(const LayerRef& l, const Tensor& input, const Box& out_box) {
  check_tile(l, LayerKind::kRelu, out_box);
  return do_relu_forward(l, *input_tile(l, 0, input, out_box), out_box);
}

Tensor Kernels::relu_backward(const LayerRef& l, const Tensor& output, const Tensor& grad_output) {
  check_tile(l, LayerKind::kRelu, grad_output.box());
  return do_relu_backward(l, *TensorTile(output, grad_output.box()), grad_output);
}

BatchNormStats Kernels::batch_norm_statistics(const LayerRef& l, const Tensor& input, const Box& out_box) {
  check_tile(l, LayerKind::kBatchNorm, out_box);
  return do_batch_norm_statistics(l, *input_tile(l, 0, input, out_box), out_box);
}

Tensor Kernels::batch_norm_forward(const LayerRef& l, const LayerParams& params, const Tensor& input,
                                   const BatchNormStats& global, const Box& out_box) {
  check_tile(l, LayerKind::kBatchNorm, out_box);
  check_params(l, params, out_box);
  check_batch_norm_stats(l, global, out_box);
  return do_batch_norm_forward(l, params, *input_tile(l, 0, input, out_box), global, out_box);
}

BatchNormGradStats Kernels::batch_norm_backward_statistics(const LayerRef& l, const LayerParams& params,
                                                           const Tensor& input, const Tensor& grad_output,
                                                           const BatchNormStats& global) {
  const Box& out_box = grad_output.box();
  check_tile(l, LayerKind::kBatchNorm, out_box);
  check_params(l, params, out_box);
  check_batch_norm_stats(l, global, out_box);
  return do_batch_norm_backward_statistics(l, params, *input_tile(l, 0, input, out_box), grad_output, global);
}

Tensor Kernels::batch_norm_backward(const LayerRef& l, const LayerParams& params, const Tensor& input,
                                    const Tensor& grad_output, const BatchNormStats& global,
                                    const BatchNormGradStats& global_grad) {
  const Box& out_box = grad_output.box();
  check_tile(l, LayerKind::kBatchNorm, out_box);
  check_params(l, params, out_box);
  check_batch_norm_stats(l, global, out_box);
  check_batch_norm_stats(l, global_grad, out_box);
  return do_batch_norm_backward(l, params, *input_tile(l, 0, input, out_box), grad_output, global, global_grad);
}

Tensor Kernels::dropout_forward(const LayerRef& l, const Tensor& input, const Box& out_box, uint64_t seed) {
  check_tile(l, LayerKind::kDropout, out_box);
  return do_dropout_forward(l, *input_tile(l, 0, input, out_box), out_box, seed);
}

Tensor Kernels::dropout_backward(const LayerRef& l, const Tensor& grad_output, uint64_t seed) {
  check_tile(l, LayerKind::kDropout, grad_output.box());
  return do_dropout_backward(l, grad_output, seed);
}

Tensor Kernels::flatten_forward(const LayerRef& l, const Tensor& input, const Box& out_box) {
  check_tile(l, LayerKind::kFlatten, out_box);
  // required_input_box throws unless out_box has every feature.
  return do_flatten_forward(l, *input_tile(l, 0, input, out_box), out_box);
}

Tensor Kernels::flatten_backward(const LayerRef& l, const Tensor& grad_output) {
  check_tile(l, LayerKind::kFlatten, grad_output.box());
  return do_flatten_backward(l, grad_output);
}

Tensor Kernels::concat_forward(const LayerRef& l, const std::vector<const Tensor*>& inputs, const Box& out_box) {
  check_tile(l, LayerKind::kConcat, out_box);
  return do_concat_forward(l, *InputTiles(l, inputs, out_box), out_box);
}

std::vector<Tensor> Kernels::concat_backward(const LayerRef& l, const Tensor& grad_output) {
  check_tile(l, LayerKind::kConcat, grad_output.box());
  return do_concat_backward(l, grad_output);
}

Tensor Kernels::add_forward(const LayerRef& l, const std::vector<const Tensor*>& inputs, const Box& out_box) {
  check_tile(l, LayerKind::kAdd, out_box);
  return do_add_forward(l, *InputTiles(l, inputs, out_box), out_box);
}

std::vector<Tensor> Kernels::add_backward(const LayerRef& l, const Tensor& grad_output) {
  check_tile(l, LayerKind::kAdd, grad_output.box());
  return do_add_backward(l, grad_output);
}

LossTile Kernels::softmax_cross_entropy_forward(const LayerRef& l, const Tensor& logits,
                                                const std::vector<int64_t>& labels, const Box& out_box) {
  check_tile(l, LayerKind::kSoftmaxCrossEntropy, out_box);
  check_samples_only(l, out_box);
  const TensorTile x = input_tile(l, 0, logits, out_box);
  check_labels(l, labels, out_box);
  return do_softmax_cross_entropy_forward(l, *x, labels, out_box);
}

Tensor Kernels::softmax_cross_entropy_backward(const LayerRef& l, const Tensor& probabilities,
                                               const std::vector<int64_t>& labels) {
  const Box& box = probabilities.box();
  check_tile(l, LayerKind::kSoftmaxCrossEntropy, box);
  check_samples_only(l, box);
  check_box(probabilities, l.required_input(0, box), "the saved probabilities", l);
  check_labels(l, labels, box);
  return do_softmax_cross_entropy_backward(l, probabilities, labels);
}

Tensor Kernels::activation_forward(const LayerRef& l, const Tensor& input, const Box& out_box) {
  check_tile(l, LayerKind::kActivation, out_box);
  return do_activation_forward(l, *input_tile(l, 0, input, out_box), out_box);
}

Tensor Kernels::activation_backward(const LayerRef& l, const Tensor& input, const Tensor& grad_output) {
  check_tile(l, LayerKind::kActivation, grad_output.box());
  return do_activation_backward(l, *input_tile(l, 0, input, grad_output.box()), grad_output);
}

Tensor Kernels::mul_forward(const LayerRef& l, const std::vector<const Tensor*>& inputs, const Box& out_box) {
  check_tile(l, LayerKind::kMul, out_box);
  return do_mul_forward(l, *InputTiles(l, inputs, out_box), out_box);
}

std::vector<Tensor> Kernels::mul_backward(const LayerRef& l, const std::vector<const Tensor*>& inputs,
                                          const Tensor& grad_output) {
  check_tile(l, LayerKind::kMul, grad_output.box());
  return do_mul_backward(l, *InputTiles(l, inputs, grad_output.box()), grad_output);
}

Tensor Kernels::channel_shuffle_forward(const LayerRef& l, const Tensor& input, const Box& out_box) {
  check_tile(l, LayerKind::kChannelShuffle, out_box);
  // required_input_box throws unless out_box has every channel.
  return do_channel_copy_forward(l, *input_tile(l, 0, input, out_box), out_box);
}

Tensor Kernels::channel_shuffle_backward(const LayerRef& l, const Tensor& grad_output) {
  check_tile(l, LayerKind::kChannelShuffle, grad_output.box());
  l.required_input(0, grad_output.box());  // throws unless the tile has every channel
  return do_channel_copy_backward(l, grad_output);
}

Tensor Kernels::channel_slice_forward(const LayerRef& l, const Tensor& input, const Box& out_box) {
  check_tile(l, LayerKind::kChannelSlice, out_box);
  return do_channel_copy_forward(l, *input_tile(l, 0, input, out_box), out_box);
}

Tensor Kernels::channel_slice_backward(const LayerRef& l, const Tensor& grad_output) {
  check_tile(l, LayerKind::kChannelSlice, grad_output.box());
  return do_channel_copy_backward(l, grad_output);
}

}  // namespace layerplan
