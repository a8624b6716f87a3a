#include "cli/train_command.h"

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <utility>
#include <nlohmann/json.hpp>

#include "model/plan_file.h"
#include "runtime/training/train_data.h"
#include "runtime/training/train_profile.h"
#include "common/error.h"
#include "runtime/executor/checkpoint.h"
#include "runtime/executor/communicator_transport.h"
#include "runtime/executor/executor.h"
#include "runtime/executor/in_process_transport.h"
#include "runtime/gloo_communicator.h"
#include "runtime/heap_tuning.h"

namespace layerplan {
namespace {

std::string clock_text(double seconds) {
  const long s = seconds > 0 ? static_cast<long>(seconds + 0.5) : 0;
  char text[32];
  std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  return text;
}

}  // namespace

CLI::App* add_train_command(CLI::App& app, TrainCommandArgs& args) {
  CLI::App* sub = app.add_subcommand("train", "Train a model with a plan file (one process, or one rank of launch)");
  sub->add_option("--plan", args.plan, "The plan file (default: $LAYERPLAN_PLAN)");
  sub->add_option("--model", args.model, "Zoo model or model file the plan must be for (default: the plan's)");
  sub->add_option("--model-path", args.model_path, "Folders searched for model files");
  sub->add_option("--data", args.data, "synthetic, fashion-mnist or a safetensors dataset file")->capture_default_str();
  sub->add_option("--steps", args.steps, "Stop after this many steps (global batches)");
  sub->add_option("--epochs", args.epochs, "Passes over the training set (default 1)");
  sub->add_option("--lr", args.lr, "SGD learning rate")->capture_default_str();
  sub->add_option("--lr-schedule", args.lr_schedule,
                  "constant, or cosine: the rate falls from --lr to 0 along a half cosine over the run's steps")
      ->capture_default_str();
  sub->add_option("--momentum", args.momentum, "SGD momentum")->capture_default_str();
  sub->add_option("--weight-decay", args.weight_decay, "SGD weight decay")->capture_default_str();
  sub->add_flag("--normalize", args.normalize,
               "Standardise each image channel with the training split's mean and standard deviation");
  sub->add_option("--shuffle", args.shuffle, "on or off: a seeded shuffle each epoch")->capture_default_str();
  sub->add_option("--seed", args.seed, "Seed of the initial weights, the shuffle and synthetic data")
      ->capture_default_str();
  sub->add_option("--kernels", args.kernels, "onednn or reference")->capture_default_str();
  sub->add_option("--log-every", args.log_every, "Print a progress line every this many steps")
      ->capture_default_str();
  sub->add_option("--log-json", args.log_json, "Write one JSON line per step to this file (rank 0)");
  sub->add_option("--profile", args.profile,
                  "Time every layer's compute and the communication of each rank after the first step, and write "
                  "them as JSON to this file (under launch: FILE.rankN)");
  sub->add_option("--save", args.save, "Write a checkpoint (safetensors) here at the end and every --save-every steps");
  sub->add_option("--save-every", args.save_every, "Steps between checkpoints (0: only at the end)")
      ->capture_default_str();
  sub->add_option("--resume", args.resume, "Continue the run a checkpoint saved (weights, momentum, step)");
  sub->add_option("--init-from", args.init_from, "Start from the weights of this safetensors file");
  return sub;
}

int run_train_command(const TrainCommandArgs& args) {
  // Everything that can be wrong with the input is checked before the log is opened or
  // the ranks connect.
  const PlanFile file = read_plan_file(args.plan);
  const std::string& plan_path = file.path;
  const int64_t batch = file.batch;
  const int devices = file.devices;

  const bool launched = std::getenv("LAYERPLAN_RANK") != nullptr;
  const GlooOptions world = launched ? gloo_options_from_env() : GlooOptions{};
  require(devices == world.world_size,
          "plan file '" + plan_path + "' is for " + std::to_string(devices) +
              (devices == 1 ? " device" : " devices") + ", this run has " +
              std::to_string(world.world_size) + (world.world_size == 1 ? " process" : " processes") +
              ": start it with `layerplan launch --nproc " + std::to_string(devices) + " -- layerplan train ...`");
  const ModelAndPlan loaded = model_and_plan(file, args.model, args.model_path);
  const ModelGraph& graph = loaded.graph;
  const std::vector<Configuration>& plan = loaded.plan;

  require(args.shuffle == "on" || args.shuffle == "off", "--shuffle " + args.shuffle + ": expected on or off");
  require(args.lr_schedule == "constant" || args.lr_schedule == "cosine",
          "--lr-schedule " + args.lr_schedule + ": expected constant or cosine");
  require(args.kernels == "onednn" || args.kernels == "reference",
          "--kernels " + args.kernels + ": expected onednn or reference");
  require(!args.steps || *args.steps >= 1, "--steps: expected 1 or more");
  require(!args.epochs || *args.epochs >= 1, "--epochs: expected 1 or more");
  require(args.log_every >= 1, "--log-every: expected 1 or more");
  require(args.lr > 0 && args.momentum >= 0 && args.weight_decay >= 0,
          "--lr must be positive, --momentum and --weight-decay not negative");

  const Shape& input = graph.layer(0).output;
  const int64_t classes = graph.layer(graph.size() - 1).output.c();
  // The samples this process's input tiles cover: the only images it loads and fills in
  // (a launched rank r holds device r; one process holds them all).
  DataOptions data_options{.seed = args.seed, .normalize = args.normalize, .positions = {}};
  const std::vector<Box> input_tiles = tiles(input, plan[0]);
  for (size_t t = 0; t < input_tiles.size(); ++t) {
    if (!launched || plan[0].devices[t] == world.rank) data_options.positions.push_back(input_tiles[t].dim[0]);
  }
  const TrainingData data = load_training_data(args.data, input, classes, data_options);
  const int64_t steps_per_epoch = data.train->samples() / batch;  // the last partial batch is dropped
  const int epochs = args.epochs.value_or(1);
  int64_t total = static_cast<int64_t>(epochs) * steps_per_epoch;
  if (args.steps) total = args.epochs ? std::min(total, *args.steps) : *args.steps;

  require(args.save_every >= 0, "--save-every: expected 0 or more");
  require(!(args.resume && args.init_from), "--resume and --init-from: expected one of them");
  for (const auto& [flag, output] : {std::pair{"--save", args.save}, std::pair{"--profile", args.profile}}) {
    if (!output) continue;
    const std::filesystem::path dir = std::filesystem::absolute(*output).parent_path();
    require(std::filesystem::is_directory(dir), std::string(flag) + " '" + *output + "': no directory " + dir.string());
  }
  const std::optional<std::string> checkpoint = args.resume ? args.resume : args.init_from;
  TrainingState restored;
  if (checkpoint) restored = read_checkpoint(*checkpoint);

  const int rank = world.rank;

  std::unique_ptr<Communicator> comm;
  std::unique_ptr<Transport> transport;
  if (launched) {
    comm = connect_gloo(world);
    transport = std::make_unique<CommunicatorTransport>(*comm);
  } else {
    transport = std::make_unique<InProcessTransport>();
  }
  keep_freed_memory_in_process();  // a speed setting only: training works without it
  const auto kernels = make_kernels(args.kernels);
  ExecutorOptions options;
  options.weight_seed = args.seed;
  options.sgd = {.lr = args.lr, .momentum = args.momentum, .weight_decay = args.weight_decay};
  options.time_compute = args.profile.has_value();
  Executor executor(graph, plan, *kernels, *transport, options);
  int64_t step = 0;
  if (checkpoint) step = restore_training_state(restored, *checkpoint, graph, executor, args.resume.has_value());
  require(step < total, "checkpoint '" + checkpoint.value_or("") + "' is at step " + std::to_string(step) +
                            ", the run ends at step " + std::to_string(total));
  const auto save = [&] {
    const TrainingState state = training_state_of(graph, executor, comm.get());  // every rank joins
    if (rank == 0) write_checkpoint(*args.save, state);
  };

  const std::string profile_path = args.profile ? profile_file(*args.profile, launched, rank) : "";
  std::ofstream log;
  if (rank == 0 && args.log_json) {
    log.open(*args.log_json, std::ios::trunc);
    require(log.is_open(), "--log-json '" + *args.log_json + "' cannot be written");
  }

  const std::vector<Interval>& needed = data_options.positions;

  if (rank == 0) {
    std::printf("training %s, batch %lld, %s plan on %d device%s; %s; %lld steps (%lld per epoch)\n",
                graph.name().c_str(), static_cast<long long>(batch), file.strategy.c_str(),
                devices, devices == 1 ? "" : "s", data.description.c_str(), static_cast<long long>(total),
                static_cast<long long>(steps_per_epoch));
    std::fflush(stdout);
  }
  // Test-set accuracy over whole batches of the plan's batch (the graph's batch is fixed:
  // the last test_samples % batch samples are left out), printed and logged by rank 0.
  const auto evaluate = [&](int epoch) {
    const EpochOrder order(data.test->samples(), batch, false, 0, 0);
    const int64_t batches = order.batches();
    double loss = 0;
    int64_t correct = 0;
    for (int64_t b = 0; b < batches; ++b) {
      const GlobalBatch gb = assemble_batch(*data.test, order, b, input, needed);
      const Executor::Evaluation e = executor.evaluate(gb.images, gb.labels);
      loss += e.loss;
      correct += e.correct;
    }
    if (rank != 0 || batches == 0) return;
    const double accuracy = static_cast<double>(correct) / static_cast<double>(batches * batch);
    std::printf("epoch %d%s: test accuracy %.2f%% (%lld of %lld images), test loss %.4f\n", epoch + 1,
                step % steps_per_epoch != 0 ? " (part)" : "", 100 * accuracy, static_cast<long long>(correct),
                static_cast<long long>(batches * batch), loss / static_cast<double>(batches));
    std::fflush(stdout);
    if (log.is_open()) {
      log << nlohmann::json{{"step", step}, {"epoch", epoch + 1}, {"test_accuracy", accuracy},
                            {"test_loss", loss / static_cast<double>(batches)}}
                 .dump()
          << "\n"
          << std::flush;
    }
  };
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  auto interval_start = start;
  const int64_t first_step = step;
  int64_t logged = step;  // the step of the last progress line
  // Rank 0's progress line (every --log-every steps, the first and the last) and JSON line.
  const auto report = [&](int64_t done, int epoch, double loss, Clock::time_point t0, Clock::time_point t1) {
    const double step_s = std::chrono::duration<double>(t1 - t0).count();
    if (log.is_open()) {
      log << nlohmann::json{{"step", done}, {"epoch", epoch + 1}, {"loss", loss},
                            {"images_per_s", static_cast<double>(batch) / step_s}}
                 .dump()
          << "\n"
          << std::flush;
    }
    if (done % args.log_every == 0 || done == first_step + 1 || done == total) {
      const double elapsed = std::chrono::duration<double>(t1 - start).count();
      const int64_t in_interval = done - logged;
      logged = done;
      const double interval_s = std::chrono::duration<double>(t1 - interval_start).count();
      interval_start = t1;
      std::printf("step %lld/%lld  epoch %d  loss %.4f  images/s %.1f  ETA %s\n", static_cast<long long>(done),
                  static_cast<long long>(total), epoch + 1, loss,
                  static_cast<double>(batch * in_interval) / interval_s,
                  clock_text(elapsed / static_cast<double>(done - first_step) * static_cast<double>(total - done))
                      .c_str());
      std::fflush(stdout);
    }
  };
  for (int epoch = static_cast<int>(step / steps_per_epoch); step < total; ++epoch) {
    const EpochOrder order(data.train->samples(), batch, args.shuffle == "on", args.seed, epoch);
    // A resumed run continues inside its epoch.
    for (int64_t b = step % steps_per_epoch; b < steps_per_epoch && step < total; ++b) {
      const auto t0 = Clock::now();
      const GlobalBatch gb = assemble_batch(*data.train, order, b, input, needed);
      if (args.lr_schedule == "cosine") {
        // A function of the step alone, so a resumed run continues the same schedule.
        const double progress = static_cast<double>(step) / static_cast<double>(total);
        executor.set_learning_rate(args.lr * 0.5 * (1.0 + std::cos(M_PI * progress)));
      }
      const double loss = executor.step(gb.images, gb.labels);
      ++step;
      if (step == first_step + 1) {  // the first step warms up: the profile starts after it
        executor.reset_compute_seconds();
        transport->reset_counts();
      }
      const auto t1 = Clock::now();
      if (rank == 0) report(step, epoch, loss, t0, t1);
      // Saving and evaluating do not count in images/s and ETA.
      const auto pause = Clock::now();
      if (args.save && args.save_every > 0 && step % args.save_every == 0 && step < total) save();
      if (data.test && b == steps_per_epoch - 1) evaluate(epoch);
      start += Clock::now() - pause;
      interval_start += Clock::now() - pause;
    }
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  if (data.test && step % steps_per_epoch != 0) evaluate(static_cast<int>(step / steps_per_epoch));
  if (args.save) save();
  if (rank == 0) {
    std::printf("done: %lld steps in %.1f s, %.1f images/s%s\n", static_cast<long long>(step - first_step), elapsed,
                static_cast<double>((step - first_step) * batch) / elapsed,
                args.save ? (", saved " + *args.save).c_str() : "");
  }
  // Every rank: its peak resident memory, which shows what a plan's sharding saves
  // (bench/vgg16_memory.sh).
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("peak memory %.1f MiB\n", static_cast<double>(usage.ru_maxrss) / 1024.0);
  const double profiled_steps = static_cast<double>(step - first_step - 1);
  if (launched && profiled_steps > 0) {
    // Where a rank's steps went besides computing: its calls that moved data between ranks,
    // waiting for peers included (what `layerplan predict` prices as transfer and sync).
    const TrafficCounts& c = transport->counts();
    std::printf("communication per step: moves %.4f s in %.0f calls, weight all-reduces %.4f s in %.0f, batch-norm "
                "statistics %.4f s in %.0f, loss %.4f s in %.0f\n",
                c.moves.seconds / profiled_steps, static_cast<double>(c.moves.calls) / profiled_steps,
                c.weight_reductions.seconds / profiled_steps,
                static_cast<double>(c.weight_reductions.calls) / profiled_steps,
                c.statistics_reductions.seconds / profiled_steps,
                static_cast<double>(c.statistics_reductions.calls) / profiled_steps,
                c.loss_reductions.seconds / profiled_steps, static_cast<double>(c.loss_reductions.calls) / profiled_steps);
  }
  if (args.profile) write_profile(profile_path, graph, executor, transport->counts(), rank, profiled_steps);
  return 0;
}

}  // namespace layerplan
