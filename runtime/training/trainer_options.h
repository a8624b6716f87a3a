#pragma once
// What a training run chooses (runtime/training/trainer.h runs it): how long, the optimizer
// settings and learning-rate schedule, the order of the samples, the kernels, the files it
// reads and writes, and who hears about its progress. `layerplan train` fills one from its
// flags; every field has the default the flag has.
#include <csignal>
#include <cstdint>
#include <optional>
#include <string>

#include "runtime/kernels/kernels.h"

namespace layerplan {

class TrainingObserver;

// How the learning rate moves over a run's steps after the warm-up (learning_rate_at).
enum class LrSchedule {
  kConstant,  // options.lr at every step
  kCosine,    // from options.lr down to 0 along a half cosine over the run's steps
  kStep,      // options.lr times lr_gamma every lr_step_every steps
};

// Which optimizer updates the weights.
enum class Optimizer {
  kSgd,    // torch.optim.SGD (runtime/executor/sgd.h)
  kAdamW,  // torch.optim.AdamW (runtime/executor/adamw.h)
};

struct TrainerOptions {
  // Where the samples come from: "synthetic", "fashion-mnist" or a safetensors dataset file
  // (runtime/training/train_data.h). Synthetic data needs no file and trains nothing real:
  // it is for timing and for tests.
  std::string data = "synthetic";
  // The split evaluated after each epoch instead of the data's own test split:
  // "imagefolder:DIR" or a safetensors dataset file; empty: the data's test split, if any.
  std::string val_data;
  // Image folders: a file that cannot be decoded stops the run (exit 2 naming it) instead
  // of being skipped with a warning.
  bool strict_data = false;
  // Image folders: the smallest share of an image's area a training crop keeps
  // (RandomResizedCrop's scale, (crop_scale, 1)); torchvision's default 0.08.
  double crop_scale = 0.08;
  // Loader threads per process that assemble (and for image folders decode) the next
  // `prefetch` batches while a step computes; 0: each batch when its step starts. Each
  // batch ahead holds a tensor of the whole global batch (its memory against the overlap).
  int loader_threads = 2;
  int prefetch = 2;

  // The run's length: `epochs` passes over the training split (default 1), cut short at
  // `steps` global batches when both are set; `steps` alone sets the length whatever the
  // epochs. The last partial batch of an epoch is dropped.
  std::optional<int> epochs;
  std::optional<int64_t> steps;

  // The optimizer: SGD as torch.optim.SGD, or AdamW as torch.optim.AdamW. A larger rate
  // learns faster until it diverges; weight decay pulls the weights towards 0 (0: none;
  // AdamW's is decoupled from the gradient).
  Optimizer optimizer = Optimizer::kSgd;
  double lr = 0.01;
  double weight_decay = 0.0;
  // SGD: momentum smooths the steps (0: plain SGD, which keeps no momentum buffers);
  // Nesterov's variant looks one momentum step ahead (needs momentum > 0).
  double momentum = 0.9;
  bool nesterov = false;
  // AdamW: the decay rates of the gradient's running mean and of its square, and the term
  // added to the denominator.
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  // Weight decay on biases and batch-norm weights too (PyTorch's default); off: only on the
  // weights of convolutions and fully connected layers.
  bool decay_bn_bias = true;
  // > 0: the gradients of all parameters together are scaled down to this 2-norm when
  // longer, as torch.nn.utils.clip_grad_norm_ (0: no clipping).
  double clip_grad_norm = 0;
  // The training loss's label smoothing, as torch.nn.CrossEntropyLoss(label_smoothing=), in [0, 1).
  double label_smoothing = 0;
  // Gradient buckets' all-reduces on a communication thread while the backward goes on
  // (ExecutorOptions::overlap); off: each one where it is issued, the backward waiting.
  bool overlap = true;

  // The learning rate of each step (learning_rate_at): warmup_steps of linear warm-up, then
  // lr_schedule. kCosine takes large steps early and small ones at the end, but it follows
  // the run's length: a run extended later (resume with more steps) continues on another
  // curve. kStep multiplies the rate by lr_gamma every lr_step_every steps after the warm-up.
  int64_t warmup_steps = 0;
  LrSchedule lr_schedule = LrSchedule::kConstant;
  int64_t lr_step_every = 0;
  double lr_gamma = 0.1;

  // A seeded shuffle of the samples every epoch (each rank draws the same order). Off: file
  // order, which trains worse on data sorted by class but makes batches easy to inspect.
  bool shuffle = true;
  // Seeds the initial weights, the shuffle and the synthetic data: equal seeds give equal
  // runs for every plan and number of ranks.
  uint64_t seed = 1;
  // Standardise each image channel with the training split's mean and standard deviation.
  // Costs one pass over the training split before the first step; synthetic data is
  // already standard normal and is left as it is.
  bool normalize = false;

