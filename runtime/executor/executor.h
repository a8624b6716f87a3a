#pragma once
// The executor: one training step of a plan over all its tiles.
//
// A plan gives every layer a Configuration (model/geometry.h). For each layer in
// topological order, each tile gathers, for every input slot, a tensor over
// required_input_box(...) from the producer's tiles by box intersection (halos
// included) through the Transport, and runs the tile's forward kernel. The backward runs
// in reverse order: each tile's kernel backward returns input gradients over the boxes it
// read, which the Transport adds into the producer tiles that own them. Weight-gradient
// shards are all-reduced among the replicas of each shard (the tiles with the same
// channel coordinate), in buckets of several layers (gradient_buckets.h), batch-norm
// statistics among the tiles that share channels, and every replica applies the same
// optimizer update (SGD or AdamW) to its copy of the shard.
//
// The executor computes the tiles of the devices its Transport holds: all of them in one
// process (InProcessTransport), one device per rank over a Communicator. Every process
// walks the same tiles in the same order, so the Transport can match what one sends with
// what another receives. The Transport decides what moving between two devices means
// and counts it.
// docs/runtime.md ("Executor") says what is exact.
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "model/geometry.h"
#include "model/model_graph.h"
#include "runtime/executor/adamw.h"
#include "runtime/executor/gradient_buckets.h"
#include "runtime/executor/reduction_worker.h"
#include "runtime/executor/sgd.h"
#include "runtime/executor/transport.h"
#include "runtime/kernels/kernels.h"

namespace layerplan {

enum class OptimizerKind { kSgd, kAdamW };

struct ExecutorOptions {
  uint64_t weight_seed = 1;   // initial_params seed: equal seeds give equal weights for every plan
  uint64_t dropout_seed = 7;  // mixed with the step and layer id for each dropout layer
  OptimizerKind optimizer = OptimizerKind::kSgd;
  SgdOptions sgd;      // with kSgd
  AdamWOptions adamw;  // with kAdamW
  // Weight decay on every parameter (PyTorch's default parameter groups); false: not on
  // biases nor on batch-norm weights (a parameter group with weight_decay 0 for them).
  bool decay_bn_bias = true;
  // > 0: before the update, the gradients of all parameters are scaled by
  // min(1, max / (norm + 1e-6)), norm the 2-norm of them all together, as
  // torch.nn.utils.clip_grad_norm_. The updates then wait for the whole backward.
  double clip_grad_norm = 0;
  // The loss of training steps as torch.nn.CrossEntropyLoss(label_smoothing=); evaluate()
  // reports the plain cross-entropy (label_smoothing.h).
  double label_smoothing = 0;
  // Time every tile's computation (compute_seconds()); for `layerplan predict`.
  bool time_compute = false;
  // Weight gradients are all-reduced in buckets of about this size (gradient_buckets.h);
  // PyTorch DDP's default.
  int64_t gradient_bucket_bytes = kDefaultGradientBucketBytes;
  // true: each bucket's all-reduce is issued, when its last gradient is in, to a
  // communication thread and runs while the backward goes on, as PyTorch DDP does; a
  // bucket's shards are updated once that bucket is reduced (all buckets first with
  // clip_grad_norm). false: the executor's thread reduces each bucket where it is issued
  // and waits for it. The same all-reduces in the same order either way, so the numbers
  // are equal bitwise (docs/runtime.md, "Overlapping the all-reduces"). Needs a transport
  // that reduces_concurrently().
  bool overlap = false;
};

class Executor {
 public:
  // `plan` holds one configuration per layer of `graph` (tile_box must accept each).
  // The graph needs exactly one input layer and one softmax_cross_entropy layer, the
  // last. `graph`, `kernels` and `transport` must outlive the executor. Throws
  // std::invalid_argument for a plan that does not fit the graph.
  Executor(const ModelGraph& graph, std::vector<Configuration> plan, Kernels& kernels, Transport& transport,
           const ExecutorOptions& options = {});
  // Waits for the all-reduces still running (a step that threw may leave some).
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // One optimizer step on `images` (a tensor over the input layer's whole shape) with one
  // label per sample (every process passes the whole batch and uses its tiles' part).
  // Returns the batch's mean cross-entropy before the update.
  double step(const Tensor& images, const std::vector<int64_t>& labels);

