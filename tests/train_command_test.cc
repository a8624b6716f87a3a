// `layerplan train` as a user runs it: one process, and ranks under `layerplan launch`,
// train the same numbers; bad input is one line and exit 2 with nothing written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/version.h"
#include "runtime/executor/checkpoint.h"
#include "runtime/safetensors.h"
#include "runtime/training/checkpoint_store.h"
#include "tests/cli_harness.h"

namespace layerplan {
namespace {

using namespace testing_cli;
using ::testing::HasSubstr;

// A LeNet-5 plan file for `gpus` devices and a global batch of 8, from `layerplan plan`.
// With 2 devices the layers are rewritten so that the run moves boxes between ranks:
// samples split in two, except the fully connected layers, whose output channels split.
fs::path lenet_plan(const ScratchDir& dir, int gpus, const std::string& name) {
  const fs::path file = dir.path() / name;
  const Outcome r = run({"plan", "--model", "lenet5", "--batch", "8", "--gpus", std::to_string(gpus), "--gpus-per-node",
                         std::to_string(gpus), "--json", file.string()});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  if (gpus == 2) {
    nlohmann::json doc = nlohmann::json::parse(read_text(file));
    for (nlohmann::json& layer : doc.at("layers")) {
      const bool fc = layer.at("kind") == "fully_connected";
      layer["degrees"] = {{"n", fc ? 1 : 2}, {"c", fc ? 2 : 1}, {"h", 1}, {"w", 1}};
      layer["devices"] = {0, 1};
    }
    write_text(file, doc.dump(2));
  }
  return file;
}

std::vector<double> losses_in(const fs::path& log) {
  std::vector<double> losses;
  for (const std::string& line : lines_of(read_text(log))) {
    const nlohmann::json j = nlohmann::json::parse(line);
    EXPECT_EQ(j.at("step").get<int>(), static_cast<int>(losses.size()) + 1);
    EXPECT_GT(j.at("images_per_s").get<double>(), 0.0);
    losses.push_back(j.at("loss").get<double>());
  }
  return losses;
}

const std::vector<std::string> kSgd = {"--data",     "synthetic", "--steps",        "4",    "--lr",      "0.05",
                                       "--momentum", "0.9",       "--weight-decay", "1e-3", "--kernels", "reference",
                                       "--seed",     "5"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(TrainCommand, OneProcessAndTwoRanksTrainTheSameLosses) {
  ScratchDir dir;
  const fs::path one = lenet_plan(dir, 1, "one.json"), two = lenet_plan(dir, 2, "two.json");
  const fs::path log1 = dir.path() / "one.jsonl", log2 = dir.path() / "two.jsonl";
  const Outcome a = run(with({"train", "--plan", one.string(), "--log-json", log1.string()}, kSgd));
  ASSERT_EQ(a.exit_code, 0) << describe(a);
  EXPECT_THAT(a.out, HasSubstr("step 4/4"));
  EXPECT_THAT(a.out, HasSubstr("images/s"));
  EXPECT_THAT(a.out, HasSubstr("ETA"));
  const Outcome b = run(with(
      {"launch", "--nproc", "2", "--", kBinary, "train", "--plan", two.string(), "--log-json", log2.string()}, kSgd));
  ASSERT_EQ(b.exit_code, 0) << describe(b);
  const std::vector<double> l1 = losses_in(log1), l2 = losses_in(log2);
  ASSERT_EQ(l1.size(), 4u);
  ASSERT_EQ(l2.size(), 4u);
  for (size_t i = 0; i < l1.size(); ++i) {
    EXPECT_NEAR(l1[i], l2[i], 1e-4 * std::abs(l1[i])) << "step " << i + 1;
  }
  EXPECT_NE(l1.front(), l1.back());  // it trains

  // Another seed starts from other weights: the comparison above can fail.
  const fs::path log3 = dir.path() / "three.jsonl";
  std::vector<std::string> other = with({"train", "--plan", one.string(), "--log-json", log3.string()}, kSgd);
  other.back() = "6";
  ASSERT_EQ(run(other).exit_code, 0);
  EXPECT_NE(losses_in(log3).front(), l1.front());
}

// AdamW with gradient clipping, label smoothing and warm-up: two ranks (the fully connected
// layers' output channels split between them) clip by the same global norm and train the
// losses of one process; their AdamW state, saved at step 4, resumes in one process to the
// losses of 6 straight steps.
TEST(TrainCommand, AdamWWithClippingOnTwoRanksTrainsTheLossesOfOneProcess) {
  ScratchDir dir;
  const fs::path one = lenet_plan(dir, 1, "one.json"), two = lenet_plan(dir, 2, "two.json");
  const std::vector<std::string> adamw = {"--data",
                                          "synthetic",
                                          "--optimizer",
                                          "adamw",
                                          "--lr",
                                          "0.002",
                                          "--betas",
                                          "0.9,0.99",
                                          "--weight-decay",
                                          "0.05",
                                          "--clip-grad-norm",
                                          "0.05",
                                          "--label-smoothing",
                                          "0.1",
                                          "--warmup-steps",
                                          "2",
                                          "--no-decay-bn-bias",
                                          "--kernels",
                                          "reference",
                                          "--seed",
                                          "5"};
  const fs::path straight = dir.path() / "straight.jsonl", unclipped = dir.path() / "unclipped.jsonl";
  const fs::path ranks = dir.path() / "ranks.jsonl", resumed = dir.path() / "resumed.jsonl";
  const fs::path saved = dir.path() / "ranks.safetensors";
  Outcome r = run(with({"train", "--plan", one.string(), "--steps", "6", "--log-json", straight.string()}, adamw));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::vector<std::string> no_clip =
      with({"train", "--plan", one.string(), "--steps", "6", "--log-json", unclipped.string()}, adamw);
  *(std::find(no_clip.begin(), no_clip.end(), "--clip-grad-norm") + 1) = "0";
  r = run(no_clip);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  r = run(with({"launch", "--nproc", "2", "--", kBinary, "train", "--plan", two.string(), "--steps", "4", "--log-json",
                ranks.string(), "--save", saved.string()},
               adamw));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  r = run(with(
      {"train", "--plan", one.string(), "--steps", "6", "--log-json", resumed.string(), "--resume", saved.string()},
      adamw));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const std::vector<double> want = losses_in(straight), other = losses_in(unclipped);
  std::vector<double> got = losses_in(ranks);
  ASSERT_EQ(got.size(), 4u);
  for (const std::string& line : lines_of(read_text(resumed))) got.push_back(nlohmann::json::parse(line).at("loss"));
  ASSERT_EQ(got.size(), want.size());
  // Observed: within 1.1e-9 relative.
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-7 * std::abs(want[i])) << "step " << i + 1;
  // Clipping is in force: the unclipped run differs, by little (observed 1.9e-5 relative at
  // step 6) as AdamW is nearly blind to the scale of the gradients, but far beyond the above.
  double apart = 0;
  for (size_t i = 0; i < want.size(); ++i) apart = std::max(apart, std::abs(other[i] - want[i]) / std::abs(want[i]));
  EXPECT_GT(apart, 1e-6);
}

// --profile: per rank, every layer's compute and communication, and the communication by
// kind, after the first step.
// One process computes every tile and sends nothing; two ranks each compute their half and
// move boxes, all-reduce gradients and the loss.
TEST(TrainCommand, ProfileTimesLayersAndCommunicationPerRank) {
  ScratchDir dir;
  const fs::path one = lenet_plan(dir, 1, "one.json"), two = lenet_plan(dir, 2, "two.json");
  const fs::path profile = dir.path() / "profile.json";
  Outcome r = run(with({"train", "--plan", one.string(), "--profile", profile.string()}, kSgd));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  nlohmann::json p = nlohmann::json::parse(read_text(profile));
  EXPECT_EQ(p.at("steps").get<double>(), 3);  // 4 steps, the first not profiled
  EXPECT_EQ(p.at("layers").size(), 14u);      // LeNet-5 has 14 layers, input and loss included
  EXPECT_GT(p.at("compute_s").get<double>(), 0);
  EXPECT_EQ(p.at("communication").at("moves").at("calls").get<double>(), 0);

  r = run(with(
      {"launch", "--nproc", "2", "--", kBinary, "train", "--plan", two.string(), "--profile", profile.string()}, kSgd));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("[rank 1] communication per step: moves"));
  for (int rank : {0, 1}) {
    p = nlohmann::json::parse(read_text(profile.string() + ".rank" + std::to_string(rank)));
    EXPECT_EQ(p.at("rank"), rank);
    EXPECT_GT(p.at("compute_s").get<double>(), 0);
    const nlohmann::json& c = p.at("communication");
    EXPECT_GT(c.at("moves").at("calls").get<double>(), 0);              // n2 -> c2 moves boxes
    EXPECT_EQ(c.at("weight_reductions").at("calls").get<double>(), 1);  // one bucket: LeNet-5 is small
    EXPECT_EQ(c.at("loss_reductions").at("calls").get<double>(), 1);
    EXPECT_GT(c.at("moves").at("seconds").get<double>(), 0);
    // Per layer, the moves of its input edges: they add up to all the moves, each on the
    // layer that `layerplan predict --json` prices them on.
    double calls = 0, seconds = 0;
    for (const nlohmann::json& layer : p.at("layers")) {
      calls += layer.at("moves").at("calls").get<double>();
      seconds += layer.at("moves").at("seconds").get<double>();
      EXPECT_EQ(layer.at("statistics_reductions").at("calls").get<double>(), 0);  // LeNet-5 has no batch-norm
    }
    EXPECT_EQ(calls, c.at("moves").at("calls").get<double>());
    EXPECT_NEAR(seconds, c.at("moves").at("seconds").get<double>(), 1e-9);
    EXPECT_GT(p.at("layers").at(8).at("moves").at("calls").get<double>(), 0);  // fc1, the c2 layer
  }
}

TEST(TrainCommand, PlanFromTheEnvironment) {
  ScratchDir dir;
  const fs::path one = lenet_plan(dir, 1, "one.json");
  const Outcome r = run({"train", "--steps", "2", "--kernels", "reference"}, {"LAYERPLAN_PLAN=" + one.string()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("step 2/2"));
}

TEST(TrainCommand, BadInputIsOneLineAndExit2WithNothingWritten) {
  ScratchDir dir;
  const fs::path one = lenet_plan(dir, 1, "one.json"), two = lenet_plan(dir, 2, "two.json");
  const fs::path corrupt = dir.path() / "corrupt.json";
  write_text(corrupt, read_text(one).substr(0, 200));
  const fs::path log = dir.path() / "log.jsonl";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"train"}, "no plan"},
      {{"train", "--plan", (dir.path() / "missing.json").string()}, "cannot be read"},
      {{"train", "--plan", corrupt.string()}, "not JSON (syntax error at byte"},
      {{"train", "--plan", one.string(), "--model", "alexnet"}, "is for model 'lenet5'"},
      {{"train", "--plan", two.string()}, "is for 2 devices, this run has 1 process"},
      {{"train", "--plan", one.string(), "--data", (dir.path() / "nosuch.safetensors").string()}, "nosuch.safetensors"},
      {{"train", "--plan", one.string(), "--shuffle", "maybe"}, "--shuffle: 'maybe': expected on or off"},
      {{"train", "--plan", one.string(), "--lr-schedule", "linear"},
       "--lr-schedule: 'linear': expected constant, cosine or step"},
      {{"train", "--plan", one.string(), "--kernels", "cuda"}, "--kernels: 'cuda': expected onednn or reference"},
      {{"train", "--plan", one.string(), "--profile", (dir.path() / "no" / "profile.json").string()}, "--profile"},
  };
  for (const Case& c : cases) {
    const Outcome r = run(with(c.args, {"--log-json", log.string()}));
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_EQ(lines_of(r.err).size(), 1u) << describe(r);
    EXPECT_THAT(r.err, HasSubstr(c.message)) << describe(r);
    EXPECT_FALSE(fs::exists(log)) << describe(r);
  }
  // Under the launcher, a plan for another device count fails every rank the same way.
  const Outcome r = run({"launch", "--nproc", "2", "--", kBinary, "train", "--plan", one.string()});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err + r.out, HasSubstr("is for 1 device, this run has 2 processes"));
}

