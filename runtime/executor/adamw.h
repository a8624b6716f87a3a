#pragma once
// Adam with decoupled weight decay, as torch.optim.AdamW (amsgrad off):
//   p *= 1 - lr · weight_decay
//   m = beta1 · m + (1 - beta1) · grad
//   v = beta2 · v + (1 - beta2) · grad²
//   p -= lr / (1 - beta1^t) · m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// where t counts the updates, this one included (1 on the first). m and v (PyTorch's
// exp_avg and exp_avg_sq) start at zero.
#include <cstdint>
#include <span>
#include <vector>

namespace layerplan {

struct AdamWOptions {
  double lr = 0.001;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.01;
};

// Updates `param` in place with `grad` at update number `t` (from 1); `exp_avg` and
// `exp_avg_sq` are empty before the first update (they are sized then). Throws
// std::invalid_argument when the lengths differ or t < 1.
void adamw_update(const AdamWOptions& options, int64_t t, std::span<const float> grad, std::vector<float>* param,
                  std::vector<float>* exp_avg, std::vector<float>* exp_avg_sq);

}  // namespace layerplan
