#pragma once
// The kernel backend interface: forward and backward of every layer kind on one tile.
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
// Implementations: ReferenceKernels (plain loops) and OnednnKernels (oneDNN 2.6).
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "model/geometry.h"
#include "model/model_graph.h"
#include "runtime/kernels/params.h"
#include "runtime/kernels/tensor.h"

namespace layerplan {

// The layer a kernel computes, with the graph that knows its inputs' shapes.
struct LayerRef {
  const ModelGraph& graph;
  const Layer& layer;

  LayerRef(const ModelGraph& g, int id) : graph(g), layer(g.layer(id)) {}
  const Shape& input_shape(int slot) const { return graph.input_shape(layer, slot); }
  Box required_input(int slot, const Box& out_box) const {
    return required_input_box(graph, layer, slot, out_box);
  }
};

// Input gradient (over the box the forward read) and the tile's weight-gradient shard.
struct WeightedGrads {
  Tensor input;
  LayerParams params;
};

// Per-channel partial sums of a batch-norm input over one tile. Summing them over the
// tiles that split samples/height/width (add) gives the statistics of the whole batch.
struct BatchNormStats {
  Interval channels;
  std::vector<double> sum, sum_sq;
  int64_t count = 0;  // elements per channel

  void add(const BatchNormStats& other);  // throws unless the channel ranges match
};

// Per-channel partial sums of the batch-norm backward over one tile: sum of dy and of
// dy * x_hat. Reduced like BatchNormStats; the tile's own (unreduced) sums are its bias
// and weight gradients (batch_norm_weight_grads).
struct BatchNormGradStats {
  Interval channels;
  std::vector<double> sum_dy, sum_dy_xhat;

  void add(const BatchNormGradStats& other);
};

// The loss layer's output for a tile of samples: softmax probabilities (saved for the
// backward) and the tile's share of the mean cross-entropy, sum over the tile's samples
// of -log p[label] divided by the *global* batch size, so that the shares of all tiles
// sum to the single-device mean loss (PyTorch's CrossEntropyLoss, reduction='mean').
struct LossTile {
  Tensor probabilities;
  double loss = 0;
};

// Every zoo dropout is torchvision's nn.Dropout(p=0.5).
inline constexpr double kDropoutProbability = 0.5;
// Whether dropout keeps the element at NCHW linear index `index` of the whole tensor:
// a hash of (seed, index), so every plan drops the same elements.
bool dropout_keeps(uint64_t seed, int64_t index);

// Running statistics update as PyTorch's training mode does it: momentum-weighted, with
// the unbiased variance of the reduced (global) statistics.
void update_running_stats(const BatchNormStats& global, double momentum, LayerParams* params);
// The tile's batch-norm weight (sum dy*x_hat) and bias (sum dy) gradient shard.
LayerParams batch_norm_weight_grads(const BatchNormGradStats& local);

class Kernels {
 public:
  virtual ~Kernels() = default;
  virtual std::string_view name() const = 0;

  // conv2d: params is the shard of out_box's channels.
  virtual Tensor conv2d_forward(const LayerRef& l, const LayerParams& params, const Tensor& input,
                                const Box& out_box) = 0;
  virtual WeightedGrads conv2d_backward(const LayerRef& l, const LayerParams& params, const Tensor& input,
                                        const Tensor& grad_output) = 0;

  // max_pool (padding never wins: PyTorch pads with -inf). The backward routes each
  // output gradient to the first maximum of its window in row-major order.
  virtual Tensor max_pool_forward(const LayerRef& l, const Tensor& input, const Box& out_box) = 0;
  virtual Tensor max_pool_backward(const LayerRef& l, const Tensor& input, const Tensor& grad_output) = 0;

  // avg_pool with PyTorch's count_include_pad=True: every window divides by kh*kw.
  virtual Tensor avg_pool_forward(const LayerRef& l, const Tensor& input, const Box& out_box) = 0;
  virtual Tensor avg_pool_backward(const LayerRef& l, const Tensor& grad_output) = 0;

  virtual Tensor global_avg_pool_forward(const LayerRef& l, const Tensor& input, const Box& out_box) = 0;
  virtual Tensor global_avg_pool_backward(const LayerRef& l, const Tensor& grad_output) = 0;

