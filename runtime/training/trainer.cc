#include "runtime/training/trainer.h"

#include <array>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <numeric>
#include <string>
#include <utility>

#include "common/error.h"
#include "common/safe_write.h"
#include "runtime/executor/checkpoint.h"
#include "runtime/executor/communicator_transport.h"
#include "runtime/executor/in_process_transport.h"
#include "runtime/heap_tuning.h"
#include "runtime/training/batch_prefetcher.h"
#include "runtime/training/checkpoint_store.h"
#include "runtime/training/train_profile.h"
#include "runtime/training/train_trace.h"

namespace layerplan {
namespace {

// The batch positions of the input layer's tiles that this process computes (a launched
// rank r holds device r; one process holds them all): the only samples it loads.
std::vector<Interval> positions_held(const Shape& input, const Configuration& input_config, bool launched, int rank) {
  std::vector<Interval> positions;
  const std::vector<Box> input_tiles = tiles(input, input_config);
  for (size_t t = 0; t < input_tiles.size(); ++t) {
    if (!launched || input_config.devices[t] == rank) positions.push_back(input_tiles[t].dim[0]);
  }
  return positions;
}

double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

Trainer::Trainer(const ModelGraph& graph, std::vector<Configuration> plan, TrainerOptions options,
                 const std::optional<GlooOptions>& world)
    : graph_(graph),
      plan_(std::move(plan)),
      options_(std::move(options)),
      launched_(world.has_value()),
      world_(world.value_or(GlooOptions{})),
      input_(graph.layer(0).output),
      batch_(graph.layer(0).output.n()) {
  check_options();
  load_data();
  check_outputs();
  resume_ = options_.resume;
  if (resume_ == "auto") find_newest_checkpoint();
  const std::optional<std::string> checkpoint = resume_ ? resume_ : options_.init_from;
  TrainingState restored;
  if (checkpoint) restored = read_checkpoint_files(*checkpoint);

  if (launched_) {
    comm_ = connect_gloo(world_);
    if (options_.overlap) {
      std::vector<int> every_rank(static_cast<size_t>(comm_->size()));
      std::iota(every_rank.begin(), every_rank.end(), 0);
      gradient_comm_ = comm_->create_group(every_rank);
    }
    transport_ = std::make_unique<CommunicatorTransport>(*comm_, gradient_comm_.get());
  } else {
    transport_ = std::make_unique<InProcessTransport>();
  }
  if (options_.keep_freed_memory) keep_freed_memory_in_process();  // a speed setting only
  kernels_ = make_kernels(options_.kernels, options_.kernel_threads);
  ExecutorOptions executor_options;
  executor_options.weight_seed = options_.seed;
  executor_options.optimizer = options_.optimizer == Optimizer::kAdamW ? OptimizerKind::kAdamW : OptimizerKind::kSgd;
  executor_options.sgd = {.lr = options_.lr,
                          .momentum = options_.momentum,
                          .weight_decay = options_.weight_decay,
                          .nesterov = options_.nesterov};
  executor_options.adamw = {.lr = options_.lr,
                            .beta1 = options_.beta1,
                            .beta2 = options_.beta2,
                            .eps = options_.eps,
                            .weight_decay = options_.weight_decay};
  executor_options.decay_bn_bias = options_.decay_bn_bias;
  executor_options.clip_grad_norm = options_.clip_grad_norm;
  executor_options.label_smoothing = options_.label_smoothing;
  executor_options.overlap = options_.overlap;
  executor_options.time_compute = options_.profile.has_value() || options_.trace.has_value();
  executor_ = std::make_unique<Executor>(graph_, plan_, *kernels_, *transport_, executor_options);
  if (checkpoint) step_ = restore_training_state(restored, *checkpoint, graph_, *executor_, resume_.has_value());
  if (options_.resume == "auto" && step_ >= total_) {
    already_finished_ = true;  // a requeued job whose run had ended: nothing to do
    return;
  }
  require(step_ < total_, "checkpoint '" + checkpoint.value_or("") + "' is at step " + std::to_string(step_) +
                              ", the run ends at step " + std::to_string(total_));
  open_log();
}

// --resume auto: the newest whole checkpoint of --save-dir, or none (from step 0).
void Trainer::find_newest_checkpoint() {
  const std::optional<SavedCheckpoint> newest = newest_checkpoint(*options_.save_dir);
  if (!newest) {
    resume_.reset();
    resume_note_ = "--resume auto: no checkpoint in " + *options_.save_dir + " yet, starting at step 0";
    return;
  }
  resume_ = newest->weights;
  resume_note_ = "--resume auto: continuing from " + newest->folder;
}

Trainer::~Trainer() = default;

void Trainer::check_options() const {
  require(!options_.steps || *options_.steps >= 1, "--steps: expected 1 or more");
  require(!options_.epochs || *options_.epochs >= 1, "--epochs: expected 1 or more");
  require(options_.log_every >= 1, "--log-every: expected 1 or more");
  require(options_.loader_threads >= 0,
          "--loader-threads " + std::to_string(options_.loader_threads) + ": expected 0 or more");
  require(options_.crop_scale > 0 && options_.crop_scale <= 1,
          "--crop-scale " + std::to_string(options_.crop_scale) + ": expected a share of the area in (0, 1]");
  require(options_.prefetch >= 1, "--prefetch " + std::to_string(options_.prefetch) + ": expected 1 or more");
  require(options_.lr > 0 && options_.momentum >= 0 && options_.weight_decay >= 0,
          "--lr must be positive, --momentum and --weight-decay not negative");
  check_optimizer_options(options_);
}

void Trainer::load_data() {
  const int64_t classes = graph_.layer(graph_.size() - 1).output.c();
  needed_ = positions_held(input_, plan_[0], launched_, world_.rank);
  const DataOptions data_options{.seed = options_.seed,
                                 .normalize = options_.normalize,
                                 .positions = needed_,
                                 .val_data = options_.val_data,
                                 .strict = options_.strict_data,
                                 .crop_scale = options_.crop_scale};
  data_ = load_training_data(options_.data, input_, classes, data_options);
  steps_per_epoch_ = data_.train->samples() / batch_;  // the last partial batch is dropped
  const int epochs = options_.epochs.value_or(1);
  total_ = static_cast<int64_t>(epochs) * steps_per_epoch_;
  if (options_.steps) total_ = options_.epochs ? std::min(total_, *options_.steps) : *options_.steps;
}

void Trainer::check_outputs() const {
  require(options_.save_every >= 0, "--save-every: expected 0 or more");
  require(!(options_.resume && options_.init_from), "--resume and --init-from: expected one of them");
  require(!(options_.save && options_.save_dir), "--save and --save-dir: expected one of them");
  require(options_.keep >= 1, "--keep " + std::to_string(options_.keep) + ": expected 1 or more");
  require(options_.resume != "auto" || options_.save_dir,
          "--resume auto: expected --save-dir DIR, the folder whose newest checkpoint it continues from");
  if (options_.save_dir) {
    std::error_code error;
    std::filesystem::create_directories(*options_.save_dir, error);
    require(!error && std::filesystem::is_directory(*options_.save_dir),
            "--save-dir '" + *options_.save_dir + "': expected a folder that exists or can be made" +
                (error ? ": " + error.message() : ""));
  }
  for (const auto& [flag, output] : {std::pair{"--save", options_.save}, std::pair{"--profile", options_.profile},
                                     std::pair{"--trace", options_.trace}}) {
    if (!output) continue;
    const std::filesystem::path dir = std::filesystem::absolute(*output).parent_path();
    require(std::filesystem::is_directory(dir), std::string(flag) + " '" + *output + "': no directory " + dir.string());
  }
  // Refused before training rather than after it (common/safe_write.h).
  if (options_.save) {
    check_output_path(*options_.save, "--save");
    check_output_path(optimizer_state_path(*options_.save), "--save");
  }
  if (options_.profile) check_output_path(profile_file(*options_.profile, launched_, world_.rank), "--profile");
  if (options_.trace && world_.rank == 0) check_output_path(*options_.trace, "--trace");
  if (world_.rank == 0) check_training_log_paths(options_);
}

void Trainer::open_log() {
  if (world_.rank == 0) logs_ = std::make_unique<TrainingLogs>(options_);
}

TrainingSummary Trainer::run() {
  if (options_.observer) {
    options_.observer->started({.model = graph_.name(),
                                .batch = batch_,
                                .data = data_.description,
                                .total_steps = total_,
                                .steps_per_epoch = steps_per_epoch_,
                                .first_step = step_,
                                .resumed_from = resume_.value_or(""),
                                .note = resume_note_});
  }
  if (already_finished_) {
    TrainingSummary done;
    done.already_finished = true;
    if (options_.observer) options_.observer->finished(done);
    return done;
  }
  start_ = Clock::now();
  interval_start_ = start_;
  first_step_ = step_;
  logged_ = step_;
  for (int epoch = static_cast<int>(step_ / steps_per_epoch_); step_ < total_ && stopped_by_ == 0; ++epoch) {
    train_epoch(epoch);
  }
  const double elapsed_s = seconds_between(start_, Clock::now());
  if (data_.test && step_ % steps_per_epoch_ != 0 && stopped_by_ == 0) {
    evaluate(static_cast<int>(step_ / steps_per_epoch_));
  }
  if (options_.save || options_.save_dir) save();
  TrainingSummary result = summary(elapsed_s);
  if (options_.observer) options_.observer->finished(result);
  if (options_.profile) {
    write_profile(profile_file(*options_.profile, launched_, world_.rank), graph_, *executor_, transport_->counts(),
                  world_.rank, result.profiled_steps);
  }
  if (options_.trace) write_trace_file(result.profiled_steps);
  return result;
}

// Every rank writes its part of the trace; rank 0 merges them once all have.
void Trainer::write_trace_file(double steps) {
  write_trace_part(*options_.trace, launched_, world_.rank, graph_, *executor_, transport_->counts(), steps);
  if (!launched_) return;
  comm_->barrier();
  if (world_.rank == 0) merge_trace_parts(*options_.trace, world_.world_size);
}

void Trainer::train_epoch(int epoch) {
  const EpochOrder order(data_.train->samples(), batch_, options_.shuffle, options_.seed, epoch);
  // A resumed run continues inside its epoch.
  const int64_t first = step_ % steps_per_epoch_;
  const int64_t last = std::min(steps_per_epoch_, first + (total_ - step_));
  BatchPrefetcher batches(*data_.train, order, epoch, first, last, input_, needed_,
                          {.threads = options_.loader_threads, .depth = options_.prefetch});
  for (int64_t b = first; b < last; ++b) {
    const auto t0 = Clock::now();  // waiting for the batch counts in the step's time
    train_step(next_batch(batches), epoch, t0);
    if (stop_agreed()) return;
    // Saving and evaluating do not count in images/s and ETA.
    const auto pause = Clock::now();
    if ((options_.save || options_.save_dir) && options_.save_every > 0 && step_ % options_.save_every == 0 &&
        step_ < total_)
      save();
    if (data_.test && b == steps_per_epoch_ - 1) evaluate(epoch);
    start_ += Clock::now() - pause;
    interval_start_ += Clock::now() - pause;
  }
}

// The next batch. Under --strict-data on several ranks, only the rank that decodes a bad
// image sees it: the ranks first agree whether any failed (one small all-reduce a batch), so
// that every rank stops with exit 2 rather than the others with a broken connection.
GlobalBatch Trainer::next_batch(BatchPrefetcher& batches) {
  if (!launched_ || !options_.strict_data) return batches.next();
  GlobalBatch batch;
  std::string error;
  try {
    batch = batches.next();
  } catch (const UsageError& e) {
    error = e.what();
  }
  float failed = error.empty() ? 0.0F : 1.0F;
  comm_->all_reduce_sum(&failed, 1);
  if (!error.empty()) throw UsageError(error);
  if (failed > 0) {
    throw UsageError(
        "--strict-data: another rank stopped at an image that cannot be decoded (its message names "
        "the file)");
  }
  return batch;
}

void Trainer::train_step(const GlobalBatch& gb, int epoch, Clock::time_point t0) {
  const double lr = learning_rate_at(options_, step_, total_);
  executor_->set_learning_rate(lr);
  const double loss = executor_->step(gb.images, gb.labels);
  ++step_;
  if (step_ == first_step_ + 1) {  // the first step warms up: the profile starts after it
    executor_->reset_compute_seconds();
    transport_->reset_counts();
  }
  report_step(epoch, loss, lr, t0, Clock::now());
}

// The log records of every step (rank 0), and the observer's report every log_every steps,
// the first and the last.
void Trainer::report_step(int epoch, double loss, double lr, Clock::time_point t0, Clock::time_point t1) {
  if (logs_) {
    logs_->step({.step = step_,
                 .epoch = epoch + 1,
                 .loss = loss,
                 .lr = lr,
                 .images_per_s = static_cast<double>(batch_) / seconds_between(t0, t1)});
  }
  if (step_ % options_.log_every != 0 && step_ != first_step_ + 1 && step_ != total_) return;
  const double elapsed = seconds_between(start_, t1);
  const int64_t in_interval = step_ - logged_;
  logged_ = step_;
  const double interval_s = seconds_between(interval_start_, t1);
  interval_start_ = t1;
  if (!options_.observer) return;
  options_.observer->progressed(
      {.step = step_,
       .total_steps = total_,
       .epoch = epoch + 1,
       .loss = loss,
       .lr = lr,
       .images_per_s = static_cast<double>(batch_ * in_interval) / interval_s,
       .eta_s = elapsed / static_cast<double>(step_ - first_step_) * static_cast<double>(total_ - step_)});
}

// After each step: did a signal ask any rank to stop? Every rank answers the same (one
// small all-reduce a step), so that all stop after the same step and save it together.
bool Trainer::stop_agreed() {
  if (!options_.stop_signal) return false;
  const int local = *options_.stop_signal;
  if (!launched_) {
    stopped_by_ = local;
    return local != 0;
  }
  // Ranks that got SIGUSR1, ranks that got another signal (SIGTERM).
  std::array<float, 2> asked = {local == SIGUSR1 ? 1.0F : 0.0F, local != 0 && local != SIGUSR1 ? 1.0F : 0.0F};
  comm_->all_reduce_sum(asked.data(), asked.size());
  if (asked[0] + asked[1] == 0) return false;
  stopped_by_ = asked[1] > 0 ? SIGTERM : SIGUSR1;
  return true;
}

void Trainer::save() {
  const TrainingState state = training_state_of(graph_, *executor_, comm_.get());  // every rank joins
  if (world_.rank != 0) return;
  if (options_.save_dir) {
    saved_to_ = save_checkpoint_to_folder(*options_.save_dir, state, options_.keep).folder;
  } else {
    write_checkpoint_files(*options_.save, state, "--save");
    saved_to_ = *options_.save;
  }
}

// Test-set accuracy over whole batches of the plan's batch (the graph's batch is fixed: the
// last test_samples % batch samples are left out).
void Trainer::evaluate(int epoch) {
  const EpochOrder order(data_.test->samples(), batch_, false, 0, 0);
  const int64_t batches = order.batches();
  BatchPrefetcher prefetched(*data_.test, order, 0, 0, batches, input_, needed_,
                             {.threads = options_.loader_threads, .depth = options_.prefetch});
  double loss = 0;
  int64_t correct = 0, correct_top5 = 0;
  for (int64_t b = 0; b < batches; ++b) {
    const GlobalBatch gb = next_batch(prefetched);
    const Executor::Evaluation e = executor_->evaluate(gb.images, gb.labels);
    loss += e.loss;
    correct += e.correct;
    correct_top5 += e.correct_top5;
  }
  const int64_t model_classes = graph_.layer(graph_.size() - 1).output.c();
  const int64_t classes = data_.test_classes > 0 ? std::min(data_.test_classes, model_classes) : model_classes;
  if (batches == 0) return;
  const TestEvaluation result{
      .step = step_,
      .epoch = epoch + 1,
      .partial = step_ % steps_per_epoch_ != 0,
      .accuracy = static_cast<double>(correct) / static_cast<double>(batches * batch_),
      .correct = correct,
      .images = batches * batch_,

      .loss = loss / static_cast<double>(batches),
      .top5_accuracy = classes >= 5 ? static_cast<double>(correct_top5) / static_cast<double>(batches * batch_) : -1.0,
      .validation = !options_.val_data.empty()};
  if (options_.observer) options_.observer->evaluated(result);
  if (logs_) logs_->evaluated(result);
}

TrainingSummary Trainer::summary(double elapsed_s) const {
  TrainingSummary s;
  s.steps = step_ - first_step_;
  s.elapsed_s = elapsed_s;
  s.images_per_s = static_cast<double>(s.steps * batch_) / elapsed_s;
  s.communication = transport_->counts();
  s.profiled_steps = static_cast<double>(step_ - first_step_ - 1);
  s.stopped_by_signal = stopped_by_;
  s.last_step = step_;
  s.saved_to = saved_to_;
  s.bad_images = data_.train->bad_images() + (data_.test ? data_.test->bad_images() : 0);
  return s;
}

}  // namespace layerplan