// Optimizer, schedule, clipping and label-smoothing values out of range: exit 2, one line
// naming the flag and the value, no log written.
TEST(TrainCommand, BadOptimizerSettingsAreOneLineAndExit2) {
  ScratchDir dir;
  const fs::path one = lenet_plan(dir, 1, "one.json");
  const fs::path log = dir.path() / "log.jsonl";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--optimizer", "adam"}, "--optimizer: 'adam': expected sgd or adamw"},
      {{"--nesterov", "--momentum", "0"}, "--nesterov with --momentum 0: expected a momentum above 0"},
      {{"--nesterov", "--optimizer", "adamw"}, "--nesterov: expected --optimizer sgd"},
      {{"--warmup-steps", "-1"}, "--warmup-steps -1: expected 0 or more steps"},
      {{"--lr-schedule", "step"}, "--lr-schedule step with --lr-step-every 0: expected 1 or more steps"},
      {{"--lr-step-every", "5"}, "--lr-step-every 5: expected --lr-schedule step"},
      {{"--lr-schedule", "step", "--lr-step-every", "2", "--lr-gamma", "0"},
       "--lr-gamma 0: expected a positive factor"},
      {{"--label-smoothing", "1"}, "--label-smoothing 1: expected a number from 0 to below 1"},
      {{"--label-smoothing", "-0.1"}, "--label-smoothing -0.1: expected a number from 0 to below 1"},
      {{"--clip-grad-norm", "-1"}, "--clip-grad-norm -1: expected a positive norm"},
      {{"--clip-grad-norm", "inf"}, "--clip-grad-norm inf: expected a positive norm"},
      {{"--optimizer", "adamw", "--betas", "0.9"}, "--betas '0.9': expected two numbers B1,B2"},
      {{"--optimizer", "adamw", "--betas", "0.9,x"}, "--betas '0.9,x': expected two numbers B1,B2"},
      {{"--optimizer", "adamw", "--betas", "0.9,1"}, "--betas 0.9,1: expected two numbers from 0 to below 1"},
      {{"--optimizer", "adamw", "--eps", "0"}, "--eps 0: expected a positive number"},
  };
  for (const auto& [flags, message] : cases) {
    const Outcome r = run(with({"train", "--plan", one.string(), "--steps", "1", "--log-json", log.string()}, flags));
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_EQ(lines_of(r.err).size(), 1u) << describe(r);
    EXPECT_THAT(r.err, HasSubstr(message)) << describe(r);
    EXPECT_FALSE(fs::exists(log)) << describe(r);
  }
}

