#pragma once
// Label smoothing of the cross-entropy loss, as torch.nn.CrossEntropyLoss(label_smoothing=eps):
// the target of a sample is (1 - eps) on its label plus eps / K on each of the K classes,
// so its loss is (1 - eps) · (-log p_label) + eps · mean over k of (-log p_k). The kernels
// compute the plain loss and gradient; the executor corrects them with these.
#include <cstdint>
#include <vector>

#include "runtime/kernels/tensor.h"

namespace layerplan {

// The smoothed loss of the samples of `logits` (a loss tile: every class of its samples),
// summed over them and divided by `batch`, the whole batch.
double smoothed_cross_entropy(const Tensor& logits, const std::vector<int64_t>& labels, double eps, int64_t batch);

// Turns the plain gradient (p - onehot) / batch of a loss tile into the smoothed one,
// (p - target) / batch.
void smooth_cross_entropy_gradient(const std::vector<int64_t>& labels, double eps, int64_t batch, Tensor* grad);

}  // namespace layerplan
