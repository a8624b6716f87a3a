#include "runtime/executor/label_smoothing.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace layerplan {
namespace {

int64_t classes_of(const Box& box) { return box.dim[1].size() * box.dim[2].size() * box.dim[3].size(); }

void check_samples(const Box& box, const std::vector<int64_t>& labels) {
  if (box.dim[0].size() != static_cast<int64_t>(labels.size())) {
    throw std::invalid_argument("label smoothing: " + std::to_string(labels.size()) + " labels for " +
                                std::to_string(box.dim[0].size()) + " samples");
  }
}

}  // namespace

double smoothed_cross_entropy(const Tensor& logits, const std::vector<int64_t>& labels, double eps, int64_t batch) {
  check_samples(logits.box(), labels);
  const int64_t classes = classes_of(logits.box());
  double total = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    const float* row = logits.data() + static_cast<int64_t>(i) * classes;
    double top = row[0];
    for (int64_t k = 1; k < classes; ++k) top = std::max<double>(top, row[k]);
    double sum_exp = 0, sum_logits = 0;
    for (int64_t k = 0; k < classes; ++k) {
      sum_exp += std::exp(row[k] - top);
      sum_logits += row[k];
    }
    const double log_sum_exp = std::log(sum_exp) + top;  // -log p_k = log_sum_exp - row[k]
    total +=
        (1 - eps) * (log_sum_exp - row[labels[i]]) + eps * (log_sum_exp - sum_logits / static_cast<double>(classes));
  }
  return total / static_cast<double>(batch);
}

void smooth_cross_entropy_gradient(const std::vector<int64_t>& labels, double eps, int64_t batch, Tensor* grad) {
  check_samples(grad->box(), labels);
  const int64_t classes = classes_of(grad->box());
  // (p - target) / batch = (p - onehot) / batch + eps · (onehot - 1/K) / batch.
  const double b = static_cast<double>(batch);
  const auto off_label = static_cast<float>(-eps / static_cast<double>(classes) / b);
  const auto on_label = static_cast<float>(eps * (1.0 - 1.0 / static_cast<double>(classes)) / b);
  for (size_t i = 0; i < labels.size(); ++i) {
    float* row = grad->data() + static_cast<int64_t>(i) * classes;
    for (int64_t k = 0; k < classes; ++k) row[k] += k == labels[i] ? on_label : off_label;
  }
}

}  // namespace layerplan
