#include "runtime/executor/sgd.h"

#include <cstdint>
#include <stdexcept>

namespace layerplan {

void sgd_update(const SgdOptions& options, std::span<const float> grad, std::vector<float>* param,
                std::vector<float>* buffer) {
  if (grad.size() != param->size()) throw std::invalid_argument("sgd_update: gradient and parameter lengths differ");
  const bool first = buffer->empty();
  if (options.momentum != 0 && first) buffer->resize(param->size());
  const auto lr = static_cast<float>(options.lr), wd = static_cast<float>(options.weight_decay),
             momentum = static_cast<float>(options.momentum);
  float* p = param->data();
  float* buf = buffer->data();
  const float* g = grad.data();
  const bool nesterov = options.nesterov && momentum != 0;
  const auto n = static_cast<int64_t>(param->size());
  // Element-wise, so threads change nothing in the result.
#pragma omp parallel for schedule(static) if (n > (1 << 16))
  for (int64_t i = 0; i < n; ++i) {
    float d = g[i];
    if (wd != 0) d += wd * p[i];
    if (momentum != 0) {
      buf[i] = first ? d : momentum * buf[i] + d;
      d = nesterov ? d + momentum * buf[i] : buf[i];
    }
    p[i] -= lr * d;
  }
}

}  // namespace layerplan
