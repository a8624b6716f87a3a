#include "runtime/executor/sgd.h"

#include <stdexcept>

namespace layerplan {

void sgd_update(const SgdOptions& options, std::span<const float> grad, std::vector<float>* param,
                std::vector<float>* buffer) {
  if (grad.size() != param->size()) throw std::invalid_argument("sgd_update: gradient and parameter lengths differ");
  const bool first = buffer->empty();
  if (options.momentum != 0 && first) buffer->resize(param->size());
  const auto lr = static_cast<float>(options.lr), wd = static_cast<float>(options.weight_decay),
             momentum = static_cast<float>(options.momentum);
  for (size_t i = 0; i < param->size(); ++i) {
    float d = grad[i];
    if (wd != 0) d += wd * (*param)[i];
    if (momentum != 0) {
      float& b = (*buffer)[i];
      b = first ? d : momentum * b + d;
      d = b;
    }
    (*param)[i] -= lr * d;
  }
}

}  // namespace layerplan