  // Forward only, as PyTorch's eval mode: dropout passes its input through and batch norm
  // normalises with its running statistics (nothing is updated). Returns the batch's mean
  // cross-entropy and how many samples have their largest probability at their label,
  // over all processes (a collective, like step).
  struct Evaluation {
    double loss = 0;
    int64_t correct = 0;
    int64_t correct_top5 = 0;  // label among the 5 highest outputs (ties to the lower class)
  };
  Evaluation evaluate(const Tensor& images, const std::vector<int64_t>& labels);

  // Layer `id`'s parameters over all channels, assembled from its shards (running
  // statistics included); the replicas of a shard hold equal values. Across processes,
  // each returns the shards whose first replica it holds and zeros elsewhere, so the
  // sum over processes is the whole layer.
  LayerParams gathered_params(int id) const;

  // Layer `id`'s SGD momentum buffers over all channels, as a LayerParams whose weight
  // and bias are the buffers (no running statistics), assembled like gathered_params;
  // weight and bias are empty before the first step and without momentum (sgd_update
  // keeps no buffers then, as PyTorch).
  // With AdamW: exp_avg (PyTorch's name of the first moment).
  LayerParams gathered_momentum(int id) const;
  // AdamW's exp_avg_sq, assembled like gathered_momentum; weight and bias are empty for SGD
  // and before the first step.
  LayerParams gathered_second_moment(int id) const;

  // Replaces layer `id`'s parameters on the held tiles with the shards of `full` (all
  // channels, running statistics included) and its momentum buffers with those of
  // `momentum` (empty weight and bias: none yet), and AdamW's exp_avg_sq with those of
  // `second_moment` (likewise): how a checkpoint is restored. Throws
  // std::invalid_argument when the sizes do not fit the layer.
  void load_layer(int id, const LayerParams& full, const LayerParams& momentum, const LayerParams& second_moment = {});
  // The steps a restored run has done (dropout masks depend on it).
  void set_steps_done(int steps) { steps_ = steps; }

  int steps_done() const { return steps_; }
  OptimizerKind optimizer() const { return options_.optimizer; }
  // The learning rate of the next steps (a schedule sets it before each step).
  void set_learning_rate(double lr) {
    options_.sgd.lr = lr;
    options_.adamw.lr = lr;
  }

  // With options.time_compute: the seconds each device has spent computing each layer
  // since construction or the last reset, [layer][device]: its tiles' kernels forward and
  // backward and their SGD updates, not gathering inputs or moving data. Zeros otherwise.
  const std::vector<std::vector<double>>& compute_seconds() const { return compute_s_; }
  // The part of compute_seconds() spent in the forward pass (the rest is backward and SGD).
  const std::vector<std::vector<double>>& forward_seconds() const { return forward_s_; }
  void reset_compute_seconds();

 private:
  struct TileState {
    int device = 0;
    Box box;
    // Per slot, the input over required_input_box (saved for backward): `input[slot]`
    // points either at `gathered[slot]` or, when one producer tile on the same device has
    // exactly that box, at the producer's output (no copy).
    std::vector<Tensor> gathered;
    std::vector<const Tensor*> input;
    Tensor output;       // loss layer: the softmax probabilities
    Tensor grad;         // gradient of the output, summed from the consumers; allocated in backward
    LayerParams params;  // the tile's replica of its shard (has_params kinds)
    std::vector<float> momentum_weight, momentum_bias;  // SGD's buffer or AdamW's exp_avg
    std::vector<float> second_weight, second_bias;      // AdamW's exp_avg_sq
    std::vector<float> pending_grad;  // with clip_grad_norm: the reduced gradient, until the step's end
    BatchNormStats stats;             // batch norm: the reduced statistics of this step
  };

