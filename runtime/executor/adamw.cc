#include "runtime/executor/adamw.h"

#include <cmath>
#include <stdexcept>

namespace layerplan {

void adamw_update(const AdamWOptions& options, int64_t t, std::span<const float> grad, std::vector<float>* param,
                  std::vector<float>* exp_avg, std::vector<float>* exp_avg_sq) {
  if (grad.size() != param->size()) throw std::invalid_argument("adamw_update: gradient and parameter lengths differ");
  if (t < 1) throw std::invalid_argument("adamw_update: the update number starts at 1");
  if (exp_avg->empty()) exp_avg->assign(param->size(), 0.0f);
  if (exp_avg_sq->empty()) exp_avg_sq->assign(param->size(), 0.0f);
  if (exp_avg->size() != param->size() || exp_avg_sq->size() != param->size()) {
    throw std::invalid_argument("adamw_update: state and parameter lengths differ");
  }
  // The scalars in double, as PyTorch computes them in Python floats.
  const double steps = static_cast<double>(t);
  const auto decay = static_cast<float>(1.0 - options.lr * options.weight_decay);
  const auto beta1 = static_cast<float>(options.beta1), beta2 = static_cast<float>(options.beta2);
  const auto one_minus_beta1 = static_cast<float>(1.0 - options.beta1);
  const auto one_minus_beta2 = static_cast<float>(1.0 - options.beta2);
  const auto step_size = static_cast<float>(options.lr / (1.0 - std::pow(options.beta1, steps)));
  const auto correction2_sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(options.beta2, steps)));
  const auto eps = static_cast<float>(options.eps);
  float* p = param->data();
  float* m = exp_avg->data();
  float* v = exp_avg_sq->data();
  const float* g = grad.data();
  const auto n = static_cast<int64_t>(param->size());
  // Element-wise, so threads change nothing in the result.
#pragma omp parallel for schedule(static) if (n > (1 << 16))
  for (int64_t i = 0; i < n; ++i) {
    p[i] *= decay;
    m[i] = m[i] * beta1 + g[i] * one_minus_beta1;
    v[i] = v[i] * beta2 + g[i] * g[i] * one_minus_beta2;
    p[i] -= step_size * (m[i] / (std::sqrt(v[i]) / correction2_sqrt + eps));
  }
}

}  // namespace layerplan
