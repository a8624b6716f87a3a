#include "cli/train_command.h"

#include <sys/resource.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "cli/gpu_requirements.h"
#include "cli/kernels_option.h"
#include "cli/stop_signals.h"
#include "cli/word_option.h"
#include "common/error.h"
#include "common/exit_codes.h"
#include "model/plan_file.h"
#include "runtime/gloo_communicator.h"
#include "runtime/srun_cpus.h"
#include "runtime/training/trainer.h"
#include "runtime/training/training_observer.h"

namespace layerplan {
namespace {

std::string clock_text(double seconds) {
  const long s = seconds > 0 ? std::lround(seconds) : 0;
  char text[32];
  std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  return text;
}

// Where a rank's steps went besides computing: its calls that moved data between ranks,
// waiting for peers included (what `layerplan predict` prices as transfer and sync).
void print_communication(const TrafficCounts& c, double steps) {
  std::printf(
      "communication per step: moves %.4f s in %.0f calls, weight all-reduces %.4f s in %.0f, batch-norm "
      "statistics %.4f s in %.0f, loss %.4f s in %.0f\n",
      c.moves.seconds / steps, static_cast<double>(c.moves.calls) / steps, c.weight_reductions.seconds / steps,
      static_cast<double>(c.weight_reductions.calls) / steps, c.statistics_reductions.seconds / steps,
      static_cast<double>(c.statistics_reductions.calls) / steps, c.loss_reductions.seconds / steps,
      static_cast<double>(c.loss_reductions.calls) / steps);
}

// What `layerplan train` prints: rank 0's progress, and every rank's peak memory (and,
// under launch, its communication).
class ProgressPrinter : public TrainingObserver {
 public:
  ProgressPrinter(const PlanFile& file, int rank, bool launched)
      : strategy_(file.strategy), devices_(file.devices), rank_(rank), launched_(launched) {}

  void started(const TrainingStart& s) override {
    if (rank_ != 0) return;
    if (!s.note.empty()) std::printf("%s\n", s.note.c_str());
    std::printf("training %s, batch %lld, %s plan on %d device%s; %s; %lld steps (%lld per epoch)\n", s.model.c_str(),
                static_cast<long long>(s.batch), strategy_.c_str(), devices_, devices_ == 1 ? "" : "s", s.data.c_str(),
                static_cast<long long>(s.total_steps), static_cast<long long>(s.steps_per_epoch));
    std::fflush(stdout);
  }

  void progressed(const StepProgress& p) override {
    if (rank_ != 0) return;
    std::printf("step %lld/%lld  epoch %d  loss %.4f  images/s %.1f  ETA %s\n", static_cast<long long>(p.step),
                static_cast<long long>(p.total_steps), p.epoch, p.loss, p.images_per_s, clock_text(p.eta_s).c_str());
    std::fflush(stdout);
  }

  void evaluated(const TestEvaluation& e) override {
    if (rank_ != 0) return;
    const char* split = e.validation ? "validation" : "test";
    std::printf("epoch %d%s: %s accuracy %.2f%% (%lld of %lld images), %s loss %.4f", e.epoch,
                e.partial ? " (part)" : "", split, 100 * e.accuracy, static_cast<long long>(e.correct),
                static_cast<long long>(e.images), split, e.loss);
    if (e.top5_accuracy >= 0) std::printf(", top-5 accuracy %.2f%%", 100 * e.top5_accuracy);
    std::printf("\n");
    std::fflush(stdout);
  }

