#pragma once
// One element of an activation layer (LayerKind::kActivation) and of its gradient, as
// PyTorch 1.13 defines them on the CPU, kinks included: every backend's reference for
// the element-wise functions (not public API).
//   clip (hardtanh)  dy where min < x < max, else 0 (so ReLU6's is 0 at exactly 0 and 6;
//                    torch.clamp would pass it there)
//   hardsigmoid      dy * alpha where 0 < alpha*x + beta < 1 (PyTorch's: -3 < x < 3)
//   hardswish        0 for x < -3, dy * (x/3 + 1/2) for -3 <= x < 3, dy from 3 on (torch's
//                    vectorized loop, which computes all but a tensor's last few
//                    elements; its scalar tail gives 3dy/2 at exactly 3)
//   gelu             dy * (Φ(x) + x φ(x)) (erf form); with approximate 'tanh', PyTorch's
//                    product rule on x/2 · (1 + tanh(u)), u = √(2/π) (x + 0.044715 x³)
// Sums run in double and round once to float.
#include <algorithm>
#include <cmath>

#include "model/model_graph.h"

namespace layerplan::kernels_internal {

struct ActivationFunction {
  ActivationKind kind = ActivationKind::kClip;
  double alpha = 0, beta = 0;
  bool gelu_tanh = false;

  explicit ActivationFunction(const Layer& layer)
      : kind(layer.activation),
        alpha(layer.alpha),
        beta(layer.beta),
        gelu_tanh(layer.gelu_approximation == GeluApproximation::kTanh) {}

  static double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

  // PyTorch's constants of GELU: 1/√2, 1/√(2π), √(2/π) and the cubic's 0.044715.
  static constexpr double kSqrtHalf = 0.70710678118654752440;
  static constexpr double kInvSqrt2Pi = 0.39894228040143267794;
  static constexpr double kSqrt2OverPi = 0.79788456080286535588;
  static constexpr double kKappa = 0.044715;

  double gelu(double x) const {
    if (gelu_tanh) return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + kKappa * x * x * x)));
    return 0.5 * x * (1.0 + std::erf(x * kSqrtHalf));
  }

  double gelu_derivative(double x) const {
    if (gelu_tanh) {
      const double t = std::tanh(kSqrt2OverPi * (x + kKappa * x * x * x));
      const double inner_derivative = kSqrt2OverPi * (1.0 + 3.0 * kKappa * x * x);
      return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * inner_derivative;
    }
    const double cdf = 0.5 * (1.0 + std::erf(x * kSqrtHalf));
    const double pdf = kInvSqrt2Pi * std::exp(-0.5 * x * x);
    return cdf + x * pdf;
  }

  float forward(float xf) const {
    const double x = xf;
    switch (kind) {
      case ActivationKind::kClip:
        return static_cast<float>(std::min(std::max(x, alpha), beta));
      case ActivationKind::kSigmoid:
        return static_cast<float>(sigmoid(x));
      case ActivationKind::kSilu:
        return static_cast<float>(x * sigmoid(x));
      case ActivationKind::kHardSigmoid:
        return static_cast<float>(std::min(std::max(alpha * x + beta, 0.0), 1.0));
      case ActivationKind::kHardSwish:
        return static_cast<float>(x * std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0);
      case ActivationKind::kGelu:
        return static_cast<float>(gelu(x));
    }
    return xf;
  }

  // The gradient of the input from the input x and the output gradient dy.
  float backward(float xf, float dyf) const {
    const double x = xf, dy = dyf;
    switch (kind) {
      case ActivationKind::kClip:
        return x > alpha && x < beta ? dyf : 0.0f;
      case ActivationKind::kSigmoid: {
        const double s = sigmoid(x);
        return static_cast<float>(dy * s * (1.0 - s));
      }
      case ActivationKind::kSilu: {
        const double s = sigmoid(x);
        return static_cast<float>(dy * s * (1.0 + x * (1.0 - s)));
      }
      case ActivationKind::kHardSigmoid: {
        const double t = alpha * x + beta;
        return t > 0.0 && t < 1.0 ? static_cast<float>(dy * alpha) : 0.0f;
      }
      case ActivationKind::kHardSwish:
        if (x < -3.0) return 0.0f;
        return x < 3.0 ? static_cast<float>(dy * (x / 3.0 + 0.5)) : dyf;
      case ActivationKind::kGelu:
        return static_cast<float>(dy * gelu_derivative(x));
    }
    return dyf;
  }
};

}  // namespace layerplan::kernels_internal
