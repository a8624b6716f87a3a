// Reference kernels of the layers without a window: relu, batch norm, dropout, flatten,
// concat, add and the softmax cross-entropy loss.
#include <cmath>
#include <stdexcept>
#include <string>

#include "runtime/kernels/backend_helpers.h"
#include "runtime/kernels/reference_kernels.h"

namespace layerplan {

using namespace kernels_internal;

namespace {

int64_t global_index(const Shape& s, int64_t n, int64_t c, int64_t h, int64_t w) {
  return ((n * s.c() + c) * s.h() + h) * s.w() + w;
}

}  // namespace

Tensor ReferenceKernels::do_relu_forward(const LayerRef& /*l*/, const Tensor& x, const Box& /*out_box*/) {
  Tensor y = x;
  for (int64_t i = 0; i < y.size(); ++i) y.data()[i] = std::max(y.data()[i], 0.0f);
  return y;
}

Tensor ReferenceKernels::do_relu_backward(const LayerRef& /*l*/, const Tensor& y, const Tensor& grad_output) {
  Tensor dx = grad_output;
  for (int64_t i = 0; i < dx.size(); ++i) {
    if (!(y.data()[i] > 0.0f)) dx.data()[i] = 0.0f;
  }
  return dx;
}

BatchNormStats ReferenceKernels::do_batch_norm_statistics(const LayerRef& /*l*/, const Tensor& x, const Box& out_box) {
  BatchNormStats s;
  s.channels = out_box.dim[1];
  s.sum.assign(static_cast<size_t>(s.channels.size()), 0.0);
  s.sum_sq = s.sum;
  s.count = out_box.dim[0].size() * out_box.dim[2].size() * out_box.dim[3].size();
  for_each_element(out_box, [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    const double v = x.at(n, c, h, w);
    s.sum[static_cast<size_t>(c - s.channels.lo)] += v;
    s.sum_sq[static_cast<size_t>(c - s.channels.lo)] += v * v;
  });
  return s;
}

Tensor ReferenceKernels::do_batch_norm_forward(const LayerRef& /*l*/, const LayerParams& params, const Tensor& x,
                                               const BatchNormStats& global, const Box& out_box) {
  const Normalization z = normalization(global, params.eps);
  Tensor y = x;
  for_each_element(out_box, [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    const auto i = static_cast<size_t>(c - out_box.dim[1].lo);
    float& v = y.at(n, c, h, w);
    v = static_cast<float>((v - z.mean[i]) * z.inv_std[i] * params.weight[i] + params.bias[i]);
  });
  return y;
}

BatchNormGradStats ReferenceKernels::do_batch_norm_backward_statistics(const LayerRef& /*l*/, const LayerParams& params,
                                                                       const Tensor& x, const Tensor& grad_output,
                                                                       const BatchNormStats& global) {
  const Box& out_box = grad_output.box();
  const Normalization z = normalization(global, params.eps);
  BatchNormGradStats g = zero_grad_stats(out_box);
  for_each_element(out_box, [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    const auto i = static_cast<size_t>(c - g.channels.lo);
    const double dy = grad_output.at(n, c, h, w);
    g.sum_dy[i] += dy;
    g.sum_dy_xhat[i] += dy * (x.at(n, c, h, w) - z.mean[i]) * z.inv_std[i];
  });
  return g;
}

Tensor ReferenceKernels::do_batch_norm_backward(const LayerRef& /*l*/, const LayerParams& params, const Tensor& x,
                                                const Tensor& grad_output, const BatchNormStats& global,
                                                const BatchNormGradStats& global_grad) {
  const Box& out_box = grad_output.box();
  const Normalization z = normalization(global, params.eps);
  const auto m = static_cast<double>(global.count);
  Tensor dx = x;  // overwritten element by element
  for_each_element(out_box, [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    const auto i = static_cast<size_t>(c - out_box.dim[1].lo);
    float& v = dx.at(n, c, h, w);
    const double xhat = (v - z.mean[i]) * z.inv_std[i];
    // d/dx of gamma * x_hat + beta with mean and variance depending on every x of the channel.
    v = static_cast<float>(
        params.weight[i] * z.inv_std[i] / m *
        (m * grad_output.at(n, c, h, w) - global_grad.sum_dy[i] - xhat * global_grad.sum_dy_xhat[i]));
  });
  return dx;
}

Tensor ReferenceKernels::do_dropout_forward(const LayerRef& l, const Tensor& x, const Box& out_box, uint64_t seed) {
  Tensor y = x;
  const Shape& s = l.layer.output;
  const double p = l.layer.dropout_ratio;
  const double scale = 1.0 / (1.0 - p);
  for_each_element(out_box, [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    float& v = y.at(n, c, h, w);
    v = dropout_keeps(seed, global_index(s, n, c, h, w), p) ? static_cast<float>(v * scale) : 0.0f;
  });
  return y;
}

Tensor ReferenceKernels::do_dropout_backward(const LayerRef& l, const Tensor& grad_output, uint64_t seed) {
  // The same mask and scale: dropout is linear in its input.
  return do_dropout_forward(l, grad_output, grad_output.box(), seed);
}

Tensor ReferenceKernels::do_flatten_forward(const LayerRef& /*l*/, const Tensor& x, const Box& out_box) {
  std::vector<float> data = x.values();
  return Tensor(out_box, std::move(data));  // NCHW order of (c, h, w) is the feature order
}

Tensor ReferenceKernels::do_flatten_backward(const LayerRef& l, const Tensor& grad_output) {
  return Tensor(l.required_input(0, grad_output.box()), grad_output.values());
}

Tensor ReferenceKernels::do_concat_forward(const LayerRef& l, const std::vector<const Tensor*>& xs,
                                           const Box& out_box) {
  Tensor y(out_box);
  int64_t offset = 0;  // first channel of the slot in the output
  for (size_t slot = 0; slot < xs.size(); ++slot) {
    const Tensor& x = *xs[slot];  // empty where the tile misses the slot's channels
    for_each_element(x.box(),
                     [&](int64_t n, int64_t c, int64_t h, int64_t w) { y.at(n, c + offset, h, w) = x.at(n, c, h, w); });
    offset += l.input_shape(static_cast<int>(slot)).c();
  }
  return y;
}

std::vector<Tensor> ReferenceKernels::do_concat_backward(const LayerRef& l, const Tensor& grad_output) {
  std::vector<Tensor> out;
  int64_t offset = 0;
  for (size_t slot = 0; slot < l.layer.inputs.size(); ++slot) {
    Tensor dx(l.required_input(static_cast<int>(slot), grad_output.box()));
    for_each_element(dx.box(), [&](int64_t n, int64_t c, int64_t h, int64_t w) {
      dx.at(n, c, h, w) = grad_output.at(n, c + offset, h, w);
    });
    out.push_back(std::move(dx));
    offset += l.input_shape(static_cast<int>(slot)).c();
  }
  return out;
}

Tensor ReferenceKernels::do_add_forward(const LayerRef& /*l*/, const std::vector<const Tensor*>& xs,
                                        const Box& out_box) {
  Tensor y(out_box);
  for (const Tensor* x : xs) add_intersection(*x, &y);
  return y;
}

std::vector<Tensor> ReferenceKernels::do_add_backward(const LayerRef& l, const Tensor& grad_output) {
  return std::vector<Tensor>(l.layer.inputs.size(), grad_output);
}

LossTile ReferenceKernels::do_softmax_cross_entropy_forward(const LayerRef& l, const Tensor& x,
                                                            const std::vector<int64_t>& labels, const Box& out_box) {
  const int64_t classes = l.layer.output.c() * l.layer.output.h() * l.layer.output.w();
  LossTile out{Tensor(out_box), 0.0};
  for (int64_t i = 0; i < out_box.dim[0].size(); ++i) {
    const int64_t label = labels[static_cast<size_t>(i)];
    const float* row = x.data() + i * classes;
    float* p = out.probabilities.data() + i * classes;
    double top = row[0];
    for (int64_t k = 1; k < classes; ++k) top = std::max<double>(top, row[k]);
    double total = 0;
    for (int64_t k = 0; k < classes; ++k) total += std::exp(row[k] - top);
    for (int64_t k = 0; k < classes; ++k) p[k] = static_cast<float>(std::exp(row[k] - top) / total);
    out.loss += (std::log(total) + top - row[label]);
  }
  out.loss /= static_cast<double>(l.layer.output.n());
  return out;
}

Tensor ReferenceKernels::do_softmax_cross_entropy_backward(const LayerRef& l, const Tensor& probabilities,
                                                           const std::vector<int64_t>& labels) {
  const Box& box = probabilities.box();
  const int64_t classes = l.layer.output.c() * l.layer.output.h() * l.layer.output.w();
  const auto batch = static_cast<double>(l.layer.output.n());
  Tensor dx = probabilities;
  for (int64_t i = 0; i < box.dim[0].size(); ++i) {
    float* row = dx.data() + i * classes;
    row[labels[static_cast<size_t>(i)]] -= 1.0f;
    for (int64_t k = 0; k < classes; ++k) row[k] = static_cast<float>(row[k] / batch);
  }
  return dx;
}

}  // namespace layerplan