// Warm-up then a step schedule: the JSON log has each step's learning rate; Nesterov SGD
// with no decay on biases and batch norm, clipping and label smoothing train; AdamW too.
TEST(TrainCommand, LogsTheLearningRateOfEveryStep) {
  ScratchDir dir;
  const fs::path one = lenet_plan(dir, 1, "one.json");
  const fs::path log = dir.path() / "log.jsonl";
  const Outcome r = run(with({"train", "--plan", one.string(), "--log-json", log.string(), "--warmup-steps", "2",
                              "--lr-schedule", "step", "--lr-step-every", "1", "--lr-gamma", "0.5", "--nesterov",
                              "--no-decay-bn-bias", "--clip-grad-norm", "1", "--label-smoothing", "0.1"},
                             kSgd));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::vector<double> rates;
  for (const std::string& line : lines_of(read_text(log))) rates.push_back(nlohmann::json::parse(line).at("lr"));
  ASSERT_EQ(rates.size(), 4u);
  // --lr 0.05: warm-up 0.05/3, 0.05*2/3, then 0.05 and 0.025.
  const std::vector<double> want = {0.05 / 3, 0.05 * 2 / 3, 0.05, 0.025};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(rates[i], want[i], 1e-12) << "step " << i + 1;
  const std::vector<double> losses = losses_in(log);
  for (const double loss : losses) EXPECT_TRUE(std::isfinite(loss));

  const Outcome adamw = run(with({"train", "--plan", one.string(), "--optimizer", "adamw", "--betas", "0.9,0.99",
                                  "--eps", "1e-7", "--lr", "0.001"},
                                 {"--data", "synthetic", "--steps", "3", "--kernels", "reference"}));
  ASSERT_EQ(adamw.exit_code, 0) << describe(adamw);
  EXPECT_THAT(adamw.out, HasSubstr("step 3/3"));
}

