// Reference kernels of the layers with a sliding window or a weight matrix: conv2d,
// max/avg/global-avg pooling and fully-connected.
#include <cmath>
#include <limits>

#include "runtime/kernels/backend_helpers.h"
#include "runtime/kernels/reference_kernels.h"

namespace layerplan {

using namespace kernels_internal;

namespace {

// Calls visit(ih, iw, kh, kw) for every tap (kh, kw) of the window of output element
// (oh, ow) whose input row and column lie inside the whole input: taps in the zero
// padding are skipped, which is how padding applies at the true border only.
template <typename Visit>
void for_each_tap(const Window& w, const Shape& in_shape, int64_t oh, int64_t ow, Visit&& visit) {
  for (int kh = 0; kh < w.kernel_h; ++kh) {
    const int64_t ih = oh * w.stride_h - w.pad_h + kh;
    if (ih < 0 || ih >= in_shape.h()) continue;
    for (int kw = 0; kw < w.kernel_w; ++kw) {
      const int64_t iw = ow * w.stride_w - w.pad_w + kw;
      if (iw < 0 || iw >= in_shape.w()) continue;
      visit(ih, iw, kh, kw);
    }
  }
}

// The input channels a convolution's output channel k reads: `inputs` channels from
// first_input(k) (all of them unless the convolution is grouped).
struct GroupChannels {
  int64_t inputs = 0, outputs = 0;  // per group
  explicit GroupChannels(const LayerRef& l)
      : inputs(l.input_shape(0).c() / l.layer.groups), outputs(l.layer.output.c() / l.layer.groups) {}
  int64_t first_input(int64_t k) const { return k / outputs * inputs; }
};

// Index in a shard of the weight of output channel k, input channel c of its group.
size_t weight_index(const LayerParams& p, const Window& w, int64_t k, int64_t c, int kh, int kw) {
  const int64_t taps = static_cast<int64_t>(w.kernel_h) * w.kernel_w;
  return static_cast<size_t>(((k - p.channels.lo) * (p.row / taps) + c) * taps + static_cast<int64_t>(kh) * w.kernel_w +
                             kw);
}

}  // namespace

std::string_view ReferenceKernels::backend_name() const { return "reference"; }

Tensor ReferenceKernels::do_conv2d_forward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                           const Box& out_box) {
  const Shape& in_shape = l.input_shape(0);
  const Window& win = l.layer.window;
  const GroupChannels group(l);
  Tensor y(out_box);
  for_each_element(out_box, [&](int64_t n, int64_t k, int64_t oh, int64_t ow) {
    double acc = params.bias.empty() ? 0.0 : params.bias[static_cast<size_t>(k - params.channels.lo)];
    const int64_t first = group.first_input(k);
    for (int64_t c = 0; c < group.inputs; ++c) {
      for_each_tap(win, in_shape, oh, ow, [&](int64_t ih, int64_t iw, int kh, int kw) {
        acc += static_cast<double>(params.weight[weight_index(params, win, k, c, kh, kw)]) * x.at(n, first + c, ih, iw);
      });
    }
    y.at(n, k, oh, ow) = static_cast<float>(acc);
  });
  return y;
}

WeightedGrads ReferenceKernels::do_conv2d_backward(const LayerRef& l, const LayerParams& params, const Tensor& x,
                                                   const Tensor& grad_output) {
  const Box& out_box = grad_output.box();
  const Shape& in_shape = l.input_shape(0);
  const Window& win = l.layer.window;
  std::vector<double> dx(static_cast<size_t>(x.size()), 0.0), dw(params.weight.size(), 0.0),
      db(params.bias.size(), 0.0);
  const GroupChannels group(l);
  for_each_element(out_box, [&](int64_t n, int64_t k, int64_t oh, int64_t ow) {
    const double g = grad_output.at(n, k, oh, ow);
    if (!db.empty()) db[static_cast<size_t>(k - params.channels.lo)] += g;
    const int64_t first = group.first_input(k);
    for (int64_t c = 0; c < group.inputs; ++c) {
      for_each_tap(win, in_shape, oh, ow, [&](int64_t ih, int64_t iw, int kh, int kw) {
        const size_t wi = weight_index(params, win, k, c, kh, kw);
        const auto xi = static_cast<size_t>(x.offset(n, first + c, ih, iw));
        dx[xi] += g * params.weight[wi];
        dw[wi] += g * x.data()[xi];
      });
    }
  });
  WeightedGrads out{Tensor(x.box(), std::vector<float>(dx.begin(), dx.end())), params};
  out.params.running_mean.clear();
  out.params.running_var.clear();
  out.params.weight.assign(dw.begin(), dw.end());
  out.params.bias.assign(db.begin(), db.end());
  return out;
}

Tensor ReferenceKernels::do_max_pool_forward(const LayerRef& l, const Tensor& x, const Box& out_box) {
  Tensor y(out_box);
  for_each_element(out_box, [&](int64_t n, int64_t c, int64_t oh, int64_t ow) {
    float best = -std::numeric_limits<float>::infinity();
    for_each_tap(l.layer.window, l.input_shape(0), oh, ow,
                 [&](int64_t ih, int64_t iw, int, int) { best = std::max(best, x.at(n, c, ih, iw)); });
    y.at(n, c, oh, ow) = best;
  });
  return y;
}

