#pragma once
// What rank 0 of a training run writes as it goes (trainer.h), a record per step and per
// test evaluation, to each file the options name:
//   --log-json FILE    a JSON line each;
//   --log-csv FILE     a header row, then a CSV row each;
//   --tensorboard DIR  a new TensorBoard event file in DIR (tensorboard_events.h), an Event each.
// Each file is created fresh when the run starts (a new file put in place, common/safe_write.h)
// and grows a record at a time, so it can be followed while the run goes on.
#include <cstdint>
#include <memory>

#include "common/safe_write.h"
#include "runtime/training/tensorboard_events.h"
#include "runtime/training/trainer_options.h"
#include "runtime/training/training_observer.h"

namespace layerplan {

// One training step, as the logs record it.
struct StepRecord {
  int64_t step = 0;  // counted from the run's start, 1 for the first
  int epoch = 1;     // counted from 1
  double loss = 0;
  double lr = 0;            // the learning rate the step used
  double images_per_s = 0;  // of this step alone
};

// The CSV columns, in order: a step fills the first five, an evaluation step, epoch and the
// last two (the others are left empty).
inline constexpr const char* kTrainingCsvHeader = "step,epoch,loss,lr,images_per_s,test_loss,test_accuracy";

// Throws UsageError for a log path that cannot be written (a symbolic link or a folder at a
// file's path, a missing folder, a file at the TensorBoard folder's path), before training
// starts; makes the TensorBoard folder when it does not exist.
void check_training_log_paths(const TrainerOptions& options);

class TrainingLogs {
 public:
  // Creates every file the options name, then puts them in place: a file that cannot be
  // created leaves none of them behind. Throws UsageError naming the flag and the path.
  explicit TrainingLogs(const TrainerOptions& options);
  ~TrainingLogs();
  TrainingLogs(const TrainingLogs&) = delete;
  TrainingLogs& operator=(const TrainingLogs&) = delete;

  void step(const StepRecord& record);
  void evaluated(const TestEvaluation& evaluation);

 private:
  std::unique_ptr<NewFile> json_;
  std::unique_ptr<NewFile> csv_;
  std::unique_ptr<TensorBoardEventFile> tensorboard_;
};

}  // namespace layerplan