  void finished(const TrainingSummary& s) override {
    if (s.already_finished) {
      if (rank_ == 0) std::printf("nothing to do: the newest checkpoint is at the run's last step\n");
      return;
    }
    const std::string saved = s.saved_to.empty() ? "" : ", saved " + s.saved_to;
    if (rank_ == 0 && s.stopped_by_signal != 0) {
      std::printf("stopped by %s after step %lld (%lld this run)%s; exit %d: run again with --resume%s to continue\n",
                  s.stopped_by_signal == SIGUSR1 ? "SIGUSR1" : "SIGTERM", static_cast<long long>(s.last_step),
                  static_cast<long long>(s.steps),
                  s.saved_to.empty() ? ", no checkpoint (no --save or --save-dir)" : saved.c_str(),
                  kExitStoppedToResume, s.saved_to.empty() ? "" : " auto (--save-dir) or --resume FILE");
    } else if (rank_ == 0) {
      std::printf("done: %lld steps in %.1f s, %.1f images/s%s\n", static_cast<long long>(s.steps), s.elapsed_s,
                  s.images_per_s, saved.c_str());
    }
    if (s.bad_images > 0) {
      std::printf("skipped %lld image%s that could not be decoded (warnings above name them)\n",
                  static_cast<long long>(s.bad_images), s.bad_images == 1 ? "" : "s");
    }
    // Every rank: its peak resident memory, which shows what a plan's sharding saves
    // (bench/vgg16_memory.sh).
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::printf("peak memory %.1f MiB\n", static_cast<double>(usage.ru_maxrss) / 1024.0);
    if (launched_ && s.profiled_steps > 0) print_communication(s.communication, s.profiled_steps);
  }

