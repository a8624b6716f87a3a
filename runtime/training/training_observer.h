#pragma once
// What a Trainer (runtime/training/trainer.h) tells its caller while it runs: the run it is
// about to do, a step now and then, each test evaluation and the end. The trainer decides
// nothing about text: `layerplan train` prints these on rank 0 (cli/train_command.cc), a
// test collects them.
#include <cstdint>
#include <string>

#include "runtime/executor/transport.h"

namespace layerplan {

struct TrainingStart {
  std::string model;
  int64_t batch = 0;        // global batch
  std::string data;         // the data's one-line description
  int64_t total_steps = 0;  // the step the run ends at
  int64_t steps_per_epoch = 0;
  int64_t first_step = 0;    // 0, or the step a resumed run continues from
  std::string resumed_from;  // the checkpoint a resumed run read ("" for none)
  std::string note;          // what --resume auto found, for the user ("" for nothing to say)
};

struct StepProgress {
  int64_t step = 0;  // steps done, counted from the run's start (a resumed run's included)
  int64_t total_steps = 0;
  int epoch = 1;  // counted from 1
  double loss = 0;
  double lr = 0;  // the learning rate of this step
  // Since the previous report (or the start), saving and evaluating left out.
  double images_per_s = 0;
  // The remaining steps at the average pace so far.
  double eta_s = 0;
};

// Test-set accuracy over the whole batches of the test split.
struct TestEvaluation {
  int64_t step = 0;
  int epoch = 1;         // counted from 1
  bool partial = false;  // the run ended inside this epoch
  double accuracy = 0;   // correct / images
  int64_t correct = 0;
  int64_t images = 0;
  double loss = 0;  // mean over the batches
  // The share whose label is among the 5 highest outputs; -1 for a model of fewer than 5 classes.
  double top5_accuracy = -1;
  bool validation = false;  // the split is --val-data's, not the data's own test split
};

struct TrainingSummary {
  int64_t steps = 0;        // the steps this run did (a resumed run's earlier ones left out)
  double elapsed_s = 0;     // training time, saving and evaluating left out
  double images_per_s = 0;  // over elapsed_s
  // This process's communication since the first step (TrafficCounts::Time) and the steps
  // it covers: steps - 1, the first warming up. Zeros for one process.
  TrafficCounts communication;
  double profiled_steps = 0;
  // The signal (SIGTERM, SIGUSR1) that stopped the run after a whole step, 0 when it ran
  // to its end; the checkpoint written last ("" when none); the run was already finished
  // (--resume auto found a checkpoint at its last step: nothing was trained).
  int stopped_by_signal = 0;
  int64_t last_step = 0;  // the step the run ended after, counted from the run's start
  std::string saved_to;
  bool already_finished = false;
  // Images this process could not decode (image folders): each was skipped with a warning.
  int64_t bad_images = 0;
};

// Every callback runs on every rank, in the same order; the figures are the same on every
// rank except the times. The default callbacks do nothing.
class TrainingObserver {
 public:
  virtual ~TrainingObserver() = default;
  virtual void started(const TrainingStart& /*start*/) {}
  // After a step whose number is a multiple of TrainerOptions::log_every, the first and the last.
  virtual void progressed(const StepProgress& /*progress*/) {}
  virtual void evaluated(const TestEvaluation& /*evaluation*/) {}
  // At the end, after the last checkpoint is written and before the profile is.
  virtual void finished(const TrainingSummary& /*summary*/) {}
};

}  // namespace layerplan
