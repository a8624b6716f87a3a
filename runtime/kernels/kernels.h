#pragma once
// The kernel interface: forward and backward of every layer kind on one tile.
//
// A tile is a box of the layer's whole output tensor (model/geometry.h). A forward
// kernel takes, for each input slot, a tensor covering required_input_box(graph, layer,
// slot, out_box) (a larger tensor is cropped) and returns the tile's output, which equals
// the same box of the whole-tensor result. Zero padding of convolutions and pooling
// applies only at the true border of the input tensor; inside the tensor, the halo the
// tile reads supplies the values.
//
// A backward kernel takes the tile's output gradient (its box is the tile) and returns
// gradients over the same input boxes the forward read, halos included. Overlapping
// halos and the partial input gradients of channel-split tiles are summed by the caller
// at the region's owner (add_intersection). Weight gradients are the tile's contribution
// to its shard; summing them over the tiles that hold the same channels (add_shard)
// gives the whole-tensor gradient.
//
// Batch norm and the loss need values reduced over tiles; their kernels return partial
// sums and take the reduced values back as arguments (docs/kernels.md).
//
// Kernels is a non-virtual interface: each public function checks its arguments (layer
// kind, tile box, parameter shard, reduced sums, labels; std::invalid_argument saying
// what was expected) and crops each input to exactly the box the tile reads, then calls
// the backend's protected do_* function. A backend implements only those.
// Backends: ReferenceKernels (plain loops) and OnednnKernels (oneDNN 2.6).
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "model/geometry.h"
#include "runtime/kernels/kernel_types.h"
#include "runtime/kernels/params.h"
#include "runtime/kernels/tensor.h"

namespace layerplan {

class Kernels {
 public:
  virtual ~Kernels() = default;
  // "reference", "onednn": the backend's name as `--kernels` takes it.
  std::string_view name() const { return backend_name(); }

  // conv2d: params is the shard of out_box's channels.
  Tensor conv2d_forward(const LayerRef& l, const LayerParams& params, const Tensor& input, const Box& out_box);
  WeightedGrads conv2d_backward(const LayerRef& l, const LayerParams& params, const Tensor& input,
                                const Tensor& grad_output);

  // max_pool (padding never wins: PyTorch pads with -inf). The backward routes each
  // output gradient to the first maximum of its window in row-major order.
  Tensor max_pool_forward(const LayerRef& l, const Tensor& input, const Box& out_box);
  Tensor max_pool_backward(const LayerRef& l, const Tensor& input, const Tensor& grad_output);

  // avg_pool with PyTorch's count_include_pad=True: every window divides by kh*kw.
  Tensor avg_pool_forward(const LayerRef& l, const Tensor& input, const Box& out_box);
  Tensor avg_pool_backward(const LayerRef& l, const Tensor& grad_output);

  Tensor global_avg_pool_forward(const LayerRef& l, const Tensor& input, const Box& out_box);
  Tensor global_avg_pool_backward(const LayerRef& l, const Tensor& grad_output);

  // fully_connected: input features are c*h*w of the input in NCHW order (as flatten).
  // A tile splitting output features returns a partial input gradient.
  Tensor fully_connected_forward(const LayerRef& l, const LayerParams& params, const Tensor& input, const Box& out_box);
  WeightedGrads fully_connected_backward(const LayerRef& l, const LayerParams& params, const Tensor& input,
                                         const Tensor& grad_output);

  Tensor relu_forward(const LayerRef& l, const Tensor& input, const Box& out_box);
  // Uses the saved *output* (y > 0 exactly where x > 0), so the input need not be kept.
  Tensor relu_backward(const LayerRef& l, const Tensor& output, const Tensor& grad_output);

  // batch_norm in training mode, in three steps around the caller's all-reduces:
  // statistics of the tile -> (sum over tiles) -> forward with the global statistics.
  BatchNormStats batch_norm_statistics(const LayerRef& l, const Tensor& input, const Box& out_box);
  Tensor batch_norm_forward(const LayerRef& l, const LayerParams& params, const Tensor& input,
                            const BatchNormStats& global, const Box& out_box);
  // Backward: partial sums of the tile -> (sum over tiles) -> input gradient.
  BatchNormGradStats batch_norm_backward_statistics(const LayerRef& l, const LayerParams& params, const Tensor& input,
                                                    const Tensor& grad_output, const BatchNormStats& global);
  Tensor batch_norm_backward(const LayerRef& l, const LayerParams& params, const Tensor& input,
                             const Tensor& grad_output, const BatchNormStats& global,
                             const BatchNormGradStats& global_grad);