 private:
  std::string strategy_;
  int devices_;
  int rank_;
  bool launched_;
};

const OptionWords<LrSchedule> kLrSchedules = {
    {"constant", LrSchedule::kConstant}, {"cosine", LrSchedule::kCosine}, {"step", LrSchedule::kStep}};
const OptionWords<Optimizer> kOptimizers = {{"sgd", Optimizer::kSgd}, {"adamw", Optimizer::kAdamW}};
const OptionWords<bool> kOnOff = {{"on", true}, {"off", false}};
void add_optimizer_flags(CLI::App& cmd, TrainCommandArgs& args) {
  TrainerOptions& o = args.trainer;
  add_word_option(&cmd, "--optimizer", o.optimizer, kOptimizers,
                  "sgd (torch.optim.SGD) or adamw (torch.optim.AdamW, weight decay decoupled)");
  cmd.add_option("--lr", o.lr, "Learning rate (the peak of a schedule)")->capture_default_str();
  cmd.add_option("--warmup-steps", o.warmup_steps,
                 "Linear warm-up: step s < N has the rate --lr * (s+1)/(N+1), then --lr-schedule starts")
      ->capture_default_str();
  add_word_option(&cmd, "--lr-schedule", o.lr_schedule, kLrSchedules,
                  "constant; cosine: the rate falls from --lr to 0 along a half cosine over the steps after the "
                  "warm-up; step: times --lr-gamma every --lr-step-every steps");
  cmd.add_option("--lr-step-every", o.lr_step_every, "With --lr-schedule step: steps between the rate's cuts");
  cmd.add_option("--lr-gamma", o.lr_gamma, "With --lr-schedule step: the factor of each cut")->capture_default_str();
  cmd.add_option("--momentum", o.momentum, "SGD momentum")->capture_default_str();
  cmd.add_flag("--nesterov", o.nesterov, "SGD with Nesterov momentum (needs --momentum above 0)");
  cmd.add_option("--weight-decay", o.weight_decay, "Weight decay (AdamW's decoupled)")->capture_default_str();
  cmd.add_flag("--no-decay-bn-bias", args.no_decay_bn_bias,
               "No weight decay on biases and batch-norm weights (only on convolution and fully connected weights)");
  cmd.add_option("--betas", args.betas, "AdamW's B1,B2: decay rates of the gradient's mean and square (0.9,0.999)");
  cmd.add_option("--eps", o.eps, "AdamW's term added to the denominator")->capture_default_str();
  cmd.add_option("--clip-grad-norm", o.clip_grad_norm,
                 "Scale the gradients of all parameters together down to this 2-norm when longer, as "
                 "torch.nn.utils.clip_grad_norm_ (0: no clipping)")
      ->capture_default_str();
  add_word_option(&cmd, "--overlap", o.overlap, kOnOff,
                  "on: the gradient buckets' all-reduces run on a communication thread while the backward goes on, "
                  "as PyTorch DDP; off: each is waited for where it is issued (the same numbers either way)");
  cmd.add_option("--label-smoothing", o.label_smoothing,
                 "The training loss's label smoothing, as torch.nn.CrossEntropyLoss(label_smoothing=)")
      ->capture_default_str();
}

// --betas B1,B2: two numbers, which check_optimizer_options bounds.
void parse_betas(const std::string& text, TrainerOptions* o) {
  const size_t comma = text.find(',');
  size_t used1 = 0, used2 = 0;
  try {
    if (comma == std::string::npos) throw std::invalid_argument("no comma");
    const std::string first = text.substr(0, comma), second = text.substr(comma + 1);
    o->beta1 = std::stod(first, &used1);
    o->beta2 = std::stod(second, &used2);
    if (used1 != first.size() || used2 != second.size()) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    throw UsageError("--betas '" + text + "': expected two numbers B1,B2 such as 0.9,0.999");
  }
}

void add_output_flags(CLI::App& cmd, TrainerOptions& o) {
  cmd.add_option("--log-every", o.log_every, "Print a progress line every this many steps")->capture_default_str();
  cmd.add_option("--log-json", o.log_json, "Write one JSON line per step to this file (rank 0)");
  cmd.add_option("--log-csv", o.log_csv,
                 "Write one CSV row per step (step, epoch, loss, lr, images/s) and per test evaluation to this file "
                 "(rank 0)");
  cmd.add_option("--tensorboard", o.tensorboard,
                 "Write the steps and test evaluations as scalars to a new TensorBoard event file in this folder, "
                 "made if missing (rank 0)");
  cmd.add_option("--profile", o.profile,
                 "Time every layer's compute and the communication of each rank after the first step, and write "
                 "them as JSON to this file (under launch: FILE.rankN)");
  cmd.add_option("--trace", o.trace,
                 "Write the mean step after the first of every rank in Chrome's trace event format, for Perfetto "
                 "(under launch rank 0 merges the ranks' parts; docs/report.md)");
  cmd.add_option("--save", o.save,
                 "Write the weights (safetensors, torchvision's names) here at the end, every --save-every steps and "
                 "when stopped by SIGTERM or SIGUSR1; the optimizer state goes beside it (NAME.optimizer.safetensors)");
  cmd.add_option("--save-dir", o.save_dir,
                 "Instead of --save: each checkpoint a new folder DIR/step-NNNNNNNN, put in place whole");
  cmd.add_option("--keep", o.keep, "With --save-dir: keep the newest K checkpoints")->capture_default_str();
  cmd.add_option("--save-every", o.save_every, "Steps between checkpoints (0: only at the end)")->capture_default_str();
  cmd.add_option(
      "--resume", o.resume,
      "Continue the run a checkpoint saved (weights, optimizer state, step), or 'auto': the newest whole one in "
      "--save-dir (none: start at step 0; one at the run's end: exit 0)");
  cmd.add_option("--init-from", o.init_from, "Start from the weights of this safetensors or ONNX file");
}

}  // namespace

void add_train_command(CLI::App& cmd, TrainCommandArgs& args) {
  TrainerOptions& o = args.trainer;
  cmd.add_option("--plan", args.plan, "The plan file (default: $LAYERPLAN_PLAN)");
  cmd.add_option("--model", args.model, "Zoo model or model file the plan must be for (default: the plan's)");
  cmd.add_option("--model-path", args.model_path, "Folders searched for model files");
  cmd.add_option("--data", o.data,
                 "synthetic, fashion-mnist, imagefolder:DIR (JPEG and PNG files, one subfolder per class) or a "
                 "safetensors dataset file")
      ->capture_default_str();
  cmd.add_option("--val-data", o.val_data,
                 "Evaluate after each epoch on imagefolder:DIR or a safetensors dataset file (top-1 and top-5 "
                 "accuracy) instead of the data's test split");
  cmd.add_flag("--strict-data", o.strict_data,
               "Stop (exit 2) at an image that cannot be decoded instead of skipping it with a warning");
  cmd.add_option("--loader-threads", o.loader_threads,
                 "Threads per process that load and decode the next batches while a step computes (0: none)")
      ->capture_default_str();
  cmd.add_option("--crop-scale", o.crop_scale,
                 "Image folders: the smallest share of an image's area a training crop keeps (RandomResizedCrop)")
      ->capture_default_str();
  cmd.add_option("--prefetch", o.prefetch, "Batches the loader threads prepare ahead")->capture_default_str();
  cmd.add_option("--steps", o.steps, "Stop after this many steps (global batches)");
  cmd.add_option("--epochs", o.epochs, "Passes over the training set (default 1)");
  add_optimizer_flags(cmd, args);
  cmd.add_flag("--normalize", o.normalize,
               "Standardise each image channel with the training split's mean and standard deviation");
  add_word_option(&cmd, "--shuffle", o.shuffle, kOnOff, "on or off: a seeded shuffle each epoch");
  cmd.add_option("--seed", o.seed, "Seed of the initial weights, the shuffle and synthetic data")
      ->capture_default_str();
  add_kernels_option(cmd, o.kernels);
  add_backend_option(cmd, args.backend);
  add_precision_option(cmd, args.precision);
  add_output_flags(cmd, o);
}

int run_train_command(const TrainCommandArgs& args) {
  // Everything that can be wrong with the input is checked before the log is opened or
  // the ranks connect (the Trainer checks the rest).
  const Backend backend = chosen_backend(args.backend, std::getenv("LAYERPLAN_BACKEND"));
  require(backend == Backend::kGpu || args.precision == Precision::kFp32,
          "--precision " + std::string(precision_name(args.precision)) +
              ": expected fp32 with --backend cpu (tf32 and bf16 are GPU math)");
  const PlanFile file = read_plan_file(args.plan, PlanOwner::kUserOrRoot);
  const std::optional<GlooOptions> ranks = world_from_env();
  const bool launched = ranks.has_value();
  const GlooOptions world = ranks.value_or(GlooOptions{});
  const int devices = file.devices;
  const bool under_srun = world.rendezvous != Rendezvous::kDirectory;
  const char* mpi = world.rendezvous == Rendezvous::kPmix ? "pmix" : "pmi2";
  require(
      devices == world.world_size,
      "plan file '" + file.path + "' is for " + std::to_string(devices) + (devices == 1 ? " device" : " devices") +
          ", this run has " + std::to_string(world.world_size) + (world.world_size == 1 ? " process" : " processes") +
          ": start it with " +
          (under_srun ? "`srun --mpi=" + std::string(mpi) + " -n " + std::to_string(devices) + " layerplan train ...`"
                      : "`layerplan launch --nproc " + std::to_string(devices) + " -- layerplan train ...`"));
  const ModelAndPlan loaded = model_and_plan(file, args.model, args.model_path);
  if (backend == Backend::kGpu) {
    require_gpu_of_this_rank();  // the driver, and this rank's GPU among the visible ones
    // The kernels and the NCCL transport are built but not yet joined to the trainer, and
    // nothing of them has run on a GPU (docs/gpu-backend.md, "What has run where").
    throw UsageError("--backend gpu: training on GPUs is not available yet (docs/gpu-backend.md); use --backend cpu");
  }

  ProgressPrinter printer(file, world.rank, launched);
  TrainerOptions options = args.trainer;
  if (args.betas) parse_betas(*args.betas, &options);
  if (args.no_decay_bn_bias) options.decay_bn_bias = false;
  options.stop_signal = install_stop_signal_handlers();
  // An srun task takes its share of the node's CPUs, as `layerplan launch` gives each rank.
  if (under_srun) {
    if (const std::optional<CpuShare> share = srun_cpu_share(srun_task_from_env(), allowed_cpus())) {
      pin_to(*share);
      options.kernel_threads = share->threads;
    }
  }
  options.observer = &printer;
  Trainer trainer(loaded.graph, loaded.plan, options, launched ? std::optional(world) : std::nullopt);
  const TrainingSummary summary = trainer.run();
  return summary.stopped_by_signal != 0 ? kExitStoppedToResume : 0;
}

}  // namespace layerplan
