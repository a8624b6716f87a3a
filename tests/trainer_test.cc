// The training loop as a library (runtime/training/trainer.h), without the CLI: LeNet-5
// learns a tiny Fashion-MNIST-shaped dataset on one process, the observer hears what
// `layerplan train` prints, and the options are checked before anything runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "common/error.h"
#include "model/zoo.h"
#include "runtime/safetensors.h"
#include "runtime/training/trainer.h"
#include "tests/scratch_dir.h"

namespace layerplan {
namespace {

// Writes an IDX file (big-endian sizes after a magic number), gzipped as Debian ships them.
void write_idx(const std::string& path, uint32_t magic, const std::vector<uint32_t>& sizes,
               const std::vector<uint8_t>& bytes) {
  std::vector<uint8_t> out;
  const auto put = [&out](uint32_t word) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(word >> shift));
  };
  put(magic);
  for (uint32_t size : sizes) put(size);
  out.insert(out.end(), bytes.begin(), bytes.end());
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr) << path;
  ASSERT_EQ(gzwrite(file, out.data(), static_cast<unsigned>(out.size())), static_cast<int>(out.size()));
  gzclose(file);
}

// `samples` 28x28 images of 10 classes: class k lights the k-th of ten 14x5 blocks (two
// rows of five), under some noise, so a few steps learn it.
void write_split(const std::string& dir, const std::string& prefix, uint32_t samples, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> noise(0, 60);
  std::vector<uint8_t> images(static_cast<size_t>(samples) * 28 * 28), labels(samples);
  for (uint32_t i = 0; i < samples; ++i) {
    labels[i] = static_cast<uint8_t>(i % 10);
    for (size_t p = 0; p < 28 * 28; ++p) {
      const size_t row = p / 28, column = p % 28;
      const bool lit = column < 25 && row / 14 * 5 + column / 5 == labels[i];
      images[i * 28 * 28 + p] = static_cast<uint8_t>((lit ? 190 : 0) + noise(rng));
    }
  }
  write_idx(dir + "/" + prefix + "-images-idx3-ubyte.gz", 0x803, {samples, 28, 28}, images);
  write_idx(dir + "/" + prefix + "-labels-idx1-ubyte.gz", 0x801, {samples}, labels);
}

class Recorder : public TrainingObserver {
 public:
  void started(const TrainingStart& s) override { start = s; }
  void progressed(const StepProgress& p) override { steps.push_back(p); }
  void evaluated(const TestEvaluation& e) override { evaluations.push_back(e); }
  void finished(const TrainingSummary& s) override { summary = s; }

  TrainingStart start;
  std::vector<StepProgress> steps;
  std::vector<TestEvaluation> evaluations;
  TrainingSummary summary;
};

void write_text_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::vector<Configuration> one_device(const ModelGraph& graph) {
  return std::vector<Configuration>(static_cast<size_t>(graph.size()), Configuration{Degrees{}, {0}});
}

