#include "runtime/kernels/batch_norm_loops.h"

namespace layerplan::batch_norm_loops {
namespace {

// One version per instruction set, chosen at load time by an ifunc resolver. Under
// ThreadSanitizer the resolver is instrumented and runs before TSan is initialised, which
// crashes every program linking this file (scripts/test-tsan): one generic version there.
#if defined(__SANITIZE_THREAD__)
#define LAYERPLAN_CPU_CLONES
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LAYERPLAN_CPU_CLONES
#endif
#endif
#ifndef LAYERPLAN_CPU_CLONES
#define LAYERPLAN_CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif

// Eight independent double accumulators, so that the compiler vectorizes the sums without
// reassociating floating-point additions on its own.
constexpr int kLanes = 8;

LAYERPLAN_CPU_CLONES void plane_sums(const float* x, int64_t len, double* sum, double* sum_sq) {
  double s[kLanes] = {}, q[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= len; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const double v = x[i + j];
      s[j] += v;
      q[j] += v * v;
    }
  }
  for (; i < len; ++i) {
    s[0] += x[i];
    q[0] += static_cast<double>(x[i]) * x[i];
  }
  for (int j = 0; j < kLanes; ++j) {
    *sum += s[j];
    *sum_sq += q[j];
  }
}

LAYERPLAN_CPU_CLONES void plane_grad_sums(const float* x, const float* dy, int64_t len, double mean, double* sum_dy,
                                          double* sum_dy_centered) {
  double s[kLanes] = {}, q[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= len; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const double g = dy[i + j];
      s[j] += g;
      q[j] += g * (x[i + j] - mean);
    }
  }
  for (; i < len; ++i) {
    s[0] += dy[i];
    q[0] += static_cast<double>(dy[i]) * (x[i] - mean);
  }
  for (int j = 0; j < kLanes; ++j) {
    *sum_dy += s[j];
    *sum_dy_centered += q[j];
  }
}

LAYERPLAN_CPU_CLONES void plane_backward(const float* x, const float* dy, float* dx, int64_t len, float a, float b,
                                         float mean, float c) {
  for (int64_t i = 0; i < len; ++i) dx[i] = a * dy[i] + b * (x[i] - mean) + c;
}

LAYERPLAN_CPU_CLONES void plane_affine(const float* x, float* y, int64_t len, float mean, float scale, float shift) {
  for (int64_t i = 0; i < len; ++i) y[i] = (x[i] - mean) * scale + shift;
}

}  // namespace

void forward(const float* x, float* y, Planes p, const double* mean, const double* inv_std, const float* gamma,
             const float* beta) {
#pragma omp parallel for schedule(static)
  for (int64_t plane = 0; plane < p.n * p.c; ++plane) {
    const int64_t c = plane % p.c;
    plane_affine(x + plane * p.hw, y + plane * p.hw, p.hw, static_cast<float>(mean[c]),
                 static_cast<float>(inv_std[c] * gamma[c]), beta[c]);
  }
}

void statistics(const float* x, Planes p, double* sum, double* sum_sq) {
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < p.c; ++c) {
    double s = 0, q = 0;
    for (int64_t n = 0; n < p.n; ++n) plane_sums(x + (n * p.c + c) * p.hw, p.hw, &s, &q);
    sum[c] = s;
    sum_sq[c] = q;
  }
}

void backward_sums(const float* x, const float* dy, Planes p, const double* mean, const double* inv_std, double* sum_dy,
                   double* sum_dy_xhat) {
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < p.c; ++c) {
    double s = 0, q = 0;
    for (int64_t n = 0; n < p.n; ++n) {
      const int64_t at = (n * p.c + c) * p.hw;
      plane_grad_sums(x + at, dy + at, p.hw, mean[c], &s, &q);
    }
    sum_dy[c] = s;
    sum_dy_xhat[c] = q * inv_std[c];
  }
}

void backward(const float* x, const float* dy, float* dx, Planes p, const double* mean, const double* inv_std,
              const float* gamma, const double* sum_dy, const double* sum_dy_xhat, double m) {
  // dx = A*dy + B*(x - mean) + C with A = gamma*inv_std, B = -A*inv_std*sum_dy_xhat/M and
  // C = -A*sum_dy/M: the reference's formula expanded per channel.
#pragma omp parallel for schedule(static)
  for (int64_t plane = 0; plane < p.n * p.c; ++plane) {
    const int64_t c = plane % p.c;
    const double a = gamma[c] * inv_std[c];
    const int64_t at = plane * p.hw;
    plane_backward(x + at, dy + at, dx + at, p.hw, static_cast<float>(a),
                   static_cast<float>(-a * inv_std[c] * sum_dy_xhat[c] / m), static_cast<float>(mean[c]),
                   static_cast<float>(-a * sum_dy[c] / m));
  }
}

}  // namespace layerplan::batch_norm_loops