  // Fills the held tiles' input tensors of layer `id` from the producers' tiles.
  void gather_inputs(int id);
  // Points `tile`'s input `slot` at a producer's output of exactly its box on the same
  // device, or allocates it (held tiles) and adds the moves that fill it to `moves`.
  void gather_tile_input(const Layer& layer, int slot, TileState& tile, std::vector<BoxMove>* moves);
  // Frees what layer `id`'s tiles kept for the backward, once it has run.
  void release(int id);
  // Adds grads[t] (input `slot`'s gradient of tile t, held tiles only) into the producers' tiles.
  void send_back(int id, int slot, std::vector<Tensor>& grads);
  // All-reduces flatten(t) over each replica group of layer `id`; result per held tile.
  template <typename T, typename Flatten>
  std::vector<std::vector<T>> reduce_over_groups(int id, ReduceKind kind, Flatten flatten);
  void forward(int id, const Tensor& images, const std::vector<int64_t>& labels, double* loss);
  void backward(int id, const std::vector<int64_t>& labels);
  void forward_batch_norm(int id);
  void backward_batch_norm(int id);
  // Groups of tiles that hold the same weight shard / batch-norm channels.
  const std::vector<std::vector<int>>& replica_groups(int id) const;
  // Applies the optimizer to a tile's shard with its reduced gradient (weight, then bias),
  // or with clip_grad_norm keeps the gradient for clip_and_update.
  void update_tile(int id, TileState& tile, std::span<const float> g);
  void apply_update(int id, TileState& tile, std::span<const float> g);
  // Scales every kept gradient by the clipping factor of their global norm and updates.
  void clip_and_update();
  // Assembles a per-tile state (momentum or second moment) over all channels.
  LayerParams gathered_state(int id, std::vector<float> TileState::*weight, std::vector<float> TileState::*bias) const;
  // Puts layer `id`'s weight gradients (one per held tile) into their buckets, updating
  // the shards of single replicas at once, and reduces the buckets due after this layer.
  void queue_gradients(int id, std::vector<LayerParams>& grads);
  // Checks the bucket size (and overlap's transport), lays out the buckets and, with
  // options_.overlap, starts the communication thread.
  void set_up_buckets();
  // All-reduces bucket `b` and updates every held shard in it; with options_.overlap, posts
  // the all-reduce to the communication thread and leaves the update to finish_buckets.
  void reduce_bucket(int b);
  // Updates every held shard of bucket `b` with its reduced gradients and frees them.
  void update_bucket(int b);
  // Updates the shards of the posted buckets whose all-reduce is done, in the order they
  // were posted, stopping at the first still running; all of them when `wait`.
  void finish_buckets(bool wait);
  // Waits for every posted all-reduce, ignoring failures (before a step, after one that threw).
  void drain_buckets() noexcept;
  // The sum of every process's `local` (the loss shares it computed).
  double sum_over_processes(double local);
  uint64_t dropout_seed(int id) const;
  std::vector<int64_t> labels_of(const std::vector<int64_t>& labels, const Box& box) const;

  const ModelGraph& graph_;
  std::vector<Configuration> plan_;
  Kernels& kernels_;
  Transport& transport_;
  ExecutorOptions options_;
  std::vector<std::vector<TileState>> tiles_;  // [layer][tile]; data only where the transport holds the device
  std::vector<int> devices_;                   // every device of the plan, ascending
  std::vector<std::vector<std::vector<int>>> replica_groups_;  // [layer]: replica_groups(layer, its configuration)
  std::vector<GradientBucket> buckets_;
  std::vector<std::vector<std::vector<float>>> bucket_data_;  // [bucket][device position]: gradients so far
  std::map<std::pair<int, int>, int> bucket_of_;              // (layer, replica group) -> bucket
  std::vector<std::vector<int>> reduce_after_;                // [layer]: buckets reduced after its backward
  std::vector<int> reduce_at_end_;                            // buckets reduced after the whole backward
  // With options_.overlap: the buckets posted to worker_ and not yet updated, in posting
  // order, with the futures of their all-reduces. The worker is declared after the buffers
  // it reduces, so that it is stopped before they are freed.
  std::vector<std::pair<int, std::future<void>>> posted_;
  std::unique_ptr<ReductionWorker> worker_;
  int steps_ = 0;
  bool evaluating_ = false;  // inside evaluate()
  // Adds the time of its scope to compute_s_[layer][device] when options_.time_compute is set.
  class ComputeTimer;
  std::vector<std::vector<double>> compute_s_, forward_s_;
};

}  // namespace layerplan
