// The activation and mul kernels of both backends against a direct computation over the
// whole tensor, written here from PyTorch's definitions (kinks included: ReLU6's gradient
// is 0 at exactly 0 and 6, hard swish's -dy/2 at -3 and dy at 3, as torch 1.13's
// vectorized CPU loops compute them).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "kernels_test_util.h"

namespace layerplan {
namespace {

using testing::relative_error;

struct Case {
  const char* name;
  ActivationKind kind;
  double alpha, beta;
  std::function<double(double)> f;
  std::function<double(double)> derivative;                    // PyTorch's, at the kinks too
  GeluApproximation approximation = GeluApproximation::kNone;  // gelu only
};

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// GELU's tanh form: x/2 (1 + tanh(u)), u = √(2/π)(x + 0.044715 x³), and its derivative.
double gelu_tanh_u(double x) { return std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x); }
double gelu_tanh(double x) { return x / 2 * (1 + std::tanh(gelu_tanh_u(x))); }
double gelu_tanh_derivative(double x) {
  const double t = std::tanh(gelu_tanh_u(x));
  return (1 + t) / 2 + x / 2 * (1 - t * t) * std::sqrt(2 / M_PI) * (1 + 3 * 0.044715 * x * x);
}

std::vector<Case> cases() {
  return {
      {"relu6", ActivationKind::kClip, 0, 6, [](double x) { return std::min(std::max(x, 0.0), 6.0); },
       [](double x) { return x > 0 && x < 6 ? 1.0 : 0.0; }},
      {"sigmoid", ActivationKind::kSigmoid, 0, 0, sigmoid, [](double x) { return sigmoid(x) * (1 - sigmoid(x)); }},
      {"silu", ActivationKind::kSilu, 0, 0, [](double x) { return x * sigmoid(x); },
       [](double x) { return sigmoid(x) + x * sigmoid(x) * (1 - sigmoid(x)); }},
      {"hardsigmoid", ActivationKind::kHardSigmoid, 1.0 / 6, 0.5,
       [](double x) { return std::min(std::max(x + 3, 0.0), 6.0) / 6; },
       [](double x) { return x > -3 && x < 3 ? 1.0 / 6 : 0.0; }},
      {"hardswish", ActivationKind::kHardSwish, 0, 0,
       [](double x) { return x * std::min(std::max(x + 3, 0.0), 6.0) / 6; },
       [](double x) { return x < -3  ? 0.0
                             : x < 3 ? (2 * x + 3) / 6
                                     : 1.0; }},
      // x Φ(x): its derivative Φ(x) + x φ(x).
      {"gelu", ActivationKind::kGelu, 0, 0, [](double x) { return x / 2 * std::erfc(-x / std::sqrt(2.0)); },
       [](double x) { return std::erfc(-x / std::sqrt(2.0)) / 2 + x * std::exp(-x * x / 2) / std::sqrt(2 * M_PI); }},
      {"gelu_tanh", ActivationKind::kGelu, 0, 0, gelu_tanh, gelu_tanh_derivative, GeluApproximation::kTanh},
  };
}

// Kinks first, then normal values scaled to reach past them.
std::vector<float> inputs(size_t count) {
  std::vector<float> x = {-3.0f, 0.0f, 3.0f, 6.0f, -6.0f};
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  while (x.size() < count) x.push_back(normal(rng));
  return x;
}

class Activations : public ::testing::TestWithParam<std::string> {};

TEST_P(Activations, MatchTheDefinitionsOverTheWholeTensor) {
  auto kernels = make_kernels(GetParam(), 1);
  const Shape shape{{2, 3, 5, 7}};
  const Box whole = Box::whole(shape);
  const std::vector<float> xs = inputs(static_cast<size_t>(whole.volume()));
  const Tensor x(whole, xs);
  std::mt19937 rng(6);
  const Tensor dy = testing::random_tensor(shape, rng);
  for (const Case& c : cases()) {
    SCOPED_TRACE(std::string(c.name) + " on " + GetParam());
    ModelGraph g("one");
    const int in = g.input("in", shape);
    const int id = c.kind == ActivationKind::kGelu ? g.gelu("act", in, c.approximation)
                                                   : g.activation("act", in, c.kind, c.alpha, c.beta);
    const LayerRef l(g, id);
    std::vector<float> want_y, want_dx;
    for (size_t i = 0; i < xs.size(); ++i) {
      want_y.push_back(static_cast<float>(c.f(xs[i])));
      want_dx.push_back(static_cast<float>(dy.data()[i] * c.derivative(xs[i])));
    }
    EXPECT_LE(relative_error(kernels->activation_forward(l, x, whole).values(), want_y), 1e-6);
    const std::vector<float> dx = kernels->activation_backward(l, x, dy).values();
    EXPECT_LE(relative_error(dx, want_dx), 1e-6);
    for (size_t i = 0; i < 5; ++i) EXPECT_NEAR(dx[i], want_dx[i], 1e-6) << "at the kink x = " << xs[i];
  }
}

// GELU at a few points as PyTorch 1.13 computes it on the CPU in float32
// (torch.nn.functional.gelu(x, approximate=...) and its gradient of y.sum()).
TEST_P(Activations, GeluIsPyTorchsInBothForms) {
  auto kernels = make_kernels(GetParam(), 1);
  const Shape shape{{1, 4, 1, 1}};
  const Box whole = Box::whole(shape);
  const Tensor x(whole, {-2.5f, -0.5f, 1.0f, 2.0f});
  const Tensor ones(whole, {1.0f, 1.0f, 1.0f, 1.0f});
  struct Form {
    GeluApproximation approximation;
    std::vector<float> y, dx;
  };
  for (const Form& f : {Form{GeluApproximation::kNone,
                             {-0.0155241787f, -0.154268786f, 0.841344714f, 1.95449996f},
                             {-0.0376110673f, 0.13250491f, 1.08331537f, 1.0852319f}},
                        Form{GeluApproximation::kTanh,
                             {-0.0150842965f, -0.154285997f, 0.841192007f, 1.95459771f},
                             {-0.037951652f, 0.13263011f, 1.08296406f, 1.08609927f}}}) {
    ModelGraph g("one");
    const LayerRef l(g, g.gelu("gelu", g.input("in", shape), f.approximation));
    EXPECT_LE(relative_error(kernels->activation_forward(l, x, whole).values(), f.y), 1e-6);
    EXPECT_LE(relative_error(kernels->activation_backward(l, x, ones).values(), f.dx), 1e-6);
  }
}

TEST_P(Activations, MulBroadcastsTheScaleAndSumsItsGradient) {
  auto kernels = make_kernels(GetParam(), 1);
  const Shape shape{{2, 3, 4, 5}}, scale_shape{{2, 3, 1, 1}};
  ModelGraph g("se");
  const int in = g.input("in", shape);
  const int id = g.mul("mul", in, g.global_avg_pool("scale", in));
  std::mt19937 rng(7);
  const Tensor x = testing::random_tensor(shape, rng);
  const Tensor s = testing::random_tensor(scale_shape, rng);
  const Tensor dy = testing::random_tensor(shape, rng);
  std::vector<float> want_y, want_dx, want_ds(static_cast<size_t>(scale_shape.elements()), 0.0f);
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t c = 0; c < 3; ++c) {
      double sum = 0;
      for (int64_t h = 0; h < 4; ++h) {
        for (int64_t w = 0; w < 5; ++w) {
          want_y.push_back(x.at(n, c, h, w) * s.at(n, c, 0, 0));
          want_dx.push_back(dy.at(n, c, h, w) * s.at(n, c, 0, 0));
          sum += double{dy.at(n, c, h, w)} * x.at(n, c, h, w);
        }
      }
      want_ds[static_cast<size_t>(n * 3 + c)] = static_cast<float>(sum);
    }
  }
  const LayerRef l(g, id);
  EXPECT_EQ(kernels->mul_forward(l, {&x, &s}, Box::whole(shape)).values(), want_y);
  const std::vector<Tensor> grads = kernels->mul_backward(l, {&x, &s}, dy);
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_EQ(grads[0].values(), want_dx);
  EXPECT_EQ(grads[1].box(), Box::whole(scale_shape));
  EXPECT_LE(relative_error(grads[1].values(), want_ds), 1e-6);
  // A tile of half the rows reads the whole (n, c) scale and returns its share of the sum.
  Box top = Box::whole(shape);
  top.dim[2] = {0, 2};
  const std::vector<Tensor> part = kernels->mul_backward(l, {&x, &s}, crop(dy, top));
  EXPECT_EQ(part[1].box(), Box::whole(scale_shape));
  EXPECT_GT(relative_error(part[1].values(), want_ds), 0.05);
}

TEST(Activations, ImpossibleSettingsAreRefused) {
  ModelGraph g("bad");
  const int in = g.input("in", Shape{{1, 2, 3, 3}});
  EXPECT_THROW(g.activation("a", in, ActivationKind::kClip, 1.0, 0.0), std::invalid_argument);
  EXPECT_THROW(g.activation("b", in, ActivationKind::kHardSigmoid, NAN, 0.5), std::invalid_argument);
  EXPECT_THROW(g.mul("c", in, g.global_avg_pool("p", g.conv2d("conv", in, 3, Window::square(1), false))),
               std::invalid_argument);
  EXPECT_THROW(g.dropout("d", in, 1.0), std::invalid_argument);
  EXPECT_THROW(g.batch_norm("e", in, 0.0), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Backends, Activations, ::testing::Values("reference", "onednn"));

}  // namespace
}  // namespace layerplan