TEST(Trainer, LeNet5LearnsATinyDatasetAndTellsItsObserver) {
  ScratchDir dir;
  write_split(dir.path().string(), "train", 32, 1);  // batches of 8: 4 steps an epoch
  write_split(dir.path().string(), "t10k", 16, 2);
  ASSERT_EQ(setenv("LAYERPLAN_FASHION_MNIST_DIR", dir.path().c_str(), 1), 0);
  const ModelGraph graph = build_zoo_model("lenet5", 8);
  constexpr int kEpochs = 12;
  constexpr int64_t kSteps = 4 * kEpochs;
  Recorder recorder;
  TrainerOptions options;
  options.data = "fashion-mnist";
  options.epochs = kEpochs;
  // Learns within 12 epochs for every seed tried (1 to 6); momentum 0.9 overshoots here.
  options.lr = 0.1;
  options.momentum = 0.5;
  options.lr_schedule = LrSchedule::kCosine;
  options.normalize = true;
  options.kernels = KernelBackend::kReference;  // faster than oneDNN on a model this small
  options.log_every = 1;
  options.log_json = dir.file("log.jsonl");
  options.observer = &recorder;
  Trainer trainer(graph, one_device(graph), options);
  EXPECT_EQ(trainer.steps_per_epoch(), 4);
  EXPECT_EQ(trainer.total_steps(), kSteps);
  const TrainingSummary summary = trainer.run();
  unsetenv("LAYERPLAN_FASHION_MNIST_DIR");

  EXPECT_EQ(recorder.start.model, "lenet5");
  EXPECT_EQ(recorder.start.batch, 8);
  EXPECT_EQ(recorder.start.total_steps, kSteps);
  ASSERT_EQ(recorder.steps.size(), static_cast<size_t>(kSteps));
  for (size_t i = 0; i < recorder.steps.size(); ++i) {
    EXPECT_EQ(recorder.steps[i].step, static_cast<int64_t>(i) + 1);
    EXPECT_EQ(recorder.steps[i].epoch, static_cast<int>(i / 4) + 1);
    EXPECT_GT(recorder.steps[i].images_per_s, 0);
  }
  // The mean loss of the last epoch is well below the first's (ln 10 = 2.30 is chance).
  double first = 0, last = 0;
  for (size_t i = 0; i < 4; ++i) {
    first += recorder.steps[i].loss / 4;
    last += recorder.steps[static_cast<size_t>(kSteps) - 4 + i].loss / 4;
  }
  EXPECT_LT(last, 0.5 * first) << first << " " << last;

  ASSERT_EQ(recorder.evaluations.size(), static_cast<size_t>(kEpochs));  // after each epoch
  const TestEvaluation& end = recorder.evaluations.back();
  EXPECT_EQ(end.epoch, kEpochs);
  EXPECT_FALSE(end.partial);
  EXPECT_EQ(end.images, 16);
  EXPECT_GE(end.correct, 12) << end.accuracy;
  EXPECT_LT(end.loss, 0.5 * recorder.evaluations.front().loss);

  EXPECT_EQ(summary.steps, kSteps);
  EXPECT_EQ(recorder.summary.steps, kSteps);
  EXPECT_GT(summary.elapsed_s, 0);
  EXPECT_EQ(summary.profiled_steps, kSteps - 1);
  // The JSON log: a line per step and per evaluation.
  std::ifstream log(dir.file("log.jsonl"));
  int lines = 0;
  for (std::string line; std::getline(log, line);) ++lines;
  EXPECT_EQ(lines, kSteps + kEpochs);
}

TEST(Trainer, ObserverHearsEveryLogEveryStepsTheFirstAndTheLast) {
  const ModelGraph graph = build_zoo_model("lenet5", 8);
  Recorder recorder;
  TrainerOptions options;
  options.steps = 7;
  options.log_every = 3;
  options.kernels = KernelBackend::kReference;
  options.lr_schedule = LrSchedule::kCosine;
  options.observer = &recorder;
  Trainer(graph, one_device(graph), options).run();
  std::vector<int64_t> reported;
  for (const StepProgress& p : recorder.steps) reported.push_back(p.step);
  EXPECT_EQ(reported, (std::vector<int64_t>{1, 3, 6, 7}));
  EXPECT_TRUE(recorder.evaluations.empty());  // synthetic data has no test split
}

// Sets the stop flag, as the SIGUSR1 handler of `layerplan train` would, once step `at` is done.
class StopAtStep : public Recorder {
 public:
  explicit StopAtStep(int64_t at) : at_(at) {}
  void progressed(const StepProgress& p) override {
    Recorder::progressed(p);
    if (p.step == at_) flag = SIGUSR1;
  }
  volatile std::sig_atomic_t flag = 0;

 private:
  int64_t at_;
};

std::vector<double> losses_of(const Recorder& r) {
  std::vector<double> losses;
  for (const StepProgress& p : r.steps) losses.push_back(p.loss);
  return losses;
}