// 40 random 1x32x32 images with labels 0-9: 5 batches of 8 an epoch.
fs::path small_dataset(const ScratchDir& dir) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> images(40 * 32 * 32);
  for (float& v : images) v = normal(rng);
  std::vector<int64_t> labels(40);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int64_t>(i % 10);
  safetensors::Contents c;
  c.tensors["images"] = safetensors::Tensor::from_floats({40, 1, 32, 32}, images);
  c.tensors["labels"] = safetensors::Tensor::from_int64s({40}, labels);
  const fs::path file = dir.path() / "small.safetensors";
  safetensors::write_file(file.string(), c);
  return file;
}

TEST(TrainCommand, ResumingAtStep3ToStep8EqualsEightStraightSteps) {
  ScratchDir dir;
  const fs::path one = lenet_plan(dir, 1, "one.json"), two = lenet_plan(dir, 2, "two.json");
  const std::vector<std::string> sgd = {"--data",         small_dataset(dir).string(),
                                        "--lr",           "0.05",
                                        "--momentum",     "0.9",
                                        "--weight-decay", "1e-3",
                                        "--kernels",      "reference",
                                        "--shuffle",      "on"};
  const fs::path straight = dir.path() / "straight.safetensors", at3 = dir.path() / "at3.safetensors",
                 resumed = dir.path() / "resumed.safetensors";
  const fs::path log_straight = dir.path() / "straight.jsonl", log_resumed = dir.path() / "resumed.jsonl";
  // Straight: 8 steps (one epoch and 3 steps) on one process.
  Outcome r = run(with({"train", "--plan", one.string(), "--steps", "8", "--save", straight.string(), "--log-json",
                        log_straight.string()},
                       sgd));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  // Saved at step 3 by two ranks (checkpoints do not depend on the plan), resumed by one.
  r = run(with({"launch", "--nproc", "2", "--", kBinary, "train", "--plan", two.string(), "--steps", "3", "--save",
                at3.string()},
               sgd));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  r = run(with({"train", "--plan", one.string(), "--steps", "8", "--resume", at3.string(), "--save", resumed.string(),
                "--log-json", log_resumed.string()},
               sgd));
  ASSERT_EQ(r.exit_code, 0) << describe(r);

  const std::vector<double> a = losses_in(log_straight);
  ASSERT_EQ(a.size(), 8u);
  std::vector<double> b;
  for (const std::string& line : lines_of(read_text(log_resumed))) b.push_back(nlohmann::json::parse(line).at("loss"));
  ASSERT_EQ(b.size(), 5u);
  for (size_t i = 0; i < b.size(); ++i) EXPECT_NEAR(b[i], a[i + 3], 1e-4 * std::abs(a[i + 3])) << "step " << i + 4;

  const TrainingState x = read_checkpoint_files(straight.string()), y = read_checkpoint_files(resumed.string());
  EXPECT_EQ(x.metadata.at("step"), "8");
  EXPECT_EQ(y.metadata.at("step"), "8");
  EXPECT_EQ(y.metadata.at("written_by"), version_line());  // which layerplan wrote it
  ASSERT_EQ(x.arrays.size(), y.arrays.size());
  for (const auto& [name, array] : x.arrays) {
    ASSERT_TRUE(y.arrays.count(name)) << name;
    const std::vector<float>& v = y.arrays.at(name).values;
    ASSERT_EQ(array.values.size(), v.size()) << name;
    double worst = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      worst = std::max(worst, std::abs(double{array.values[i]} - v[i]) / std::max(1e-3, std::abs(double{v[i]})));
    }
    EXPECT_LE(worst, 1e-4) << name;
  }
  // torch's names and shapes, and the momentum buffers in the file beside them.
  EXPECT_EQ(x.arrays.at("conv1.weight").shape, (std::vector<int64_t>{6, 1, 5, 5}));
  EXPECT_EQ(x.arrays.at("fc1.weight").shape, (std::vector<int64_t>{120, 400}));
  EXPECT_EQ(x.arrays.at("momentum_buffer.fc3.bias").shape, (std::vector<int64_t>{10}));
  EXPECT_EQ(read_checkpoint(straight.string()).arrays.count("momentum_buffer.fc3.bias"), 0U);
  EXPECT_TRUE(fs::exists(dir.path() / "straight.optimizer.safetensors"));

  // Weights only: --init-from starts at step 0 on the first batch, but from the
  // checkpoint's weights, so its first loss is not the seeded start's.
  const fs::path log_init = dir.path() / "init.jsonl";
  r = run(with(
      {"train", "--plan", one.string(), "--steps", "1", "--init-from", at3.string(), "--log-json", log_init.string()},
      sgd));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(losses_in(log_init).front(), a.front());
}

