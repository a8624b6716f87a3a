#pragma once
// Stochastic gradient descent with momentum and weight decay, as torch.optim.SGD
// (dampening 0):
//   d = grad + weight_decay · p
//   buf = d on the first step, momentum · buf + d afterwards
//   p -= lr · buf                      (nesterov: p -= lr · (d + momentum · buf))
// The executor applies it to every parameter tensor; which of them decay is the caller's
// choice (weight_decay 0 for those that do not).
#include <span>
#include <vector>

namespace layerplan {

struct SgdOptions {
  double lr = 0.01;
  double momentum = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;  // needs momentum > 0, as PyTorch
};

// Updates `param` in place with `grad`; `buffer` is the momentum buffer, empty before the
// first step. Throws std::invalid_argument when the lengths differ.
void sgd_update(const SgdOptions& options, std::span<const float> grad, std::vector<float>* param,
                std::vector<float>* buffer);
inline void sgd_update(const SgdOptions& options, const std::vector<float>& grad, std::vector<float>* param,
                       std::vector<float>* buffer) {
  sgd_update(options, std::span<const float>(grad), param, buffer);
}

}  // namespace layerplan