  // dropout with p = the layer's dropout_ratio; kept elements scale by 1/(1-p).
  Tensor dropout_forward(const LayerRef& l, const Tensor& input, const Box& out_box, uint64_t seed);
  Tensor dropout_backward(const LayerRef& l, const Tensor& grad_output, uint64_t seed);

  // flatten: (n, c, h, w) -> (n, c*h*w, 1, 1); tiles split samples only.
  Tensor flatten_forward(const LayerRef& l, const Tensor& input, const Box& out_box);
  Tensor flatten_backward(const LayerRef& l, const Tensor& grad_output);

  // concat along channels: inputs[slot] covers that slot's required box (possibly empty,
  // and then it is not read).
  Tensor concat_forward(const LayerRef& l, const std::vector<const Tensor*>& inputs, const Box& out_box);
  std::vector<Tensor> concat_backward(const LayerRef& l, const Tensor& grad_output);

  Tensor add_forward(const LayerRef& l, const std::vector<const Tensor*>& inputs, const Box& out_box);
  std::vector<Tensor> add_backward(const LayerRef& l, const Tensor& grad_output);

  // softmax_cross_entropy over the classes of each sample; labels[i] is the class of
  // sample out_box.dim[0].lo + i. Tiles split samples only.
  LossTile softmax_cross_entropy_forward(const LayerRef& l, const Tensor& logits, const std::vector<int64_t>& labels,
                                         const Box& out_box);
  // Gradient of the global mean loss: (p - onehot(label)) / global batch.
  Tensor softmax_cross_entropy_backward(const LayerRef& l, const Tensor& probabilities,
                                        const std::vector<int64_t>& labels);

  // activation (clip, sigmoid, silu, hardsigmoid, hardswish, gelu: layer.activation), element
  // by element; the backward uses the saved input, with PyTorch's gradient at the kinks
  // (runtime/kernels/activation_math.h).
  Tensor activation_forward(const LayerRef& l, const Tensor& input, const Box& out_box);
  Tensor activation_backward(const LayerRef& l, const Tensor& input, const Tensor& grad_output);

  // mul: inputs[0] * inputs[1], where inputs[1] has the tile's box or is a (n, c, 1, 1)
  // scale read over (tile's n, tile's c, [0,1), [0,1)) and broadcast over h and w. The
  // backward returns {d input, d scale}; a broadcast scale's gradient sums over the tile's
  // h and w, so a tile that splits h or w returns a partial one (summed by the caller).
  Tensor mul_forward(const LayerRef& l, const std::vector<const Tensor*>& inputs, const Box& out_box);
  std::vector<Tensor> mul_backward(const LayerRef& l, const std::vector<const Tensor*>& inputs,
                                   const Tensor& grad_output);

  // channel_shuffle and channel_slice: copies of channels. Output channel c is input
  // channel source_channel(layer, c) (model/layer_math.h); the backward writes each output
  // gradient back to its source channel (a shuffle's inverse permutation). A shuffle's
  // tiles hold every channel (it is never split along channels).
  Tensor channel_shuffle_forward(const LayerRef& l, const Tensor& input, const Box& out_box);
  Tensor channel_shuffle_backward(const LayerRef& l, const Tensor& grad_output);
  Tensor channel_slice_forward(const LayerRef& l, const Tensor& input, const Box& out_box);
  Tensor channel_slice_backward(const LayerRef& l, const Tensor& grad_output);

 protected:
  // What a backend implements, each called by the public function of the same name
  // after its checks, so a backend checks nothing. Guaranteed on entry:
  // - l.layer has the kernel's kind; out_box (the box of grad_output, in a backward) is a
  //   non-empty box inside the layer's output;
  // - x (an input of slot 0; xs[slot] for concat and add) has *exactly* the box the tile
  //   reads, l.required_input(slot, out_box) (an empty box for a concat slot the tile
  //   misses); y, relu's saved output, and the loss's probabilities have exactly the
  //   tile's box;
  // - params is the shard of out_box's channels; global and global_grad are sums of
  //   those channels; labels hold one class in range per sample of the tile, whose
  //   softmax tiles split samples only.
  // Results follow the public contract above (boxes, partial sums).
  virtual std::string_view backend_name() const = 0;