// SIGUSR1 to `layerplan launch` (as `scancel --signal=USR1` sends it to a job's tasks): both
// ranks stop after the same step, rank 0 writes that step's checkpoint, every process exits
// 75, and `--resume auto` continues it with the losses of a run never stopped.
TEST(TrainCommand, Sigusr1StopsBothRanksAfterAStepWithACheckpointAndResumeAutoContinues) {
  ScratchDir dir;
  const fs::path two = lenet_plan(dir, 2, "two.json"), one = lenet_plan(dir, 1, "one.json");
  const fs::path folder = dir.path() / "ck", log = dir.path() / "stopped.jsonl", out = dir.path() / "out.txt";
  // The run is far longer than the test waits (minutes): it ends by the signal. Should the
  // signal be lost, it ends by itself (exit 0, and the test fails) or by `timeout`, whose
  // SIGTERM the script passes on, so that no rank is left running.
  std::string train = quote(kBinary) + " launch --nproc 2 -- " + quote(kBinary) + " train --plan " +
                      quote(two.string()) + " --steps 20000 --save-dir " + quote(folder.string()) + " --log-json " +
                      quote(log.string());
  std::vector<std::string> sgd = kSgd;
  sgd.erase(sgd.begin() + 2, sgd.begin() + 4);  // without its --steps 4
  for (const std::string& a : sgd) train += " " + quote(a);
  const std::string script = train + " >" + quote(out.string()) + " 2>&1 & pid=$!; " +
                             "trap 'kill -TERM $pid; wait $pid; exit 1' TERM; while [ \"$(cat " + quote(log.string()) +
                             " 2>/dev/null | wc -l)\" -lt 3 ]; do " +
                             "sleep 0.05; done; kill -USR1 $pid; wait $pid; echo \"exit $?\" >>" + quote(out.string());
  ASSERT_EQ(std::system(("timeout 120 bash -c " + quote(script)).c_str()), 0);
  const std::string printed = read_text(out);
  EXPECT_THAT(printed, HasSubstr("exit 75")) << printed;
  EXPECT_THAT(printed, HasSubstr("stopped by SIGUSR1 after step")) << printed;
  const std::vector<double> before = losses_in(log);
  const std::optional<SavedCheckpoint> saved = newest_checkpoint(folder.string());
  ASSERT_TRUE(saved) << printed;
  EXPECT_EQ(saved->step, static_cast<int64_t>(before.size())) << printed;

  // Resumed on one process to 3 steps past the stop, against the same run never stopped.
  const std::string end = std::to_string(before.size() + 3);
  const fs::path log_resumed = dir.path() / "resumed.jsonl", log_straight = dir.path() / "straight.jsonl";
  std::vector<std::string> rest = kSgd;
  rest[3] = end;  // --steps
  Outcome r = run(with({"train", "--plan", one.string(), "--save-dir", folder.string(), "--resume", "auto",
                        "--log-json", log_resumed.string()},
                       rest));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("--resume auto: continuing from " + saved->folder)) << describe(r);
  r = run(with({"train", "--plan", one.string(), "--log-json", log_straight.string()}, rest));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const std::vector<double> straight = losses_in(log_straight);
  std::vector<double> resumed;
  for (const std::string& line : lines_of(read_text(log_resumed))) {
    resumed.push_back(nlohmann::json::parse(line).at("loss"));
  }
  ASSERT_EQ(resumed.size(), 3U);
  for (size_t i = 0; i < before.size(); ++i) EXPECT_NEAR(before[i], straight[i], 1e-4 * std::abs(straight[i])) << i;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(resumed[i], straight[before.size() + i], 1e-4 * std::abs(straight[before.size() + i])) << i;
  }
  // Run again once finished (a job requeued after its end): exit 0, nothing trained.
  r = run(with({"train", "--plan", one.string(), "--save-dir", folder.string(), "--resume", "auto"}, rest));
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("nothing to do")) << describe(r);
}