  // The compute backend: oneDNN is the fast one; the reference loops are slow but are what
  // every backend is tested against.
  KernelBackend kernels = KernelBackend::kOnednn;
  // Threads of the oneDNN kernels: 0 leaves it to OMP_NUM_THREADS (what `layerplan launch`
  // sets per rank); an srun task pinned to its share of a node sets its share's size, since
  // OpenMP read its defaults before the pinning.
  int kernel_threads = 0;
  // Keep the memory a step frees in the process (runtime/heap_tuning.h): faster steps, at
  // the price of glibc malloc settings for the whole process. Off for a caller that shares
  // its process with work that needs the memory back.
  bool keep_freed_memory = true;

  // A checkpoint (safetensors) written at the end and, when `save_every` > 0, every
  // `save_every` steps (every rank joins; rank 0 writes). Saving pauses training.
  // The weights go to `save` and the optimizer state beside them (runtime/training/checkpoint_store.h).
  std::optional<std::string> save;
  int64_t save_every = 0;
  // Instead of `save`: every save a new folder DIR/step-NNNNNNNN, put in place whole; the
  // newest `keep` are kept and older ones removed.
  std::optional<std::string> save_dir;
  int keep = 3;
  // At most one of them: `resume` continues the run a checkpoint saved (weights, optimizer state,
  // step), "auto" the newest whole one in save_dir (from step 0 when there is none; nothing
  // to do when it is at the run's end); `init_from` takes only its weights and starts at step 0.
  std::optional<std::string> resume;
  std::optional<std::string> init_from;

  // Time every layer's compute and each rank's communication after the first step, and
  // write them as JSON to this file (FILE.rankN for a launched rank): train_profile.h.
  // Timing each tile costs a little on small layers.
  std::optional<std::string> profile;
  // The mean step after the first of every rank in Chrome's trace event format, to this
  // file (launched ranks write FILE.rankN and rank 0 merges them): train_trace.h.
  std::optional<std::string> trace;

  // The observer hears of a step every `log_every` steps, and of the first and the last.
  int log_every = 10;
  // One JSON line per step and per test evaluation, written by rank 0 (nothing else does).
  // The file is created fresh at the start (a new file renamed onto the name, which a
  // symbolic link there refuses: common/safe_write.h) and then grows line by line.
  std::optional<std::string> log_json;
  // The same records as CSV rows under a header (step, epoch, loss, lr, images_per_s, then
  // test_loss and test_accuracy for an evaluation), created and grown as log_json is.
  std::optional<std::string> log_csv;
  // A folder (made when missing) where rank 0 writes a new TensorBoard event file of the
  // same records, as scalars tagged train/... and test/... (training_logs.h).
  std::optional<std::string> tensorboard;
  // Told of the start, the progress, each test evaluation and the end, on every rank; it
  // decides what to print and where. Null: nobody is told. Must outlive the Trainer.
  TrainingObserver* observer = nullptr;
  // Set non-zero (to the signal's number) by the caller's signal handler to stop the run
  // after the step in progress: every rank agrees on the step, a checkpoint is written
  // (with save or save_dir), and run() returns with stopped_by_signal set. Null: never.
  const volatile std::sig_atomic_t* stop_signal = nullptr;
};

// The learning rate of the step after `step` steps of a run of `total`, a function of the
// step alone (a resumed run continues the same curve). With W = warmup_steps, it is
// PyTorch's SequentialLR(optimizer, [LinearLR(start_factor=1/(W+1), total_iters=W), main],
// milestones=[W]) in closed form, stepped once after every optimizer step:
//   step s < W:  lr · (s + 1) / (W + 1)
//   then, t = s - W:  kConstant lr;
//                     kCosine lr · (1 + cos(pi · t / (total - W))) / 2  (CosineAnnealingLR,
//                     T_max = total - W, eta_min 0: 0 at step == total);
//                     kStep lr · lr_gamma^floor(t / lr_step_every)  (StepLR).
// W = 0 is the main schedule alone.
double learning_rate_at(const TrainerOptions& options, int64_t step, int64_t total);

// Throws UsageError naming the flag and its value when the optimizer, schedule, clipping or
// label-smoothing settings are out of range or do not go together (--nesterov without
// momentum or with AdamW, --lr-step-every without --lr-schedule step, ...).
void check_optimizer_options(const TrainerOptions& options);

}  // namespace layerplan
