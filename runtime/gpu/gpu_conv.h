#pragma once
// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
// Convolution of one tile with cuDNN's legacy API (cudnnConvolutionForward, BackwardData,
// BackwardFilter): the tile's input, halo included, is copied into a buffer with the zero
// padding it needs at the true border of the tensor, and convolved with padding 0. That
// avoids the legacy API's symmetric-only padding, which a border tile (padding on one side)
// cannot use. Algorithms are chosen once per tile shape with cudnnFind*AlgorithmEx and cached;
// in fp32 only those that run CUDNN_FMA_MATH (no TF32) are taken.
#include <map>
#include <tuple>

#include "runtime/gpu/gpu_context.h"
#include "runtime/kernels/kernel_types.h"
#include "runtime/kernels/params.h"

namespace layerplan::gpu {

class GpuConv {
 public:
  explicit GpuConv(GpuContext& context) : ctx_(context) {}
  Tensor forward(const LayerRef& l, const LayerParams& params, const Tensor& x, const Box& out_box);
  WeightedGrads backward(const LayerRef& l, const LayerParams& params, const Tensor& x, const Tensor& grad_output);

 private:
  struct Descs;
  // (pass, padded input n c h w, out channels, window kh kw sh sw, groups) -> algorithm
  using Key = std::tuple<int, int64_t, int64_t, int64_t, int64_t, int64_t, int, int, int, int, int64_t>;
  // Each searches once per tile shape (cudnnFind*AlgorithmEx, which runs the candidates on
  // these buffers and `workspace` of kWorkspaceBytes) and caches the choice.
  int forward_algorithm(const Descs& d, const float* x, const float* w, float* y, void* workspace);
  int backward_data_algorithm(const Descs& d, const float* w, const float* dy, float* dx, void* workspace);
  int backward_filter_algorithm(const Descs& d, const float* x, const float* dy, float* dw, void* workspace);

  GpuContext& ctx_;
  std::map<Key, int> algorithms_;
};

}  // namespace layerplan::gpu
