#include "runtime/training/trainer_options.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "common/error.h"

namespace layerplan {
namespace {

// A value as the user wrote it, near enough: 0.1, 1e-08, nan.
std::string text_of(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

}  // namespace

double learning_rate_at(const TrainerOptions& options, int64_t step, int64_t total) {
  const int64_t warmup = options.warmup_steps;
  if (step < warmup) return options.lr * static_cast<double>(step + 1) / static_cast<double>(warmup + 1);
  const int64_t t = step - warmup;
  switch (options.lr_schedule) {
    case LrSchedule::kConstant:
      break;
    case LrSchedule::kCosine: {
      const double progress = static_cast<double>(t) / static_cast<double>(std::max<int64_t>(total - warmup, 1));
      return options.lr * 0.5 * (1.0 + std::cos(M_PI * progress));
    }
    case LrSchedule::kStep: {
      const int64_t cuts = t / std::max<int64_t>(options.lr_step_every, 1);  // whole periods: floor
      return options.lr * std::pow(options.lr_gamma, static_cast<double>(cuts));
    }
  }
  return options.lr;
}

void check_optimizer_options(const TrainerOptions& o) {
  const bool adamw = o.optimizer == Optimizer::kAdamW;
  require(!o.nesterov || !adamw, "--nesterov: expected --optimizer sgd (AdamW has no Nesterov momentum)");
  require(!o.nesterov || o.momentum > 0,
          "--nesterov with --momentum " + text_of(o.momentum) + ": expected a momentum above 0");
  // The negated comparisons also refuse NaN.
  require(o.beta1 >= 0 && o.beta1 < 1 && o.beta2 >= 0 && o.beta2 < 1,
          "--betas " + text_of(o.beta1) + "," + text_of(o.beta2) + ": expected two numbers from 0 to below 1");
  require(o.eps > 0 && std::isfinite(o.eps), "--eps " + text_of(o.eps) + ": expected a positive number");
  require(o.clip_grad_norm >= 0 && std::isfinite(o.clip_grad_norm),
          "--clip-grad-norm " + text_of(o.clip_grad_norm) + ": expected a positive norm (0: no clipping)");
  require(o.label_smoothing >= 0 && o.label_smoothing < 1,
          "--label-smoothing " + text_of(o.label_smoothing) + ": expected a number from 0 to below 1");
  require(o.warmup_steps >= 0, "--warmup-steps " + std::to_string(o.warmup_steps) + ": expected 0 or more steps");
  const bool step = o.lr_schedule == LrSchedule::kStep;
  require(!step || o.lr_step_every >= 1,
          "--lr-schedule step with --lr-step-every " + std::to_string(o.lr_step_every) + ": expected 1 or more steps");
  require(step || o.lr_step_every == 0,
          "--lr-step-every " + std::to_string(o.lr_step_every) + ": expected --lr-schedule step");
  require(o.lr_gamma > 0 && std::isfinite(o.lr_gamma),
          "--lr-gamma " + text_of(o.lr_gamma) + ": expected a positive factor");
}

}  // namespace layerplan
