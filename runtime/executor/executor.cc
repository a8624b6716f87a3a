#include "runtime/executor/executor.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <map>
#include <span>
#include <stdexcept>
#include <string>

#include "model/layer_math.h"
#include "runtime/executor/initial_params.h"
#include "runtime/executor/label_smoothing.h"

namespace layerplan {
namespace {

constexpr bool kForwardPass = true;  // a ComputeTimer of forward work

// The weight and bias of a gradient shard as one buffer, the unit of the all-reduce
// (taking over the weight's storage: no copy when it has room for the bias).
std::vector<float> flatten_grads(LayerParams&& g) {
  std::vector<float> v = std::move(g.weight);
  v.insert(v.end(), g.bias.begin(), g.bias.end());
  return v;
}

std::vector<double> flatten_stats(const BatchNormStats& s) {
  std::vector<double> v(s.sum);
  v.insert(v.end(), s.sum_sq.begin(), s.sum_sq.end());
  v.push_back(static_cast<double>(s.count));
  return v;
}

void unflatten_stats(const std::vector<double>& v, BatchNormStats* s) {
  const size_t c = s->sum.size();
  std::copy(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(c), s->sum.begin());
  std::copy(v.begin() + static_cast<std::ptrdiff_t>(c), v.begin() + static_cast<std::ptrdiff_t>(2 * c),
            s->sum_sq.begin());
  s->count = static_cast<int64_t>(v.back());
}

std::vector<double> flatten_grad_stats(const BatchNormGradStats& s) {
  std::vector<double> v(s.sum_dy);
  v.insert(v.end(), s.sum_dy_xhat.begin(), s.sum_dy_xhat.end());
  return v;
}

void unflatten_grad_stats(const std::vector<double>& v, BatchNormGradStats* s) {
  const size_t c = s->sum_dy.size();
  std::copy(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(c), s->sum_dy.begin());
  std::copy(v.begin() + static_cast<std::ptrdiff_t>(c), v.end(), s->sum_dy_xhat.begin());
}

uint64_t mix(uint64_t x) {  // SplitMix64's finalizer
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

Executor::Executor(const ModelGraph& graph, std::vector<Configuration> plan, Kernels& kernels, Transport& transport,
                   const ExecutorOptions& options)
    : graph_(graph), plan_(std::move(plan)), kernels_(kernels), transport_(transport), options_(options) {
  if (static_cast<int>(plan_.size()) != graph_.size()) {
    throw std::invalid_argument("plan has " + std::to_string(plan_.size()) + " configurations for " +
                                std::to_string(graph_.size()) + " layers");
  }
  int inputs = 0;
  for (const Layer& layer : graph_.layers()) inputs += layer.kind == LayerKind::kInput ? 1 : 0;
  if (inputs != 1 || graph_.size() < 2 || graph_.layer(graph_.size() - 1).kind != LayerKind::kSoftmaxCrossEntropy) {
    throw std::invalid_argument("executor: the graph needs one input layer and a final softmax_cross_entropy");
  }
  tiles_.resize(static_cast<size_t>(graph_.size()));
  devices_ = devices_used(plan_);
  compute_s_.assign(static_cast<size_t>(graph_.size()),
                    std::vector<double>(devices_.empty() ? 0 : static_cast<size_t>(devices_.back()) + 1, 0.0));
  forward_s_ = compute_s_;
  for (const Layer& layer : graph_.layers()) {
    const Configuration& config = plan_[static_cast<size_t>(layer.id)];
    if (config.tiles() != config.degrees.product()) {
      throw std::invalid_argument("layer " + layer.name + ": " + std::to_string(config.tiles()) + " devices for " +
                                  std::to_string(config.degrees.product()) + " tiles");
    }
    const std::vector<Box> boxes = tiles(layer.output, config);
    LayerParams full;
    if (has_params(layer.kind)) full = initial_params(graph_, layer, options_.weight_seed);
    for (int t = 0; t < config.tiles(); ++t) {
      TileState tile;
      tile.device = config.devices[static_cast<size_t>(t)];
      tile.box = boxes[static_cast<size_t>(t)];
      if (has_params(layer.kind) && transport_.holds(tile.device)) tile.params = shard(full, tile.box.dim[1]);
      tiles_[static_cast<size_t>(layer.id)].push_back(std::move(tile));
    }
  }
  for (const Layer& layer : graph_.layers()) {
    replica_groups_.push_back(layerplan::replica_groups(layer, plan_[static_cast<size_t>(layer.id)]));
  }
  set_up_buckets();
}

void Executor::set_up_buckets() {
  if (options_.gradient_bucket_bytes <= 0) {
    throw std::invalid_argument("executor: gradient_bucket_bytes " + std::to_string(options_.gradient_bucket_bytes) +
                                ": expected a positive size");
  }
  if (options_.overlap && !transport_.reduces_concurrently()) {
    throw std::invalid_argument(
        "executor: overlap needs a transport that reduces concurrently (a communicator transport given a second "
        "communicator for the gradients)");
  }
  if (options_.overlap) worker_ = std::make_unique<ReductionWorker>();
  buckets_ = gradient_buckets(graph_, plan_, bucket_cap_elements(options_.gradient_bucket_bytes));
  bucket_data_.resize(buckets_.size());
  reduce_after_.resize(static_cast<size_t>(graph_.size()));
  for (size_t b = 0; b < buckets_.size(); ++b) {
    bucket_data_[b].resize(buckets_[b].devices.size());
    for (const GradientSegment& s : buckets_[b].segments) bucket_of_[{s.layer, s.group}] = static_cast<int>(b);
    const int after = buckets_[b].reduce_after_layer;
    (after >= 0 ? reduce_after_[static_cast<size_t>(after)] : reduce_at_end_).push_back(static_cast<int>(b));
  }
}

Executor::~Executor() { drain_buckets(); }

uint64_t Executor::dropout_seed(int id) const {
  return mix(mix(options_.dropout_seed ^ static_cast<uint64_t>(steps_)) + static_cast<uint64_t>(id));
}

std::vector<int64_t> Executor::labels_of(const std::vector<int64_t>& labels, const Box& box) const {
  return {labels.begin() + box.dim[0].lo, labels.begin() + box.dim[0].hi};
}

const std::vector<std::vector<int>>& Executor::replica_groups(int id) const {
  return replica_groups_[static_cast<size_t>(id)];
}

namespace {

// The producer tile whose output is exactly `need`, on `device`: the consumer can read it
// in place. Decided by geometry alone, so every process agrees on the moves left.
template <typename Tiles>
auto* same_box_on_device(Tiles& producer_tiles, const Box& need, int device) {
  for (auto& src : producer_tiles) {
    if (src.device == device && src.box == need) return &src;
  }
  return static_cast<decltype(&producer_tiles.front())>(nullptr);
}

}  // namespace

void Executor::gather_inputs(int id) {
  const Layer& layer = graph_.layer(id);
  const auto slots = layer.inputs.size();
  auto& layer_tiles = tiles_[static_cast<size_t>(id)];
  for (TileState& tile : layer_tiles) {
    tile.gathered.assign(slots, Tensor());
    tile.input.assign(slots, nullptr);
  }
  for (int slot = 0; slot < static_cast<int>(slots); ++slot) {
    std::vector<BoxMove> moves;
    for (TileState& tile : layer_tiles) gather_tile_input(layer, slot, tile, &moves);
    transport_.exchange(moves, {id, slot, Direction::kForward});
  }
}

void Executor::gather_tile_input(const Layer& layer, int slot, TileState& tile, std::vector<BoxMove>* moves) {
  const auto s = static_cast<size_t>(slot);
  const auto& producer_tiles = tiles_[static_cast<size_t>(layer.inputs[s])];
  const Box need = required_input_box(graph_, layer, slot, tile.box);
  const bool held = transport_.holds(tile.device);
  if (const TileState* same = same_box_on_device(producer_tiles, need, tile.device)) {
    if (held) tile.input[s] = &same->output;
    return;
  }
  if (held) {
    tile.gathered[s] = Tensor(need, Tensor::kUninitialized);  // the moves below cover it
    tile.input[s] = &tile.gathered[s];
  }
  for (const TileState& src : producer_tiles) {
    const Box region = intersect(src.box, need);
    if (region.empty()) continue;
    moves->push_back({transport_.holds(src.device) ? &src.output : nullptr, src.device,
                      held ? &tile.gathered[s] : nullptr, tile.device, region});
  }
}

void Executor::send_back(int id, int slot, std::vector<Tensor>& grads) {
  const Layer& layer = graph_.layer(id);
  auto& layer_tiles = tiles_[static_cast<size_t>(id)];
  auto& owners = tiles_[static_cast<size_t>(layer.inputs[static_cast<size_t>(slot)])];
  std::vector<BoxMove> moves;
  for (size_t t = 0; t < layer_tiles.size(); ++t) {
    const TileState& tile = layer_tiles[t];
    // The gradient covers the box the forward read, on every process alike.
    const Box read = required_input_box(graph_, layer, slot, tile.box);
    const bool held = transport_.holds(tile.device);
    if (TileState* same = same_box_on_device(owners, read, tile.device)) {
      // One local move of the whole tile: hand the tensor over when nothing has been summed
      // there yet (0 + g is g exactly), else add it.
      if (!held) continue;
      if (same->grad.box() != same->box) {
        same->grad = std::move(grads[t]);
      } else {
        add_intersection(grads[t], &same->grad);
      }
      continue;
    }
    for (TileState& owner : owners) {
      const Box region = intersect(owner.box, read);
      if (region.empty()) continue;
      const bool owner_held = transport_.holds(owner.device);
      if (owner_held && owner.grad.box() != owner.box) owner.grad = Tensor(owner.box);
      moves.push_back(
          {held ? &grads[t] : nullptr, tile.device, owner_held ? &owner.grad : nullptr, owner.device, region});
    }
  }
  transport_.exchange(moves, {id, slot, Direction::kBackward});
}

void Executor::release(int id) {
  for (TileState& tile : tiles_[static_cast<size_t>(id)]) {
    tile.gathered.clear();
    tile.input.clear();
    tile.output = Tensor();
    tile.grad = Tensor();
  }
}

template <typename T, typename Flatten>
std::vector<std::vector<T>> Executor::reduce_over_groups(int id, ReduceKind kind, Flatten flatten) {
  auto& layer_tiles = tiles_[static_cast<size_t>(id)];
  std::vector<std::vector<T>> buffers(layer_tiles.size());
  for (const std::vector<int>& group : replica_groups(id)) {
    std::vector<int> devices;
    std::vector<std::vector<T>*> ptrs;
    for (int t : group) {
      const TileState& tile = layer_tiles[static_cast<size_t>(t)];
      devices.push_back(tile.device);
      if (transport_.holds(tile.device)) {
        buffers[static_cast<size_t>(t)] = flatten(t);
        ptrs.push_back(&buffers[static_cast<size_t>(t)]);
      } else {
        ptrs.push_back(nullptr);
      }
    }
    transport_.all_reduce(devices, ptrs, kind, id);
  }
  return buffers;
}

class Executor::ComputeTimer {
 public:
  ComputeTimer(Executor& executor, int id, int device, bool forward = false)
      : seconds_(executor.options_.time_compute
                     ? &executor.compute_s_[static_cast<size_t>(id)][static_cast<size_t>(device)]
                     : nullptr),
        forward_seconds_(
            seconds_ && forward ? &executor.forward_s_[static_cast<size_t>(id)][static_cast<size_t>(device)] : nullptr),
        start_(seconds_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{}) {}
  ~ComputeTimer() {
    if (!seconds_) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    *seconds_ += elapsed;
    if (forward_seconds_) *forward_seconds_ += elapsed;
  }
  ComputeTimer(const ComputeTimer&) = delete;
  ComputeTimer& operator=(const ComputeTimer&) = delete;

 private:
  double* seconds_;
  double* forward_seconds_;
  std::chrono::steady_clock::time_point start_;
};

void Executor::reset_compute_seconds() {
  for (auto& layer : compute_s_) std::fill(layer.begin(), layer.end(), 0.0);
  for (auto& layer : forward_s_) std::fill(layer.begin(), layer.end(), 0.0);
}

void Executor::forward_batch_norm(int id) {
  const LayerRef l(graph_, id);
  auto& layer_tiles = tiles_[static_cast<size_t>(id)];
  gather_inputs(id);
  if (evaluating_) {
    // Statistics of one element per channel whose mean and variance are the running ones.
    for (TileState& tile : layer_tiles) {
      if (!transport_.holds(tile.device)) continue;
      BatchNormStats stats;
      stats.channels = tile.params.channels;
      stats.count = 1;
      for (size_t c = 0; c < tile.params.running_mean.size(); ++c) {
        const double mean = tile.params.running_mean[c];
        stats.sum.push_back(mean);
        stats.sum_sq.push_back(tile.params.running_var[c] + mean * mean);
      }
      tile.output = kernels_.batch_norm_forward(l, tile.params, *tile.input[0], stats, tile.box);
    }
    return;
  }
  for (TileState& tile : layer_tiles) {
    if (!transport_.holds(tile.device)) continue;
    const ComputeTimer timer(*this, id, tile.device, kForwardPass);
    tile.stats = kernels_.batch_norm_statistics(l, *tile.input[0], tile.box);
  }
  const auto reduced = reduce_over_groups<double>(id, ReduceKind::kBatchNormStatistics, [&](int t) {
    return flatten_stats(layer_tiles[static_cast<size_t>(t)].stats);
  });
  for (size_t t = 0; t < layer_tiles.size(); ++t) {
    TileState& tile = layer_tiles[t];
    if (!transport_.holds(tile.device)) continue;
    const ComputeTimer timer(*this, id, tile.device, kForwardPass);
    unflatten_stats(reduced[t], &tile.stats);
    tile.output = kernels_.batch_norm_forward(l, tile.params, *tile.input[0], tile.stats, tile.box);
    update_running_stats(tile.stats, l.layer.momentum, &tile.params);
  }
}

void Executor::forward(int id, const Tensor& images, const std::vector<int64_t>& labels, double* loss) {
  const LayerRef l(graph_, id);
  const Layer& layer = l.layer;
  if (layer.kind == LayerKind::kBatchNorm) return forward_batch_norm(id);
  if (layer.kind != LayerKind::kInput) gather_inputs(id);
  for (TileState& tile : tiles_[static_cast<size_t>(id)]) {
    if (!transport_.holds(tile.device)) continue;
    if (layer.kind == LayerKind::kInput) {
      tile.output = crop(images, tile.box);  // loading data is not a transfer
      continue;
    }
    const ComputeTimer timer(*this, id, tile.device, kForwardPass);
    const Tensor& x = *tile.input[0];
    const Box& b = tile.box;
    switch (layer.kind) {
      case LayerKind::kConv2d:
        tile.output = kernels_.conv2d_forward(l, tile.params, x, b);
        break;
      case LayerKind::kMaxPool:
        tile.output = kernels_.max_pool_forward(l, x, b);
        break;
      case LayerKind::kAvgPool:
        tile.output = kernels_.avg_pool_forward(l, x, b);
        break;
      case LayerKind::kGlobalAvgPool:
        tile.output = kernels_.global_avg_pool_forward(l, x, b);
        break;
      case LayerKind::kFullyConnected:
        tile.output = kernels_.fully_connected_forward(l, tile.params, x, b);
        break;
      case LayerKind::kRelu:
        tile.output = kernels_.relu_forward(l, x, b);
        break;
      case LayerKind::kDropout:
        tile.output = evaluating_ ? crop(x, b) : kernels_.dropout_forward(l, x, b, dropout_seed(id));
        break;
      case LayerKind::kFlatten:
        tile.output = kernels_.flatten_forward(l, x, b);
        break;
      case LayerKind::kConcat:
      case LayerKind::kAdd: {
        std::vector<const Tensor*> ins(tile.input.begin(), tile.input.end());
        tile.output =
            layer.kind == LayerKind::kConcat ? kernels_.concat_forward(l, ins, b) : kernels_.add_forward(l, ins, b);
        break;
      }
      case LayerKind::kActivation:
        tile.output = kernels_.activation_forward(l, x, b);
        break;
      case LayerKind::kMul:
        tile.output = kernels_.mul_forward(l, {tile.input.begin(), tile.input.end()}, b);
        break;
      case LayerKind::kChannelShuffle:
        tile.output = kernels_.channel_shuffle_forward(l, x, b);
        break;
      case LayerKind::kChannelSlice:
        tile.output = kernels_.channel_slice_forward(l, x, b);
        break;
      case LayerKind::kSoftmaxCrossEntropy: {
        const std::vector<int64_t> tile_labels = labels_of(labels, b);
        LossTile lt = kernels_.softmax_cross_entropy_forward(l, x, tile_labels, b);
        tile.output = std::move(lt.probabilities);
        if (options_.label_smoothing > 0 && !evaluating_) {
          lt.loss = smoothed_cross_entropy(x.box() == b ? x : crop(x, b), tile_labels, options_.label_smoothing,
                                           layer.output.n());
        }
        *loss += lt.loss;  // this process's shares; step() all-reduces them
        break;
      }
      case LayerKind::kBatchNorm:
      case LayerKind::kInput:
        break;
    }
  }
}

void Executor::update_tile(int id, TileState& tile, std::span<const float> g) {
  if (options_.clip_grad_norm > 0) {
    tile.pending_grad.assign(g.begin(), g.end());
    return;
  }
  apply_update(id, tile, g);
}

void Executor::apply_update(int id, TileState& tile, std::span<const float> g) {
  const ComputeTimer timer(*this, id, tile.device);
  const size_t split = tile.params.weight.size();
  // Without decay_bn_bias, biases and batch-norm weights are a parameter group of their own
  // with weight decay 0.
  const bool adamw = options_.optimizer == OptimizerKind::kAdamW;
  const double decay = adamw ? options_.adamw.weight_decay : options_.sgd.weight_decay;
  const double weight_decay = options_.decay_bn_bias || graph_.layer(id).kind != LayerKind::kBatchNorm ? decay : 0.0;
  const double bias_decay = options_.decay_bn_bias ? decay : 0.0;
  if (adamw) {
    const int64_t t = steps_ + 1;
    AdamWOptions o = options_.adamw;
    o.weight_decay = weight_decay;
    adamw_update(o, t, g.first(split), &tile.params.weight, &tile.momentum_weight, &tile.second_weight);
    o.weight_decay = bias_decay;
    adamw_update(o, t, g.subspan(split), &tile.params.bias, &tile.momentum_bias, &tile.second_bias);
    return;
  }
  SgdOptions o = options_.sgd;
  o.weight_decay = weight_decay;
  sgd_update(o, g.first(split), &tile.params.weight, &tile.momentum_weight);
  o.weight_decay = bias_decay;
  sgd_update(o, g.subspan(split), &tile.params.bias, &tile.momentum_bias);
}

void Executor::clip_and_update() {
  // Each distinct parameter element once: the first replica of every shard, on the one
  // process that holds it; the processes' sums are then added.
  double local = 0;
  for (int id = 0; id < graph_.size(); ++id) {
    if (!has_params(graph_.layer(id).kind)) continue;
    for (const std::vector<int>& group : replica_groups(id)) {
      const TileState& tile = tiles_[static_cast<size_t>(id)][static_cast<size_t>(group.front())];
      if (!transport_.holds(tile.device)) continue;
      for (const float v : tile.pending_grad) local += static_cast<double>(v) * v;
    }
  }
  const double norm = std::sqrt(sum_over_processes(local));
  const auto factor = static_cast<float>(std::min(1.0, options_.clip_grad_norm / (norm + 1e-6)));
  for (int id = 0; id < graph_.size(); ++id) {
    for (TileState& tile : tiles_[static_cast<size_t>(id)]) {
      if (!transport_.holds(tile.device) || !has_params(graph_.layer(id).kind)) continue;
      std::vector<float> g = std::move(tile.pending_grad);
      tile.pending_grad.clear();
      for (float& v : g) v *= factor;
      apply_update(id, tile, g);
    }
  }
}

void Executor::queue_gradients(int id, std::vector<LayerParams>& grads) {
  auto& layer_tiles = tiles_[static_cast<size_t>(id)];
  const std::vector<std::vector<int>>& groups = replica_groups(id);
  for (size_t g = 0; g < groups.size(); ++g) {
    const auto found = bucket_of_.find({id, static_cast<int>(g)});
    for (int t : groups[g]) {
      TileState& tile = layer_tiles[static_cast<size_t>(t)];
      if (!transport_.holds(tile.device)) continue;
      std::vector<float> flat = flatten_grads(std::move(grads[static_cast<size_t>(t)]));
      if (found == bucket_of_.end()) {  // the shard's only replica: nothing to reduce
        update_tile(id, tile, flat);
        continue;
      }
      const GradientBucket& bucket = buckets_[static_cast<size_t>(found->second)];
      const auto position =
          std::find(bucket.devices.begin(), bucket.devices.end(), tile.device) - bucket.devices.begin();
      std::vector<float>& data = bucket_data_[static_cast<size_t>(found->second)][static_cast<size_t>(position)];
      if (data.empty()) {
        data = std::move(flat);  // a bucket's first shard (a large layer's only one) is not copied
      } else {
        data.insert(data.end(), flat.begin(), flat.end());
      }
    }
  }
  for (int b : reduce_after_[static_cast<size_t>(id)]) reduce_bucket(b);
}

void Executor::reduce_bucket(int b) {
  const GradientBucket& bucket = buckets_[static_cast<size_t>(b)];
  std::vector<std::vector<float>>& data = bucket_data_[static_cast<size_t>(b)];
  std::vector<std::vector<float>*> buffers;
  for (size_t pos = 0; pos < bucket.devices.size(); ++pos) {
    const bool held = transport_.holds(bucket.devices[pos]);
    if (held && static_cast<int64_t>(data[pos].size()) != bucket.elements()) {
      throw std::logic_error("executor: a gradient bucket holds " + std::to_string(data[pos].size()) +
                             " elements on device " + std::to_string(bucket.devices[pos]) + ", expected " +
                             std::to_string(bucket.elements()));
    }
    buffers.push_back(held ? &data[pos] : nullptr);
  }
  std::vector<ReduceSegment> segments;
  for (const GradientSegment& s : bucket.segments) segments.push_back({s.layer, s.elements});
  if (!worker_) {
    transport_.all_reduce(bucket.devices, buffers, segments);
    update_bucket(b);
    return;
  }
  // The communication thread reads and writes only this bucket's buffers, which nothing
  // else touches until finish_buckets has its future.
  posted_.emplace_back(
      b, worker_->post([this, devices = bucket.devices, buffers = std::move(buffers), segments = std::move(segments)] {
        transport_.all_reduce(devices, buffers, segments);
      }));
}

void Executor::update_bucket(int b) {
  const GradientBucket& bucket = buckets_[static_cast<size_t>(b)];
  std::vector<std::vector<float>>& data = bucket_data_[static_cast<size_t>(b)];
  int64_t offset = 0;
  for (const GradientSegment& s : bucket.segments) {
    for (int t : replica_groups(s.layer)[static_cast<size_t>(s.group)]) {
      TileState& tile = tiles_[static_cast<size_t>(s.layer)][static_cast<size_t>(t)];
      if (!transport_.holds(tile.device)) continue;
      const auto position =
          std::find(bucket.devices.begin(), bucket.devices.end(), tile.device) - bucket.devices.begin();
      const std::span<const float> all = data[static_cast<size_t>(position)];
      update_tile(s.layer, tile, all.subspan(static_cast<size_t>(offset), static_cast<size_t>(s.elements)));
    }
    offset += s.elements;
  }
  for (std::vector<float>& d : data) std::vector<float>().swap(d);
}

void Executor::finish_buckets(bool wait) {
  size_t done = 0;
  for (; done < posted_.size(); ++done) {
    std::future<void>& reduced = posted_[done].second;
    if (!wait && reduced.wait_for(std::chrono::seconds(0)) != std::future_status::ready) break;
    const int b = posted_[done].first;
    try {
      reduced.get();  // rethrows the all-reduce's failure (a CommError)
    } catch (...) {
      posted_.erase(posted_.begin(), posted_.begin() + static_cast<std::ptrdiff_t>(done) + 1);
      throw;
    }
    update_bucket(b);
  }
  posted_.erase(posted_.begin(), posted_.begin() + static_cast<std::ptrdiff_t>(done));
}

void Executor::drain_buckets() noexcept {
  for (auto& posted : posted_) {
    if (posted.second.valid()) posted.second.wait();  // a failure is the step's that threw, or the next one's
  }
  posted_.clear();
}

void Executor::backward_batch_norm(int id) {
  const LayerRef l(graph_, id);
  auto& layer_tiles = tiles_[static_cast<size_t>(id)];
  std::vector<BatchNormGradStats> local(layer_tiles.size());
  for (size_t t = 0; t < layer_tiles.size(); ++t) {
    TileState& tile = layer_tiles[t];
    if (!transport_.holds(tile.device)) continue;
    const ComputeTimer timer(*this, id, tile.device);
    local[t] = kernels_.batch_norm_backward_statistics(l, tile.params, *tile.input[0], tile.grad, tile.stats);
  }
  const auto reduced = reduce_over_groups<double>(
      id, ReduceKind::kBatchNormStatistics, [&](int t) { return flatten_grad_stats(local[static_cast<size_t>(t)]); });
  std::vector<Tensor> dx(layer_tiles.size());
  std::vector<LayerParams> grads(layer_tiles.size());
  for (size_t t = 0; t < layer_tiles.size(); ++t) {
    TileState& tile = layer_tiles[t];
    if (!transport_.holds(tile.device)) continue;
    const ComputeTimer timer(*this, id, tile.device);
    BatchNormGradStats global = local[t];
    unflatten_grad_stats(reduced[t], &global);
    dx[t] = kernels_.batch_norm_backward(l, tile.params, *tile.input[0], tile.grad, tile.stats, global);
    // The tile's own sums are its weight-gradient contribution, reduced like any other.
    grads[t] = batch_norm_weight_grads(local[t]);
  }
  send_back(id, 0, dx);
  queue_gradients(id, grads);
}

void Executor::backward(int id, const std::vector<int64_t>& labels) {
  const LayerRef l(graph_, id);
  const Layer& layer = l.layer;
  if (layer.kind == LayerKind::kInput) return;
  if (layer.kind == LayerKind::kBatchNorm) return backward_batch_norm(id);
  auto& layer_tiles = tiles_[static_cast<size_t>(id)];
  std::vector<LayerParams> grads(layer_tiles.size());
  // dx[slot][tile]: input gradients over the boxes the forward read.
  std::vector<std::vector<Tensor>> dx(layer.inputs.size(), std::vector<Tensor>(layer_tiles.size()));
  for (size_t t = 0; t < layer_tiles.size(); ++t) {
    TileState& tile = layer_tiles[t];
    if (!transport_.holds(tile.device)) continue;
    const ComputeTimer timer(*this, id, tile.device);
    const Tensor& x = *tile.input[0];
    const Tensor& dy = tile.grad;
    std::vector<Tensor> g;
    switch (layer.kind) {
      case LayerKind::kConv2d:
      case LayerKind::kFullyConnected: {
        WeightedGrads w = layer.kind == LayerKind::kConv2d ? kernels_.conv2d_backward(l, tile.params, x, dy)
                                                           : kernels_.fully_connected_backward(l, tile.params, x, dy);
        grads[t] = std::move(w.params);
        g.push_back(std::move(w.input));
        break;
      }
      case LayerKind::kMaxPool:
        g.push_back(kernels_.max_pool_backward(l, x, dy));
        break;
      case LayerKind::kAvgPool:
        g.push_back(kernels_.avg_pool_backward(l, dy));
        break;
      case LayerKind::kGlobalAvgPool:
        g.push_back(kernels_.global_avg_pool_backward(l, dy));
        break;
      case LayerKind::kRelu:
        g.push_back(kernels_.relu_backward(l, tile.output, dy));
        break;
      case LayerKind::kDropout:
        g.push_back(kernels_.dropout_backward(l, dy, dropout_seed(id)));
        break;
      case LayerKind::kFlatten:
        g.push_back(kernels_.flatten_backward(l, dy));
        break;
      case LayerKind::kConcat:
        g = kernels_.concat_backward(l, dy);
        break;
      case LayerKind::kAdd:
        g = kernels_.add_backward(l, dy);
        break;
      case LayerKind::kSoftmaxCrossEntropy: {
        const std::vector<int64_t> tile_labels = labels_of(labels, tile.box);
        g.push_back(kernels_.softmax_cross_entropy_backward(l, tile.output, tile_labels));
        if (options_.label_smoothing > 0)
          smooth_cross_entropy_gradient(tile_labels, options_.label_smoothing, layer.output.n(), &g.back());
        break;
      }
      case LayerKind::kActivation:
        g.push_back(kernels_.activation_backward(l, x, dy));
        break;
      case LayerKind::kMul:  // a broadcast scale's partial gradients sum at its owner (send_back)
        g = kernels_.mul_backward(l, {tile.input.begin(), tile.input.end()}, dy);
        break;
      case LayerKind::kChannelShuffle:
        g.push_back(kernels_.channel_shuffle_backward(l, dy));
        break;
      case LayerKind::kChannelSlice:
        g.push_back(kernels_.channel_slice_backward(l, dy));
        break;
      case LayerKind::kBatchNorm:
      case LayerKind::kInput:
        break;
    }
    for (size_t slot = 0; slot < g.size(); ++slot) dx[slot][t] = std::move(g[slot]);
  }
  for (int slot = 0; slot < static_cast<int>(layer.inputs.size()); ++slot)
    send_back(id, slot, dx[static_cast<size_t>(slot)]);
  if (has_params(layer.kind)) queue_gradients(id, grads);
}

double Executor::sum_over_processes(double local) {
  // A ring over every device of the plan; the first device this process holds carries its
  // value, the others zero.
  std::vector<std::vector<double>> values(devices_.size(), std::vector<double>{0.0});
  std::vector<std::vector<double>*> ptrs;
  std::vector<double>* mine = nullptr;
  for (size_t i = 0; i < devices_.size(); ++i) {
    const bool held = transport_.holds(devices_[i]);
    ptrs.push_back(held ? &values[i] : nullptr);
    if (held && mine == nullptr) mine = &values[i];
  }
  if (mine == nullptr) return local;
  (*mine)[0] = local;
  transport_.all_reduce(devices_, ptrs, ReduceKind::kLoss, graph_.size() - 1);
  return (*mine)[0];
}

double Executor::step(const Tensor& images, const std::vector<int64_t>& labels) {
  const Layer& input = graph_.layer(0);
  if (images.box() != Box::whole(input.output)) {
    throw std::invalid_argument("step: images cover " + images.box().str() + ", the input layer is " +
                                Box::whole(input.output).str());
  }
  if (static_cast<int64_t>(labels.size()) != input.output.n()) {
    throw std::invalid_argument("step: " + std::to_string(labels.size()) + " labels for a batch of " +
                                std::to_string(input.output.n()));
  }
  drain_buckets();                     // a step that threw may have left reductions running
  for (auto& bucket : bucket_data_) {  // and gradients behind
    for (std::vector<float>& d : bucket) d.clear();
  }
  double loss = 0;
  for (int id = 0; id < graph_.size(); ++id) forward(id, images, labels, &loss);
  loss = sum_over_processes(loss);
  for (auto& layer_tiles : tiles_) {
    for (TileState& tile : layer_tiles) tile.grad = Tensor();  // allocated as gradients arrive
  }
  for (int id = graph_.size() - 1; id >= 0; --id) {
    for (TileState& tile : tiles_[static_cast<size_t>(id)]) {
      if (transport_.holds(tile.device) && tile.grad.box() != tile.box) tile.grad = Tensor(tile.box);
    }
    backward(id, labels);
    release(id);
    finish_buckets(false);  // update the shards whose buckets are reduced already
  }
  for (int b : reduce_at_end_) reduce_bucket(b);
  finish_buckets(true);
  if (options_.clip_grad_norm > 0) clip_and_update();
  ++steps_;
  return loss;
}

namespace {

// How many classes sample n ranks above its label: those scoring higher, and those scoring
// the same with a lower number (so 0 exactly when the label is the argmax, which takes the
// first of equal scores).
int64_t label_rank(const Tensor& scores, int64_t n, Interval classes, int64_t label) {
  const float mine = scores.at(n, label, 0, 0);
  int64_t above = 0;
  for (int64_t c = classes.lo; c < classes.hi; ++c) {
    const float other = scores.at(n, c, 0, 0);
    if (other > mine || (other == mine && c < label)) ++above;
  }
  return above;
}

}  // namespace

Executor::Evaluation Executor::evaluate(const Tensor& images, const std::vector<int64_t>& labels) {
  if (images.box() != Box::whole(graph_.layer(0).output) ||
      static_cast<int64_t>(labels.size()) != graph_.layer(0).output.n()) {
    throw std::invalid_argument("evaluate: the batch does not fit the input layer");
  }
  double loss = 0;
  evaluating_ = true;
  try {
    for (int id = 0; id < graph_.size(); ++id) forward(id, images, labels, &loss);
  } catch (...) {
    evaluating_ = false;
    throw;
  }
  evaluating_ = false;
  double correct = 0, correct_top5 = 0;
  // The loss layer splits only samples (planner/config_space.cc): a tile has every class.
  for (const TileState& tile : tiles_.back()) {
    if (!transport_.holds(tile.device)) continue;
    const Interval classes = tile.box.dim[1];
    for (int64_t n = tile.box.dim[0].lo; n < tile.box.dim[0].hi; ++n) {
      const int64_t rank = label_rank(tile.output, n, classes, labels[static_cast<size_t>(n)]);
      if (rank == 0) correct += 1;  // the label is the argmax
      if (rank < 5) correct_top5 += 1;
    }
  }
  return {sum_over_processes(loss), std::llround(sum_over_processes(correct)),
          std::llround(sum_over_processes(correct_top5))};
}

LayerParams Executor::gathered_params(int id) const {
  const Layer& layer = graph_.layer(id);
  LayerParams full = zero_params(graph_, layer);
  std::fill(full.weight.begin(), full.weight.end(), 0.0f);
  std::fill(full.bias.begin(), full.bias.end(), 0.0f);
  std::fill(full.running_mean.begin(), full.running_mean.end(), 0.0f);
  std::fill(full.running_var.begin(), full.running_var.end(), 0.0f);  // zero_params sets 1
  for (const std::vector<int>& group : replica_groups(id)) {
    const TileState& tile = tiles_[static_cast<size_t>(id)][static_cast<size_t>(group.front())];
    if (!transport_.holds(tile.device)) continue;
    const LayerParams& p = tile.params;
    add_shard(p, &full);
    for (size_t i = 0; i < p.running_mean.size(); ++i) {
      full.running_mean[static_cast<size_t>(p.channels.lo) + i] = p.running_mean[i];
      full.running_var[static_cast<size_t>(p.channels.lo) + i] = p.running_var[i];
    }
  }
  return full;
}

LayerParams Executor::gathered_momentum(int id) const {
  return gathered_state(id, &TileState::momentum_weight, &TileState::momentum_bias);
}

LayerParams Executor::gathered_second_moment(int id) const {
  return gathered_state(id, &TileState::second_weight, &TileState::second_bias);
}

LayerParams Executor::gathered_state(int id, std::vector<float> TileState::*weight,
                                     std::vector<float> TileState::*bias) const {
  const Layer& layer = graph_.layer(id);
  LayerParams full = zero_params(graph_, layer);
  full.running_mean.clear();
  full.running_var.clear();
  const bool sgd = options_.optimizer == OptimizerKind::kSgd;
  // sgd_update keeps no buffers before the first step and without momentum, and no second moment.
  if (steps_ == 0 || (sgd && (options_.sgd.momentum == 0 || weight == &TileState::second_weight))) {
    full.weight.clear();
    full.bias.clear();
    return full;
  }
  std::fill(full.weight.begin(), full.weight.end(), 0.0f);
  std::fill(full.bias.begin(), full.bias.end(), 0.0f);
  for (const std::vector<int>& group : replica_groups(id)) {
    const TileState& tile = tiles_[static_cast<size_t>(id)][static_cast<size_t>(group.front())];
    if (!transport_.holds(tile.device) || (tile.*weight).empty()) continue;
    LayerParams part;
    part.channels = tile.params.channels;
    part.row = tile.params.row;
    part.weight = tile.*weight;
    part.bias = tile.*bias;
    add_shard(part, &full);
  }
  return full;
}

void Executor::load_layer(int id, const LayerParams& full, const LayerParams& momentum,
                          const LayerParams& second_moment) {
  const Layer& layer = graph_.layer(id);
  const LayerParams want = zero_params(graph_, layer);
  const auto fits = [](const std::vector<float>& got, const std::vector<float>& expected, bool may_be_empty) {
    return got.size() == expected.size() || (may_be_empty && got.empty());
  };
  if (!fits(full.weight, want.weight, false) || !fits(full.bias, want.bias, false) ||
      !fits(full.running_mean, want.running_mean, false) || !fits(full.running_var, want.running_var, false) ||
      !fits(momentum.weight, want.weight, true) || !fits(momentum.bias, want.bias, momentum.weight.empty()) ||
      !fits(second_moment.weight, want.weight, true) ||
      !fits(second_moment.bias, want.bias, second_moment.weight.empty()) || full.channels != want.channels ||
      momentum.channels != want.channels ||
      (!second_moment.weight.empty() && second_moment.channels != want.channels)) {
    throw std::invalid_argument("load_layer: the parameters do not fit layer " + layer.name);
  }
  for (TileState& tile : tiles_[static_cast<size_t>(id)]) {
    if (!transport_.holds(tile.device)) continue;
    const double eps = tile.params.eps;
    tile.params = shard(full, tile.box.dim[1]);
    tile.params.eps = eps;
    LayerParams m = shard(momentum, tile.box.dim[1]);
    tile.momentum_weight = std::move(m.weight);
    tile.momentum_bias = std::move(m.bias);
    tile.second_weight.clear();
    tile.second_bias.clear();
    if (second_moment.weight.empty()) continue;
    LayerParams v = shard(second_moment, tile.box.dim[1]);
    tile.second_weight = std::move(v.weight);
    tile.second_bias = std::move(v.bias);
  }
}

}  // namespace layerplan
