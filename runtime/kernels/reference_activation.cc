// Reference kernels of the element-wise activations (activation_math.h) and of mul, the
// element-wise product whose second input may be an (n, c, 1, 1) scale broadcast over
// height and width (squeeze-and-excitation).
#include "runtime/kernels/activation_math.h"
#include "runtime/kernels/backend_helpers.h"
#include "runtime/kernels/reference_kernels.h"

namespace layerplan {

using namespace kernels_internal;

Tensor ReferenceKernels::do_activation_forward(const LayerRef& l, const Tensor& x, const Box& /*out_box*/) {
  const ActivationFunction f(l.layer);
  Tensor y = x;
  for (int64_t i = 0; i < y.size(); ++i) y.data()[i] = f.forward(y.data()[i]);
  return y;
}

Tensor ReferenceKernels::do_activation_backward(const LayerRef& l, const Tensor& x, const Tensor& grad_output) {
  const ActivationFunction f(l.layer);
  Tensor dx = grad_output;
  for (int64_t i = 0; i < dx.size(); ++i) dx.data()[i] = f.backward(x.data()[i], dx.data()[i]);
  return dx;
}

namespace {

// The element of the scale that multiplies output element (n, c, h, w).
float scale_at(const Tensor& scale, bool broadcast, int64_t n, int64_t c, int64_t h, int64_t w) {
  return broadcast ? scale.at(n, c, 0, 0) : scale.at(n, c, h, w);
}

bool broadcasts(const LayerRef& l) { return l.input_shape(1) != l.layer.output; }

}  // namespace

Tensor ReferenceKernels::do_mul_forward(const LayerRef& l, const std::vector<const Tensor*>& xs, const Box& out_box) {
  const Tensor& x = *xs[0];
  const Tensor& scale = *xs[1];
  const bool broadcast = broadcasts(l);
  Tensor y(out_box, Tensor::kUninitialized);
  for_each_element(out_box, [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    y.at(n, c, h, w) = x.at(n, c, h, w) * scale_at(scale, broadcast, n, c, h, w);
  });
  return y;
}

std::vector<Tensor> ReferenceKernels::do_mul_backward(const LayerRef& l, const std::vector<const Tensor*>& xs,
                                                      const Tensor& grad_output) {
  const Tensor& x = *xs[0];
  const Tensor& scale = *xs[1];
  const Box& box = grad_output.box();
  const bool broadcast = broadcasts(l);
  Tensor dx(box, Tensor::kUninitialized);
  Tensor dscale(scale.box(), Tensor::kUninitialized);
  for_each_element(box, [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    dx.at(n, c, h, w) = grad_output.at(n, c, h, w) * scale_at(scale, broadcast, n, c, h, w);
  });
  if (!broadcast) {
    for_each_element(box, [&](int64_t n, int64_t c, int64_t h, int64_t w) {
      dscale.at(n, c, h, w) = grad_output.at(n, c, h, w) * x.at(n, c, h, w);
    });
    return {std::move(dx), std::move(dscale)};
  }
  // The scale's gradient sums dy * x over the tile's h and w, in double.
  const Box planes{{box.dim[0], box.dim[1], Interval{0, 1}, Interval{0, 1}}};
  for_each_element(planes, [&](int64_t n, int64_t c, int64_t, int64_t) {
    double sum = 0;
    for (int64_t h = box.dim[2].lo; h < box.dim[2].hi; ++h) {
      for (int64_t w = box.dim[3].lo; w < box.dim[3].hi; ++w)
        sum += double{grad_output.at(n, c, h, w)} * x.at(n, c, h, w);
    }
    dscale.at(n, c, 0, 0) = static_cast<float>(sum);
  });
  return {std::move(dx), std::move(dscale)};
}

}  // namespace layerplan