TEST(Trainer, AStopSignalEndsTheRunAfterTheStepWithACheckpointThatResumeAutoContinues) {
  ScratchDir dir;
  const ModelGraph graph = build_zoo_model("lenet5", 8);
  TrainerOptions base;
  base.steps = 7;
  base.log_every = 1;
  base.momentum = 0.9;
  base.lr = 0.05;
  base.kernels = KernelBackend::kReference;
  base.save_dir = dir.file("ck");
  base.keep = 2;

  Recorder straight;
  TrainerOptions options = base;
  options.save_dir = dir.file("straight");
  options.observer = &straight;
  Trainer(graph, one_device(graph), options).run();
  ASSERT_EQ(straight.steps.size(), 7U);

  StopAtStep stopping(3);
  options = base;
  options.observer = &stopping;
  options.stop_signal = &stopping.flag;
  const TrainingSummary stopped = Trainer(graph, one_device(graph), options).run();
  EXPECT_EQ(stopped.stopped_by_signal, SIGUSR1);
  EXPECT_EQ(stopped.last_step, 3);
  EXPECT_EQ(stopped.saved_to, dir.file("ck/step-00000003"));
  EXPECT_EQ(stopping.steps.size(), 3U);

  Recorder resumed;
  options = base;
  options.resume = "auto";
  options.observer = &resumed;
  const TrainingSummary rest = Trainer(graph, one_device(graph), options).run();
  EXPECT_EQ(resumed.start.first_step, 3);
  EXPECT_THAT(resumed.start.note, testing::HasSubstr("continuing from " + dir.file("ck/step-00000003")));
  EXPECT_EQ(rest.stopped_by_signal, 0);
  EXPECT_EQ(rest.steps, 4);
  std::vector<double> joined = losses_of(stopping), tail = losses_of(resumed);
  joined.insert(joined.end(), tail.begin(), tail.end());
  const std::vector<double> expected = losses_of(straight);
  ASSERT_EQ(joined.size(), expected.size());
  for (size_t i = 0; i < joined.size(); ++i) EXPECT_NEAR(joined[i], expected[i], 1e-6 * std::abs(expected[i])) << i;
  // keep = 2: the stop's checkpoint and the end's.
  EXPECT_TRUE(std::filesystem::exists(dir.file("ck/step-00000003/model.safetensors")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("ck/step-00000007/model.safetensors")));

  // Requeued once more after the end: nothing to train.
  Recorder again;
  options.observer = &again;
  const TrainingSummary done = Trainer(graph, one_device(graph), options).run();
  EXPECT_TRUE(done.already_finished);
  EXPECT_TRUE(again.steps.empty());
}

TEST(Trainer, ResumeAutoWithAnEmptyFolderStartsAtStepZero) {
  ScratchDir dir;
  const ModelGraph graph = build_zoo_model("lenet5", 8);
  Recorder recorder;
  TrainerOptions options;
  options.steps = 2;
  options.kernels = KernelBackend::kReference;
  options.save_dir = dir.file("new-folder");
  options.resume = "auto";
  options.observer = &recorder;
  Trainer(graph, one_device(graph), options).run();
  EXPECT_EQ(recorder.start.first_step, 0);
  EXPECT_THAT(recorder.start.note, testing::HasSubstr("no checkpoint in " + dir.file("new-folder")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("new-folder/step-00000002/model.safetensors")));
}