  // fully_connected: input features are c*h*w of the input in NCHW order (as flatten).
  // A tile splitting output features returns a partial input gradient.
  virtual Tensor fully_connected_forward(const LayerRef& l, const LayerParams& params, const Tensor& input,
                                         const Box& out_box) = 0;
  virtual WeightedGrads fully_connected_backward(const LayerRef& l, const LayerParams& params,
                                                 const Tensor& input, const Tensor& grad_output) = 0;

  virtual Tensor relu_forward(const LayerRef& l, const Tensor& input, const Box& out_box) = 0;
  // Uses the saved *output* (y > 0 exactly where x > 0), so the input need not be kept.
  virtual Tensor relu_backward(const LayerRef& l, const Tensor& output, const Tensor& grad_output) = 0;

  // batch_norm in training mode, in three steps around the caller's all-reduces:
  // statistics of the tile -> (sum over tiles) -> forward with the global statistics.
  virtual BatchNormStats batch_norm_statistics(const LayerRef& l, const Tensor& input, const Box& out_box) = 0;
  virtual Tensor batch_norm_forward(const LayerRef& l, const LayerParams& params, const Tensor& input,
                                    const BatchNormStats& global, const Box& out_box) = 0;
  // Backward: partial sums of the tile -> (sum over tiles) -> input gradient.
  virtual BatchNormGradStats batch_norm_backward_statistics(const LayerRef& l, const LayerParams& params,
                                                            const Tensor& input, const Tensor& grad_output,
                                                            const BatchNormStats& global) = 0;
  virtual Tensor batch_norm_backward(const LayerRef& l, const LayerParams& params, const Tensor& input,
                                     const Tensor& grad_output, const BatchNormStats& global,
                                     const BatchNormGradStats& global_grad) = 0;

  // dropout with p = kDropoutProbability; kept elements scale by 1/(1-p).
  virtual Tensor dropout_forward(const LayerRef& l, const Tensor& input, const Box& out_box, uint64_t seed) = 0;
  virtual Tensor dropout_backward(const LayerRef& l, const Tensor& grad_output, uint64_t seed) = 0;

  // flatten: (n, c, h, w) -> (n, c*h*w, 1, 1); tiles split samples only.
  virtual Tensor flatten_forward(const LayerRef& l, const Tensor& input, const Box& out_box) = 0;
  virtual Tensor flatten_backward(const LayerRef& l, const Tensor& grad_output) = 0;

  // concat along channels: inputs[slot] covers that slot's required box (possibly empty).
  virtual Tensor concat_forward(const LayerRef& l, const std::vector<const Tensor*>& inputs,
                                const Box& out_box) = 0;
  virtual std::vector<Tensor> concat_backward(const LayerRef& l, const Tensor& grad_output) = 0;

  virtual Tensor add_forward(const LayerRef& l, const std::vector<const Tensor*>& inputs, const Box& out_box) = 0;
  virtual std::vector<Tensor> add_backward(const LayerRef& l, const Tensor& grad_output) = 0;

  // softmax_cross_entropy over the classes of each sample; labels[i] is the class of
  // sample out_box.dim[0].lo + i. Tiles split samples only.
  virtual LossTile softmax_cross_entropy_forward(const LayerRef& l, const Tensor& logits,
                                                 const std::vector<int64_t>& labels, const Box& out_box) = 0;
  // Gradient of the global mean loss: (p - onehot(label)) / global batch.
  virtual Tensor softmax_cross_entropy_backward(const LayerRef& l, const Tensor& probabilities,
                                                const std::vector<int64_t>& labels) = 0;
};

// The backends that run kernels: oneDNN 2.6 (the fast one) or the plain loops (the
// reference every other backend is tested against).
enum class KernelBackend { kOnednn, kReference };

// "onednn" or "reference", as `--kernels` takes it.
const char* kernel_backend_name(KernelBackend backend);

// `threads` > 0 sets oneDNN's OpenMP thread count.
std::unique_ptr<Kernels> make_kernels(KernelBackend backend, int threads = 0);
// The backend named "reference" or "onednn"; throws std::invalid_argument for another name.
std::unique_ptr<Kernels> make_kernels(std::string_view backend, int threads = 0);

}  // namespace layerplan
