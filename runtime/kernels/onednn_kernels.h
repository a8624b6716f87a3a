#pragma once
// Kernels on oneDNN 2.6 (CPU, plain NCHW buffers wrapped without copies): convolution
// (forward, backward data, backward weights), max, average and global average pooling,
// inner product, ReLU, batch-norm forward (with the caller's global statistics), and
// log-softmax for the loss. Batch norm's statistics and backward run the plane loops of
// batch_norm_loops.h; dropout, flatten, concat, add and the loss's backward run the
// reference loops it inherits (docs/kernels.md). A tile's padding is passed to oneDNN per
// side (padding_l/padding_r): nonzero only where the tile touches the true border.
// Activations run oneDNN's eltwise where 2.6 has PyTorch's function (onednn_kernels.cc,
// eltwise_of), else the reference loops, as mul does.
#include <memory>

#include "runtime/kernels/reference_kernels.h"

namespace layerplan {

// Not thread-safe: it owns one oneDNN stream; use one instance per thread.
class OnednnKernels : public ReferenceKernels {
 public:
  // threads > 0 sets OpenMP's thread count of the calling thread (oneDNN's CPU runtime is
  // OpenMP in Debian's build); 0 leaves OMP_NUM_THREADS in charge.
  explicit OnednnKernels(int threads = 0);
  ~OnednnKernels() override;

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
  LossTile do_softmax_cross_entropy_forward(const LayerRef& l, const Tensor& x, const std::vector<int64_t>& labels,
                                            const Box& out_box) override;
  Tensor do_activation_forward(const LayerRef& l, const Tensor& x, const Box& out_box) override;
  Tensor do_activation_backward(const LayerRef& l, const Tensor& x, const Tensor& grad_output) override;

 private:
  // Convolution of a tile that holds whole groups (`groups` of them, 1 when the layer is
  // not grouped) or channels inside one group (`groups` 1).
  Tensor conv_forward_piece(const LayerRef& l, const LayerParams& params, const Tensor& x, const Box& out_box,
                            int64_t groups);
  WeightedGrads conv_backward_piece(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                    const Tensor& grad_output, int64_t groups);

  struct Engine;  // dnnl::engine and stream, kept out of this header
  std::unique_ptr<Engine> dnnl_;
};

}  // namespace layerplan