// AdamW's moments and step go into the optimizer file and come back with --resume: three
// steps, saved, then three more train the losses of six straight steps. SGD refuses to
// resume that state.
TEST(Trainer, AdamWStateIsSavedAndResumed) {
  ScratchDir dir;
  const ModelGraph graph = build_zoo_model("lenet5", 8);
  TrainerOptions base;
  base.optimizer = Optimizer::kAdamW;
  base.lr = 0.002;
  base.weight_decay = 0.05;
  base.beta2 = 0.99;
  base.warmup_steps = 2;
  base.clip_grad_norm = 1;
  base.label_smoothing = 0.1;
  base.decay_bn_bias = false;
  base.log_every = 1;
  base.kernels = KernelBackend::kReference;

  Recorder straight;
  TrainerOptions options = base;
  options.steps = 6;
  options.observer = &straight;
  Trainer(graph, one_device(graph), options).run();

  Recorder first, second;
  options = base;
  options.steps = 3;
  options.save = dir.file("run.safetensors");
  options.observer = &first;
  Trainer(graph, one_device(graph), options).run();
  const safetensors::Reader state(dir.file("run.optimizer.safetensors"));
  EXPECT_EQ(state.tensors().count("exp_avg.conv1.weight"), 1U);
  EXPECT_EQ(state.tensors().count("exp_avg_sq.conv1.weight"), 1U);
  EXPECT_EQ(state.tensors().count("momentum_buffer.conv1.weight"), 0U);
  EXPECT_EQ(state.metadata().at("step"), "3");

  options = base;
  options.steps = 6;
  options.resume = dir.file("run.safetensors");
  options.observer = &second;
  Trainer(graph, one_device(graph), options).run();
  std::vector<double> joined = losses_of(first), tail = losses_of(second);
  joined.insert(joined.end(), tail.begin(), tail.end());
  const std::vector<double> expected = losses_of(straight);
  ASSERT_EQ(joined.size(), expected.size());
  for (size_t i = 0; i < joined.size(); ++i) EXPECT_NEAR(joined[i], expected[i], 1e-6 * std::abs(expected[i])) << i;
  for (size_t i = 0; i < straight.steps.size(); ++i) {
    EXPECT_DOUBLE_EQ(straight.steps[i].lr, learning_rate_at(base, static_cast<int64_t>(i), 6)) << i;
  }
  EXPECT_NEAR(straight.steps[0].lr, 0.002 / 3, 1e-15);

  options.optimizer = Optimizer::kSgd;
  options.observer = nullptr;
  try {
    Trainer(graph, one_device(graph), options);
    ADD_FAILURE() << "SGD resumed AdamW's state";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("holds AdamW state"));
  }
}

TEST(Trainer, CosineScheduleFallsFromTheRateToZeroAtTheEnd) {
  TrainerOptions options;
  options.lr = 0.1;
  EXPECT_EQ(learning_rate_at(options, 0, 10), 0.1);
  EXPECT_EQ(learning_rate_at(options, 10, 10), 0.1);  // constant
  options.lr_schedule = LrSchedule::kCosine;
  EXPECT_DOUBLE_EQ(learning_rate_at(options, 0, 10), 0.1);
  EXPECT_NEAR(learning_rate_at(options, 5, 10), 0.05, 1e-12);
  EXPECT_NEAR(learning_rate_at(options, 10, 10), 0.0, 1e-12);
  for (int64_t step = 1; step <= 10; ++step) {
    EXPECT_LT(learning_rate_at(options, step, 10), learning_rate_at(options, step - 1, 10));
  }
}

TEST(Trainer, BadOptionsThrowBeforeAnythingRuns) {
  ScratchDir dir;
  const ModelGraph graph = build_zoo_model("lenet5", 8);
  const auto fails = [&](const TrainerOptions& options, const std::string& message) {
    try {
      Trainer trainer(graph, one_device(graph), options);
      ADD_FAILURE() << "no error, expected " << message;
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), testing::HasSubstr(message));
    }
  };
  TrainerOptions options;
  options.steps = 0;
  fails(options, "--steps");
  options = {};
  options.lr = 0;
  fails(options, "--lr");
  options = {};
  options.resume = dir.file("a.safetensors");
  options.init_from = dir.file("b.safetensors");
  fails(options, "--resume and --init-from");
  options = {};
  options.save = (dir.path() / "no" / "ck.safetensors").string();
  fails(options, "--save");
  options = {};
  options.save = dir.file("ck.safetensors");
  options.save_dir = dir.file("ck");
  fails(options, "--save and --save-dir");
  options = {};
  options.save_dir = dir.file("ck");
  options.keep = 0;
  fails(options, "--keep 0");
  options = {};
  options.resume = "auto";
  fails(options, "--resume auto: expected --save-dir");
  options = {};
  write_text_file(dir.file("a-file"), "x");
  options.save_dir = dir.file("a-file");
  fails(options, "--save-dir '" + dir.file("a-file") + "'");
  options = {};
  options.log_json = dir.file("log.jsonl");
  options.data = dir.file("missing.safetensors");
  fails(options, "missing.safetensors");
  EXPECT_FALSE(std::filesystem::exists(dir.file("log.jsonl")));
}

}  // namespace
}  // namespace layerplan
