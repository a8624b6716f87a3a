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
// Sums run in double and round once to float.
#include <algorithm>
#include <cmath>

#include "model/model_graph.h"

namespace layerplan::kernels_internal {

struct ActivationFunction {
  ActivationKind kind = ActivationKind::kClip;
  double alpha = 0, beta = 0;

  explicit ActivationFunction(const Layer& layer) : kind(layer.activation), alpha(layer.alpha), beta(layer.beta) {}

  static double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

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
    }
    return dyf;
  }
};

}  // namespace layerplan::kernels_internal