// The weights file of a ResNet-50 checkpoint holds exactly the tensors of torchvision's
// resnet50().state_dict(), by name, dtype and shape (tests/data/torchvision/: torchvision
// 0.14's own list, as its first line says), so load_state_dict(strict=True) takes it;
// bench/torchvision_strict_load.py loads checkpoints into torchvision itself.
TEST(TrainCommand, ResNet50WeightsAreExactlyTorchvisionsStateDict) {
  ScratchDir dir;
  const fs::path plan = dir.path() / "resnet50.json", weights = dir.path() / "resnet50.safetensors";
  Outcome r = run(
      {"plan", "--model", "resnet50", "--batch", "1", "--gpus", "1", "--gpus-per-node", "1", "--json", plan.string()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  r = run({"train", "--plan", plan.string(), "--steps", "1", "--save", weights.string()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);

  std::vector<std::string> expected;
  for (const std::string& line : lines_of(read_text(data_file("torchvision/resnet50_state_dict.txt")))) {
    if (!line.empty() && line[0] != '#') expected.push_back(line);
  }
  std::vector<std::string> ours;
  const safetensors::Reader file(weights.string());
  for (const auto& [name, info] : file.tensors()) {
    std::string shape;
    for (const int64_t d : info.shape) shape += (shape.empty() ? "" : "x") + std::to_string(d);
    const std::string dtype = info.dtype == safetensors::DType::kI64 ? "int64" : "float32";
    ours.push_back(name + " " + dtype + " " + (shape.empty() ? "scalar" : shape));
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(expected.size(), 320U);  // 53 batch-norms of 5 tensors, 53 convolutions, fc's 2
  EXPECT_EQ(ours, expected);
}

TEST(TrainCommand, BadCheckpointsAreOneLineAndExit2) {
  ScratchDir dir;
  const fs::path one = lenet_plan(dir, 1, "one.json");
  const fs::path corrupt = dir.path() / "corrupt.safetensors", save = dir.path() / "out.safetensors";
  write_text(corrupt, "not a safetensors file at all");
  const fs::path alexnet = dir.path() / "alexnet.safetensors";
  write_checkpoint(alexnet.string(), TrainingState{{}, {{"model", "alexnet"}, {"step", "1"}}, {}});
  const fs::path empty = dir.path() / "empty.safetensors";
  write_checkpoint(empty.string(), TrainingState{{}, {{"step", "1"}}, {}});
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--resume", corrupt.string()}, "corrupt.safetensors"},
      {{"--resume", (dir.path() / "missing.safetensors").string()}, "missing.safetensors"},
      {{"--resume", alexnet.string()}, "is of model 'alexnet'"},
      {{"--init-from", empty.string()}, "has no F32 tensor 'conv1.weight'"},
  };
  for (const auto& [args, message] : cases) {
    const Outcome r = run(with({"train", "--plan", one.string(), "--steps", "2", "--save", save.string()}, args));
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_EQ(lines_of(r.err).size(), 1u) << describe(r);
    EXPECT_THAT(r.err, HasSubstr(message)) << describe(r);
    EXPECT_FALSE(fs::exists(save)) << describe(r);
  }
}

// A step count out of range was "internal error: stoll", exit 1.
TEST(TrainCommand, ACheckpointStepThatIsNotAStepCountIsOneLineNamingTheFileAndTheField) {
  ScratchDir dir;
  const fs::path one = lenet_plan(dir, 1, "one.json");
  for (const std::string step : {"99999999999999999999", "2147483648", "-1", "12abc", ""}) {
    const fs::path file = dir.path() / "huge.safetensors";
    write_checkpoint(file.string(), TrainingState{{}, {{"model", "lenet5"}, {"step", step}}, {}});
    const Outcome r = run({"train", "--plan", one.string(), "--steps", "2", "--resume", file.string()});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    ASSERT_EQ(lines_of(r.err).size(), 1u) << describe(r);
    EXPECT_EQ(r.err, "layerplan: checkpoint '" + file.string() + "': metadata field 'step' is '" + step +
                         "': expected a whole number of steps from 0 to 2147483647\n");
  }
}

// "epoch 1 (part): test accuracy 80.84% (8071 of 9984 images), ...": the image counts.
std::pair<long, long> test_counts(const Outcome& r) {
  const size_t at = r.out.find("test accuracy");
  if (at == std::string::npos) return {-1, -1};
  long correct = -1, total = -1;
  std::sscanf(r.out.c_str() + r.out.find('(', at), "(%ld of %ld images)", &correct, &total);
  return {correct, total};
}

TEST(TrainCommand, FashionMnistTestAccuracyIsTheSameOnOneProcessAndTwoRanks) {
  // Needs Debian's dataset-fashion-mnist (scripts/setup installs it), as datasets_test.
  ScratchDir dir;
  const fs::path one = lenet_plan(dir, 1, "one.json"), two = lenet_plan(dir, 2, "two.json");
  // The reference loops, not oneDNN: oneDNN picks its kernels by the CPU's ISA and thread
  // count, and max pooling's gradient jumps where two inputs of a window nearly tie. On an
  // AVX2-only CPU (ONEDNN_MAX_CPU_ISA=AVX2) the ranks' weights differ from the one
  // process's by 1e-8 after step 2 (the batch's sum is split across ranks), which flips the
  // winner of one window of conv1's 2x2 pooling at step 3 (sample 6, channel 4); the runs
  // then part: 3144 against 3037 correct at step 30. The loops are the same machine code on
  // every x86-64 CPU, so this comparison means the same everywhere (docs/runtime.md,
  // "Exactness on any CPU").
  const std::vector<std::string> args = {"--data", "fashion-mnist", "--steps",   "30",       "--lr",
                                         "0.05",   "--normalize",   "--kernels", "reference"};
  const Outcome a = run(with({"train", "--plan", one.string()}, args));
  ASSERT_EQ(a.exit_code, 0) << describe(a);
  EXPECT_THAT(a.out, HasSubstr("padded to 32x32, normalised (mean 0.286"));
  const Outcome b = run(with({"launch", "--nproc", "2", "--", kBinary, "train", "--plan", two.string()}, args));
  ASSERT_EQ(b.exit_code, 0) << describe(b);
  const auto [correct1, total1] = test_counts(a);
  const auto [correct2, total2] = test_counts(b);
  EXPECT_EQ(total1, 10000);  // batch 8 divides the test set
  EXPECT_EQ(total2, 10000);
  // 30 steps of 8 standardised images: well above chance (10 %; 31 % measured), and the
  // same count on both (a prediction may flip where two probabilities tie to rounding).
  EXPECT_GT(correct1, 2500) << a.out;
  EXPECT_LE(std::abs(correct1 - correct2), 2) << a.out << b.out;
}

}  // namespace
}  // namespace layerplan