  virtual Tensor do_conv2d_forward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                   const Box& out_box) = 0;
  virtual WeightedGrads do_conv2d_backward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                           const Tensor& grad_output) = 0;
  virtual Tensor do_max_pool_forward(const LayerRef& l, const Tensor& x, const Box& out_box) = 0;
  virtual Tensor do_max_pool_backward(const LayerRef& l, const Tensor& x, const Tensor& grad_output) = 0;
  virtual Tensor do_avg_pool_forward(const LayerRef& l, const Tensor& x, const Box& out_box) = 0;
  virtual Tensor do_avg_pool_backward(const LayerRef& l, const Tensor& grad_output) = 0;
  virtual Tensor do_global_avg_pool_forward(const LayerRef& l, const Tensor& x, const Box& out_box) = 0;
  virtual Tensor do_global_avg_pool_backward(const LayerRef& l, const Tensor& grad_output) = 0;
  virtual Tensor do_fully_connected_forward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                            const Box& out_box) = 0;
  virtual WeightedGrads do_fully_connected_backward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                                    const Tensor& grad_output) = 0;
  virtual Tensor do_relu_forward(const LayerRef& l, const Tensor& x, const Box& out_box) = 0;
  virtual Tensor do_relu_backward(const LayerRef& l, const Tensor& y, const Tensor& grad_output) = 0;
  virtual BatchNormStats do_batch_norm_statistics(const LayerRef& l, const Tensor& x, const Box& out_box) = 0;
  virtual Tensor do_batch_norm_forward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                       const BatchNormStats& global, const Box& out_box) = 0;
  virtual BatchNormGradStats do_batch_norm_backward_statistics(const LayerRef& l, const LayerParams& params,
                                                               const Tensor& x, const Tensor& grad_output,
                                                               const BatchNormStats& global) = 0;
  virtual Tensor do_batch_norm_backward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                        const Tensor& grad_output, const BatchNormStats& global,
                                        const BatchNormGradStats& global_grad) = 0;
  virtual Tensor do_dropout_forward(const LayerRef& l, const Tensor& x, const Box& out_box, uint64_t seed) = 0;
  virtual Tensor do_dropout_backward(const LayerRef& l, const Tensor& grad_output, uint64_t seed) = 0;
  virtual Tensor do_flatten_forward(const LayerRef& l, const Tensor& x, const Box& out_box) = 0;
  virtual Tensor do_flatten_backward(const LayerRef& l, const Tensor& grad_output) = 0;
  virtual Tensor do_concat_forward(const LayerRef& l, const std::vector<const Tensor*>& xs, const Box& out_box) = 0;
  virtual std::vector<Tensor> do_concat_backward(const LayerRef& l, const Tensor& grad_output) = 0;
  virtual Tensor do_add_forward(const LayerRef& l, const std::vector<const Tensor*>& xs, const Box& out_box) = 0;
  virtual std::vector<Tensor> do_add_backward(const LayerRef& l, const Tensor& grad_output) = 0;
  virtual LossTile do_softmax_cross_entropy_forward(const LayerRef& l, const Tensor& x,
                                                    const std::vector<int64_t>& labels, const Box& out_box) = 0;
  virtual Tensor do_softmax_cross_entropy_backward(const LayerRef& l, const Tensor& probabilities,
                                                   const std::vector<int64_t>& labels) = 0;
  virtual Tensor do_activation_forward(const LayerRef& l, const Tensor& x, const Box& out_box) = 0;
  virtual Tensor do_activation_backward(const LayerRef& l, const Tensor& x, const Tensor& grad_output) = 0;
  virtual Tensor do_mul_forward(const LayerRef& l, const std::vector<const Tensor*>& xs, const Box& out_box) = 0;
  virtual std::vector<Tensor> do_mul_backward(const LayerRef& l, const std::vector<const Tensor*>& xs,
                                              const Tensor& grad_output) = 0;
  // Both channel kinds, shuffle and slice.
  virtual Tensor do_channel_copy_forward(const LayerRef& l, const Tensor& x, const Box& out_box) = 0;
  virtual Tensor do_channel_copy_backward(const LayerRef& l, const Tensor& grad_output) = 0;
};

// The backends that run kernels: oneDNN 2.6 (the fast one) or the plain loops (the
// reference every other backend is tested against).
enum class KernelBackend { kOnednn, kReference };

// "onednn" or "reference", as `--kernels` takes it.
const char* kernel_backend_name(KernelBackend backend);

// `threads` > 0 sets oneDNN's OpenMP thread count.
std::unique_ptr<Kernels> make_kernels(KernelBackend backend, int threads = 0);
// The backend named "reference" or "onednn" (for tests and benchmarks); throws
// std::invalid_argument for another name.
std::unique_ptr<Kernels> make_kernels(std::string_view backend, int threads = 0);

}  // namespace layerplan
