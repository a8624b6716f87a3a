// Reference kernels of channel shuffle and channel slice: each output element is one input
// element, at the channel source_channel() names; the backward puts each output gradient
// back there. The oneDNN backend uses these loops too (docs/kernels.md).
#include "model/layer_math.h"
#include "runtime/kernels/backend_helpers.h"
#include "runtime/kernels/reference_kernels.h"

namespace layerplan {

using namespace kernels_internal;

Tensor ReferenceKernels::do_channel_copy_forward(const LayerRef& l, const Tensor& x, const Box& out_box) {
  Tensor y(out_box, Tensor::kUninitialized);
  for_each_element(out_box, [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    y.at(n, c, h, w) = x.at(n, source_channel(l.layer, c), h, w);
  });
  return y;
}

Tensor ReferenceKernels::do_channel_copy_backward(const LayerRef& l, const Tensor& grad_output) {
  // Source channels are distinct: every element of the input box gets exactly one value.
  Tensor dx(l.required_input(0, grad_output.box()), Tensor::kUninitialized);
  for_each_element(grad_output.box(), [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    dx.at(n, source_channel(l.layer, c), h, w) = grad_output.at(n, c, h, w);
  });
  return dx;
}

}  // namespace layerplan