Tensor ReferenceKernels::do_max_pool_backward(const LayerRef& l, const Tensor& x, const Tensor& grad_output) {
  const Box& out_box = grad_output.box();
  Tensor dx(x.box());
  for_each_element(out_box, [&](int64_t n, int64_t c, int64_t oh, int64_t ow) {
    float best = -std::numeric_limits<float>::infinity();
    int64_t at = -1;
    for_each_tap(l.layer.window, l.input_shape(0), oh, ow, [&](int64_t ih, int64_t iw, int, int) {
      const float v = x.at(n, c, ih, iw);
      if (at < 0 || v > best) {
        best = v;
        at = x.offset(n, c, ih, iw);
      }
    });
    dx.data()[at] += grad_output.at(n, c, oh, ow);
  });
  return dx;
}

Tensor ReferenceKernels::do_avg_pool_forward(const LayerRef& l, const Tensor& x, const Box& out_box) {
  const Window& win = l.layer.window;
  Tensor y(out_box);
  for_each_element(out_box, [&](int64_t n, int64_t c, int64_t oh, int64_t ow) {
    double acc = 0;
    for_each_tap(win, l.input_shape(0), oh, ow, [&](int64_t ih, int64_t iw, int, int) { acc += x.at(n, c, ih, iw); });
    y.at(n, c, oh, ow) = static_cast<float>(acc / avg_pool_divisor(win, l.input_shape(0), oh, ow));
  });
  return y;
}

Tensor ReferenceKernels::do_avg_pool_backward(const LayerRef& l, const Tensor& grad_output) {
  const Box& out_box = grad_output.box();
  const Window& win = l.layer.window;
  const Box in_box = l.required_input(0, out_box);
  std::vector<double> dx(static_cast<size_t>(in_box.volume()), 0.0);
  const Tensor shape_only(in_box);
  for_each_element(out_box, [&](int64_t n, int64_t c, int64_t oh, int64_t ow) {
    const double g = grad_output.at(n, c, oh, ow) / avg_pool_divisor(win, l.input_shape(0), oh, ow);
    for_each_tap(win, l.input_shape(0), oh, ow, [&](int64_t ih, int64_t iw, int, int) {
      dx[static_cast<size_t>(shape_only.offset(n, c, ih, iw))] += g;
    });
  });
  return Tensor(in_box, std::vector<float>(dx.begin(), dx.end()));
}

Tensor ReferenceKernels::do_global_avg_pool_forward(const LayerRef& l, const Tensor& x, const Box& out_box) {
  const Shape& s = l.input_shape(0);
  Tensor y(out_box);
  for_each_element(out_box, [&](int64_t n, int64_t c, int64_t, int64_t) {
    double acc = 0;
    for (int64_t h = 0; h < s.h(); ++h)
      for (int64_t w = 0; w < s.w(); ++w) acc += x.at(n, c, h, w);
    y.at(n, c, 0, 0) = static_cast<float>(acc / static_cast<double>(s.h() * s.w()));
  });
  return y;
}

Tensor ReferenceKernels::do_global_avg_pool_backward(const LayerRef& l, const Tensor& grad_output) {
  const Shape& s = l.input_shape(0);
  Tensor dx(l.required_input(0, grad_output.box()));
  const double area = static_cast<double>(s.h() * s.w());
  for_each_element(dx.box(), [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    dx.at(n, c, h, w) = static_cast<float>(grad_output.at(n, c, 0, 0) / area);
  });
  return dx;
}

Tensor ReferenceKernels::do_fully_connected_forward(const LayerRef& /*l*/, const LayerParams& params, const Tensor& x,
                                                    const Box& out_box) {
  const int64_t features = params.row;
  Tensor y(out_box);
  for (int64_t n = out_box.dim[0].lo; n < out_box.dim[0].hi; ++n) {
    const float* xn = x.data() + (n - out_box.dim[0].lo) * features;
    for (int64_t k = out_box.dim[1].lo; k < out_box.dim[1].hi; ++k) {
      const auto row = static_cast<size_t>(k - params.channels.lo);
      double acc = params.bias.empty() ? 0.0 : params.bias[row];
      const float* wk = params.weight.data() + row * static_cast<size_t>(features);
      for (int64_t f = 0; f < features; ++f) acc += static_cast<double>(wk[f]) * xn[f];
      y.at(n, k, 0, 0) = static_cast<float>(acc);
    }
  }
  return y;
}

WeightedGrads ReferenceKernels::do_fully_connected_backward(const LayerRef& /*l*/, const LayerParams& params,
                                                            const Tensor& x, const Tensor& grad_output) {
  const Box& out_box = grad_output.box();
  const int64_t features = params.row;
  std::vector<double> dx(static_cast<size_t>(x.size()), 0.0), dw(params.weight.size(), 0.0),
      db(params.bias.size(), 0.0);
  for (int64_t n = out_box.dim[0].lo; n < out_box.dim[0].hi; ++n) {
    const int64_t xo = (n - out_box.dim[0].lo) * features;
    for (int64_t k = out_box.dim[1].lo; k < out_box.dim[1].hi; ++k) {
      const auto row = static_cast<size_t>(k - params.channels.lo);
      const double g = grad_output.at(n, k, 0, 0);
      if (!db.empty()) db[row] += g;
      for (int64_t f = 0; f < features; ++f) {
        const size_t wi = row * static_cast<size_t>(features) + static_cast<size_t>(f);
        dx[static_cast<size_t>(xo + f)] += g * params.weight[wi];
        dw[wi] += g * x.data()[xo + f];
      }
    }
  }
  WeightedGrads out{Tensor(x.box(), std::vector<float>(dx.begin(), dx.end())), params};
  out.params.weight.assign(dw.begin(), dw.end());
  out.params.bias.assign(db.begin(), db.end());
  return out;
}

}  // namespace layerplan
