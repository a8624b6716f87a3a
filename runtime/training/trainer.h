#pragma once
// Trains a model with a plan: the loop `layerplan train` runs (docs/runtime.md, "Training").
// One process computes every device of the plan; a launched rank (`layerplan launch`)
// computes its own device and talks to the others through Gloo. Each process loads only
// the samples its input tiles cover (train_data.h).
//
//   TrainerOptions options;
//   options.steps = 100;
//   Trainer trainer(graph, plan, options);    // checks, loads, connects
//   TrainingSummary summary = trainer.run();  // trains, evaluates, saves
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "model/geometry.h"
#include "model/model_graph.h"
#include "runtime/communicator.h"
#include "runtime/executor/executor.h"
#include "runtime/executor/transport.h"
#include "runtime/gloo_communicator.h"
#include "runtime/training/train_data.h"
#include "runtime/training/trainer_options.h"
#include "runtime/training/training_logs.h"
#include "runtime/training/training_observer.h"

namespace layerplan {

class BatchPrefetcher;

class Trainer {
 public:
  // `plan` holds one configuration per layer of `graph`, whose input layer's batch is the
  // global batch. `world`: this process is one rank of a launched job (the plan's device
  // count must be its world size); nullopt: this process runs every device. `graph` must
  // outlive the trainer.
  //
  // Everything that can be wrong with the input is checked before the logs are opened
  // or the ranks connect: throws UsageError for bad options, a missing or bad data file, a
  // missing output directory, a bad checkpoint or one at or past the run's end.
  Trainer(const ModelGraph& graph, std::vector<Configuration> plan, TrainerOptions options,
          const std::optional<GlooOptions>& world = std::nullopt);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Trains from the first (or restored) step to the end, evaluating on the test split at
  // the end of each epoch and of the run, saving where the options say, then writes the
  // profile. Stops early, after a whole step and with a checkpoint, when options.stop_signal
  // is set on any rank. Call once. A collective: every rank calls it.
  TrainingSummary run();

  int64_t total_steps() const { return total_; }
  int64_t steps_per_epoch() const { return steps_per_epoch_; }

 private:
  using Clock = std::chrono::steady_clock;

  void check_options() const;
  void load_data();
  void check_outputs() const;
  void open_log();
  void train_epoch(int epoch);
  void train_step(const GlobalBatch& batch, int epoch, Clock::time_point t0);
  GlobalBatch next_batch(BatchPrefetcher& batches);
  void report_step(int epoch, double loss, double lr, Clock::time_point t0, Clock::time_point t1);
  void find_newest_checkpoint();
  bool stop_agreed();
  void save();
  void write_trace_file(double steps);
  void evaluate(int epoch);
  TrainingSummary summary(double elapsed_s) const;

  const ModelGraph& graph_;
  const std::vector<Configuration> plan_;
  const TrainerOptions options_;
  const bool launched_;
  const GlooOptions world_;
  const Shape input_;
  const int64_t batch_;

  std::vector<Interval> needed_;  // the batch positions this process's input tiles cover
  TrainingData data_;
  int64_t steps_per_epoch_ = 0;
  int64_t total_ = 0;

  std::unique_ptr<Communicator> comm_;
  // With overlap under launch: a second context over every rank for the gradient buckets'
  // all-reduces (CommunicatorTransport), outliving the transport and executor.
  std::unique_ptr<Communicator> gradient_comm_;
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<Kernels> kernels_;
  std::unique_ptr<Executor> executor_;
  // Rank 0's logs (--log-json, --log-csv, --tensorboard): fresh files put in place at the
  // start, then appended to record by record, so that they can be followed while training runs.
  std::unique_ptr<TrainingLogs> logs_;

  std::optional<std::string> resume_;  // the checkpoint resumed from (--resume auto resolved)
  std::string resume_note_;
  bool already_finished_ = false;
  int stopped_by_ = 0;    // the signal that stopped the run, 0 for none
  std::string saved_to_;  // the last checkpoint written (rank 0)

  int64_t step_ = 0;
  int64_t first_step_ = 0;
  int64_t logged_ = 0;  // the step of the last progress report
  // Training time: both move forward by the time saving and evaluating take.
  Clock::time_point start_, interval_start_;
};

}  // namespace layerplan
