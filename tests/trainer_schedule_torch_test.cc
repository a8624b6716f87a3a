// learning_rate_at against PyTorch 1.13's schedulers: the rate of every step of
// SequentialLR([LinearLR(start_factor=1/(W+1), total_iters=W), CosineAnnealingLR or
// StepLR], milestones=[W]) and of the main schedulers alone, stepped once after every
// optimizer step, from tests/optimizer_data/torch_training_cases.json
// (tests/optimizer_data/generate.py).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "runtime/training/trainer_options.h"

namespace layerplan {
namespace {

TEST(LearningRateSchedule, MatchesTorchSchedulers) {
  std::ifstream in(LAYERPLAN_SOURCE_DIR "/tests/optimizer_data/torch_training_cases.json");
  ASSERT_TRUE(in);
  const nlohmann::json doc = nlohmann::json::parse(in);
  ASSERT_GE(doc.at("schedules").size(), 5u);
  for (const nlohmann::json& s : doc.at("schedules")) {
    TrainerOptions o;
    o.lr = s.at("lr");
    o.warmup_steps = s.at("warmup_steps");
    const std::string kind = s.at("lr_schedule");
    o.lr_schedule = kind == "cosine" ? LrSchedule::kCosine : kind == "step" ? LrSchedule::kStep : LrSchedule::kConstant;
    o.lr_step_every = s.value("lr_step_every", 0);
    o.lr_gamma = s.value("lr_gamma", 0.1);
    const int64_t total = s.at("total");
    const std::vector<double> rates = s.at("rates");
    ASSERT_EQ(static_cast<int64_t>(rates.size()), total);
    for (int64_t step = 0; step < total; ++step) {
      EXPECT_NEAR(learning_rate_at(o, step, total), rates[static_cast<size_t>(step)], 1e-12)
          << kind << " warm-up " << o.warmup_steps << ", step " << step;
    }
  }
  // The three-step cases of executor_optimizer_torch_test train at these rates.
  for (const nlohmann::json& c : doc.at("cases")) {
    const nlohmann::json& opt = c.at("options");
    TrainerOptions o;
    o.lr = opt.at("lr");
    o.warmup_steps = opt.value("warmup_steps", 0);
    const std::string kind = opt.value("lr_schedule", "constant");
    o.lr_schedule = kind == "cosine" ? LrSchedule::kCosine : kind == "step" ? LrSchedule::kStep : LrSchedule::kConstant;
    o.lr_step_every = opt.value("lr_step_every", 0);
    o.lr_gamma = opt.value("lr_gamma", 0.1);
    const std::vector<double> rates = c.at("float64").at("lrs");
    for (size_t step = 0; step < rates.size(); ++step) {
      EXPECT_NEAR(learning_rate_at(o, static_cast<int64_t>(step), static_cast<int64_t>(rates.size())), rates[step],
                  1e-12)
          << c.at("name") << ", step " << step;
    }
  }
}

}  // namespace
}  // namespace layerplan
