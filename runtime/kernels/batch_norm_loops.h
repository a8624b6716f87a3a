#pragma once
// Fast loops of training-mode batch norm over a tile whose tensor is exactly its box
// (N x C x HW, each (n, c) plane contiguous): the statistics, the backward's sums and the
// input gradient. The reference kernels compute the same sums element by element through
// global coordinates; these run over planes, in parallel over channels (OpenMP) and with
// AVX-512 or AVX2 where the CPU has them (function multiversioning), keeping the sums in
// double as the reference does. Used by OnednnKernels, checked against the reference in
// tests/kernels_onednn_test.cc.
#include <cstdint>

namespace layerplan::batch_norm_loops {

struct Planes {
  int64_t n = 0, c = 0, hw = 0;  // samples, channels, elements per plane
};

// Per channel: sum and sum of squares of x.
void statistics(const float* x, Planes p, double* sum, double* sum_sq);

// y = (x - mean[c]) * inv_std[c] * gamma[c] + beta[c].
void forward(const float* x, float* y, Planes p, const double* mean, const double* inv_std, const float* gamma,
             const float* beta);

// Per channel: sum of dy and of dy * (x - mean[c]) * inv_std[c].
void backward_sums(const float* x, const float* dy, Planes p, const double* mean, const double* inv_std, double* sum_dy,
                   double* sum_dy_xhat);

// dx = gamma*inv_std/M * (M*dy - sum_dy - x_hat*sum_dy_xhat), x_hat = (x - mean)*inv_std,
// with M elements per channel over the whole batch (the reduced sums' count).
void backward(const float* x, const float* dy, float* dx, Planes p, const double* mean, const double* inv_std,
              const float* gamma, const double* sum_dy, const double* sum_dy_xhat, double m);

}  // namespace layerplan::batch_norm_loops
