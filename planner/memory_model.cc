#include "planner/memory_model.h"

#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>
#include <string>

#include "model/layer_math.h"

namespace layerplan {

namespace {

// Elements of one replica's weight and bias shard (what is all-reduced and updated).
int64_t shard_elements(const ModelGraph& graph, const Layer& layer, const Configuration& config) {
  const int64_t all = parameter_count(graph, layer);
  return channel_split_shards_weights(layer.kind) ? all / config.degrees[1] : all;
}

// Batch-norm running mean and variance of one tile's channels (kept beside the shard).
int64_t running_stat_elements(const Layer& layer, const Configuration& config) {
  return layer.kind == LayerKind::kBatchNorm ? 2 * layer.output.c() / config.degrees[1] : 0;
}

// Along dimension `dim`: for each producer index, what it shares with the regions that all
// consumer indices require.
std::vector<int64_t> sent_along(const ModelGraph& graph, const Layer& consumer, int slot, const Degrees& producer,
                                const Degrees& consumer_degrees, int dim) {
  const auto d = static_cast<size_t>(dim);
  const int64_t psize = graph.input_shape(consumer, slot)[dim] / producer[dim];
  std::vector<int64_t> sent(static_cast<size_t>(producer[dim]), 0);
  for (int j = 0; j < consumer_degrees[dim]; ++j) {
    std::array<int, kNumDims> coords{};
    coords[d] = j;
    const Box out = tile_box(consumer.output, consumer_degrees, tile_index(consumer_degrees, coords));
    const Interval r = required_input_box(graph, consumer, slot, out).dim[d];
    if (r.size() == 0) continue;
    for (int64_t i = r.lo / psize; i <= (r.hi - 1) / psize; ++i) {
      sent[static_cast<size_t>(i)] += std::min(r.hi, (i + 1) * psize) - std::max(r.lo, i * psize);
    }
  }
  return sent;
}

// The tile of `config` on each device of a job, or -1.
std::vector<int> tiles_by_device(const Configuration& config, int device_count) {
  std::vector<int> out(static_cast<size_t>(device_count), -1);
  for (int t = 0; t < config.tiles(); ++t) out[static_cast<size_t>(config.devices[static_cast<size_t>(t)])] = t;
  return out;
}

// A bucket of weight gradients being filled (runtime/executor/gradient_buckets.cc forms
// the same ones: one open bucket per replica group's device list, reduced once it holds
// the cap).
struct OpenBucket {
  std::vector<int> devices;
  int64_t elements = 0;
};

// Walks construction and one step in the executor's order, per device, in elements.
class StepSimulator {
 public:
  StepSimulator(const ModelGraph& graph, const std::vector<Configuration>& plan, int device_count,
                const MemoryModelOptions& options)
      : graph_(graph),
        plan_(plan),
        options_(options),
        live_(static_cast<size_t>(device_count), 0),
        peak_(live_),
        parameters_(live_),
        momentum_(live_),
        workspace_(live_),
        activations_(live_) {
    if (static_cast<int>(plan.size()) != graph.size()) {
      throw std::invalid_argument("memory model: " + std::to_string(plan.size()) + " configurations for " +
                                  std::to_string(graph.size()) + " layers");
    }
    for (const Layer& l : graph.layers()) {
      const Configuration& c = config(l.id);
      for (int d : c.devices) {
        if (d < 0 || d >= device_count) throw std::invalid_argument("memory model: device out of range");
      }
      boxes_.push_back(tiles(l.output, c));
      std::vector<int> tile_of(static_cast<size_t>(device_count), -1);
      for (int t = 0; t < c.tiles(); ++t) tile_of[static_cast<size_t>(c.devices[static_cast<size_t>(t)])] = t;
      tile_of_.push_back(std::move(tile_of));
      has_grad_.emplace_back(static_cast<size_t>(c.tiles()), false);
      kept_.emplace_back(static_cast<size_t>(c.tiles()), 0);
    }
  }

  PlanMemory run() {
    construct();
    forward();
    for (size_t d = 0; d < live_.size(); ++d) {
      activations_[d] = live_[d] - parameters_[d] - momentum_[d] - workspace_[d];
    }
    backward();
    PlanMemory out;
    for (size_t d = 0; d < live_.size(); ++d) {
      out.devices.push_back({peak_[d], parameters_[d], momentum_[d], workspace_[d], activations_[d]});
    }
    return out;
  }

 private:
  const Configuration& config(int id) const { return plan_[static_cast<size_t>(id)]; }
  // The tile of layer `id` on `device`, or -1.
  int tile_on(int id, int device) const { return tile_of_[static_cast<size_t>(id)][static_cast<size_t>(device)]; }

  void alloc(int device, int64_t n) {
    auto& v = live_[static_cast<size_t>(device)];
    v += n;
    peak_[static_cast<size_t>(device)] = std::max(peak_[static_cast<size_t>(device)], v);
  }
  void release_on(int device, int64_t n) { live_[static_cast<size_t>(device)] -= n; }
  // Memory held only for a moment on top of what is live.
  void transient(int device, int64_t n) {
    const auto d = static_cast<size_t>(device);
    peak_[d] = std::max(peak_[d], live_[d] + n);
  }

  // The constructor gives every tile its parameter shard (the full parameters it cuts them
  // from are host memory on a GPU, and transient on the CPU); momentum appears at the first
  // update.
  void construct() {
    for (const Layer& l : graph_.layers()) {
      const Configuration& c = config(l.id);
      const int64_t shard = shard_elements(graph_, l, c) + running_stat_elements(l, c);
      for (int d : c.devices) {
        alloc(d, shard);
        parameters_[static_cast<size_t>(d)] += shard;
      }
    }
    workspace();
    if (!options_.momentum) return;
    for (const Layer& l : graph_.layers()) {
      const int64_t shard = shard_elements(graph_, l, config(l.id));
      for (int d : config(l.id).devices) {
        alloc(d, shard);
        momentum_[static_cast<size_t>(d)] += shard;
      }
    }
  }

  // Convolutions run in the kernels' preferred layouts, converted in and out through one
  // scratch buffer per operand role (input, weights, output and their gradients) that grows
  // to the largest use and is kept (runtime/kernels/onednn_kernels.cc).
  void workspace() {
    std::vector<std::array<int64_t, 3>> largest(live_.size(), {0, 0, 0});  // input, weights, output
    for (const Layer& l : graph_.layers()) {
      if (l.kind != LayerKind::kConv2d) continue;
      const Configuration& c = config(l.id);
      const int64_t weights = shard_elements(graph_, l, c);
      for (int t = 0; t < c.tiles(); ++t) {
        const Box& out = boxes_[static_cast<size_t>(l.id)][static_cast<size_t>(t)];
        auto& m = largest[static_cast<size_t>(c.devices[static_cast<size_t>(t)])];
        m[0] = std::max(m[0], required_input_box(graph_, l, 0, out).volume());
        m[1] = std::max(m[1], weights);
        m[2] = std::max(m[2], out.volume());
      }
    }
    for (size_t d = 0; d < live_.size(); ++d) {
      const int64_t both_passes = 2 * (largest[d][0] + largest[d][1] + largest[d][2]);
      alloc(static_cast<int>(d), both_passes);
      workspace_[d] = both_passes;
    }
  }

  // Whether tile `t` of consumer `l` reads input `slot` in place: a producer tile on the same
  // device has exactly the box it needs.
  bool reads_in_place(const Layer& l, int slot, int t, const Box& need) const {
    const int producer = l.inputs[static_cast<size_t>(slot)];
    const int p = tile_on(producer, config(l.id).devices[static_cast<size_t>(t)]);
    return p >= 0 && boxes_[static_cast<size_t>(producer)][static_cast<size_t>(p)] == need;
  }

  // What the transport holds at once for one edge's exchange (exchange_elements()).
  void exchange(const Layer& l, int slot) {
    const int producer = l.inputs[static_cast<size_t>(slot)];
    const std::vector<int64_t> held =
        exchange_elements(graph_, l, slot, config(producer), config(l.id), static_cast<int>(live_.size()));
    for (int d : config(producer).devices) transient(d, held[static_cast<size_t>(d)]);
    for (int d : config(l.id).devices) {
      if (tile_on(producer, d) < 0) transient(d, held[static_cast<size_t>(d)]);
    }
  }

  // Gathers the inputs that are not read in place (kept for the backward), then the output.
  void forward_layer(const Layer& l) {
    const Configuration& c = config(l.id);
    const auto id = static_cast<size_t>(l.id);
    for (int slot = 0; slot < static_cast<int>(l.inputs.size()); ++slot) {
      bool moves = false;
      for (int t = 0; t < c.tiles(); ++t) {
        const Box need = required_input_box(graph_, l, slot, boxes_[id][static_cast<size_t>(t)]);
        if (reads_in_place(l, slot, t, need)) continue;
        moves = true;
        alloc(c.devices[static_cast<size_t>(t)], need.volume());
        kept_[id][static_cast<size_t>(t)] += need.volume();
      }
      if (moves) exchange(l, slot);
    }
    for (int t = 0; t < c.tiles(); ++t)
      alloc(c.devices[static_cast<size_t>(t)], boxes_[id][static_cast<size_t>(t)].volume());
  }

  void forward() {
    for (const Layer& l : graph_.layers()) forward_layer(l);
  }

  // The output gradient of every tile of layer `id` that has none yet.
  void give_grad(int id) {
    const Configuration& c = config(id);
    for (int t = 0; t < c.tiles(); ++t) {
      auto flag = has_grad_[static_cast<size_t>(id)][static_cast<size_t>(t)];
      if (flag) continue;
      has_grad_[static_cast<size_t>(id)][static_cast<size_t>(t)] = true;
      alloc(c.devices[static_cast<size_t>(t)], boxes_[static_cast<size_t>(id)][static_cast<size_t>(t)].volume());
    }
  }

  // The input gradients (over the boxes read) go back to the producers' tiles: handed over
  // where read in place and the producer has no gradient yet (the only case they outlive
  // the layer's backward), else added into the producer's gradient, allocated if needed.
  // Returns the elements of input gradients freed after the layer's backward, per tile.
  std::vector<int64_t> backward_inputs(const Layer& l) {
    const Configuration& c = config(l.id);
    const auto id = static_cast<size_t>(l.id);
    std::vector<int64_t> freed(static_cast<size_t>(c.tiles()), 0);
    std::vector<Box> needs;
    for (int slot = 0; slot < static_cast<int>(l.inputs.size()); ++slot) {
      for (int t = 0; t < c.tiles(); ++t) {
        const Box need = required_input_box(graph_, l, slot, boxes_[id][static_cast<size_t>(t)]);
        alloc(c.devices[static_cast<size_t>(t)], need.volume());
        needs.push_back(need);
      }
    }
    for (int slot = 0; slot < static_cast<int>(l.inputs.size()); ++slot) {
      const int producer = l.inputs[static_cast<size_t>(slot)];
      bool moves = false;
      for (int t = 0; t < c.tiles(); ++t) {
        const Box& need = needs[static_cast<size_t>(slot) * static_cast<size_t>(c.tiles()) + static_cast<size_t>(t)];
        if (!reads_in_place(l, slot, t, need)) {
          moves = true;
          freed[static_cast<size_t>(t)] += need.volume();
          continue;
        }
        const int p = tile_on(producer, c.devices[static_cast<size_t>(t)]);
        auto flag = has_grad_[static_cast<size_t>(producer)][static_cast<size_t>(p)];
        if (flag) freed[static_cast<size_t>(t)] += need.volume();
        has_grad_[static_cast<size_t>(producer)][static_cast<size_t>(p)] = true;
      }
      if (!moves) continue;
      give_grad(producer);  // every producer tile the moves reach (approximated by all)
      exchange(l, slot);
    }
    return freed;
  }

  // The devices of each replica group of `l`: the tiles with the same channel coordinate
  // where a channel split shards the weights, else all tiles.
  std::vector<std::vector<int>> replica_devices(const Layer& l) const {
    const Configuration& c = config(l.id);
    const bool by_channel = channel_split_shards_weights(l.kind);
    std::vector<std::vector<int>> groups(static_cast<size_t>(by_channel ? c.degrees[1] : 1));
    for (int t = 0; t < c.tiles(); ++t) {
      const size_t g = by_channel ? static_cast<size_t>(tile_coords(c.degrees, t)[1]) : 0;
      groups[g].push_back(c.devices[static_cast<size_t>(t)]);
    }
    for (std::vector<int>& devices : groups) std::sort(devices.begin(), devices.end());
    return groups;
  }

  // A replica group's shard joins the open bucket of its devices; appending to a non-empty
  // bucket copies it into a larger buffer.
  void add_to_bucket(const std::vector<int>& devices, int64_t shard) {
    auto bucket = std::find_if(open_.begin(), open_.end(), [&](const OpenBucket& b) { return b.devices == devices; });
    if (bucket == open_.end()) bucket = open_.insert(open_.end(), OpenBucket{devices, 0});
    for (int d : devices) transient(d, bucket->elements > 0 ? bucket->elements + shard : 0);
    bucket->elements += shard;
  }

  // Weight gradients join their replica group's bucket (or update at once when the group
  // is a single tile); full buckets are all-reduced and freed after the layer.
  void queue_gradients(const Layer& l) {
    const int64_t shard = shard_elements(graph_, l, config(l.id));
    if (shard == 0) return;
    // Weight and bias are flattened into one buffer: a copy when there is a bias to append.
    const bool copies = l.kind == LayerKind::kBatchNorm || l.has_bias;
    for (const std::vector<int>& devices : replica_devices(l)) {
      for (int d : devices) transient(d, copies ? shard : 0);
      if (devices.size() < 2) {
        for (int d : devices) release_on(d, shard);  // updated at once
      } else {
        add_to_bucket(devices, shard);
      }
    }
    const int64_t cap = std::max<int64_t>(1, options_.bucket_bytes / 4);  // float gradients
    for (auto it = open_.begin(); it != open_.end();) {
      if (it->elements < cap) {
        ++it;
        continue;
      }
      reduce(*it);
      it = open_.erase(it);
    }
  }

  // The ring all-reduce keeps one chunk of scratch; the bucket is freed afterwards.
  void reduce(const OpenBucket& bucket) {
    const auto p = static_cast<int64_t>(bucket.devices.size());
    for (int d : bucket.devices) {
      transient(d, (bucket.elements + p - 1) / p);
      release_on(d, bucket.elements);
    }
  }

  void backward_layer(const Layer& l, const std::vector<int64_t>& weight_grads) {
    const Configuration& c = config(l.id);
    const auto id = static_cast<size_t>(l.id);
    give_grad(l.id);
    if (l.kind != LayerKind::kInput) {
      for (int t = 0; t < c.tiles(); ++t) alloc(c.devices[static_cast<size_t>(t)], weight_grads[id]);
      const std::vector<int64_t> freed = backward_inputs(l);
      queue_gradients(l);
      for (int t = 0; t < c.tiles(); ++t) release_on(c.devices[static_cast<size_t>(t)], freed[static_cast<size_t>(t)]);
    }
    // release(): the output, the gathered inputs and the output gradient.
    for (int t = 0; t < c.tiles(); ++t) {
      release_on(c.devices[static_cast<size_t>(t)],
                 2 * boxes_[id][static_cast<size_t>(t)].volume() + kept_[id][static_cast<size_t>(t)]);
    }
  }

  void backward() {
    std::vector<int64_t> weight_grads;
    for (const Layer& l : graph_.layers()) weight_grads.push_back(shard_elements(graph_, l, config(l.id)));
    for (int id = graph_.size() - 1; id >= 0; --id) backward_layer(graph_.layer(id), weight_grads);
    for (const OpenBucket& b : open_) reduce(b);
    open_.clear();
  }

  const ModelGraph& graph_;
  const std::vector<Configuration>& plan_;
  MemoryModelOptions options_;
  std::vector<int64_t> live_, peak_, parameters_, momentum_, workspace_, activations_;  // per device, elements
  std::vector<std::vector<Box>> boxes_;                                                 // [layer][tile]
  std::vector<std::vector<int>> tile_of_;    // [layer][device]: its tile there, or -1
  std::vector<std::vector<bool>> has_grad_;  // [layer][tile]
  std::vector<std::vector<int64_t>> kept_;   // [layer][tile]: gathered inputs kept for the backward
  std::vector<OpenBucket> open_;
};

}  // namespace

std::vector<int64_t> exchange_elements(const ModelGraph& graph, const Layer& consumer, int slot,
                                       const Configuration& producer, const Configuration& consumer_config,
                                       int device_count) {
  std::array<std::vector<int64_t>, kNumDims> sent;  // [dim][producer index]
  for (int d = 0; d < kNumDims; ++d) {
    sent[static_cast<size_t>(d)] = sent_along(graph, consumer, slot, producer.degrees, consumer_config.degrees, d);
  }
  const Shape& in_shape = graph.input_shape(consumer, slot);
  const std::vector<int> producer_on = tiles_by_device(producer, device_count);
  const std::vector<int> consumer_on = tiles_by_device(consumer_config, device_count);
  // What consumer tile q reads of producer tile p (0 when either is -1).
  const auto local = [&](int q, int p) -> int64_t {
    if (q < 0 || p < 0) return 0;
    const Box need = required_input_box(graph, consumer, slot, tile_box(consumer.output, consumer_config.degrees, q));
    return intersect(need, tile_box(in_shape, producer.degrees, p)).volume();
  };
  std::vector<int64_t> held(static_cast<size_t>(device_count), 0);
  for (int p = 0; p < producer.tiles(); ++p) {
    const auto coords = tile_coords(producer.degrees, p);
    int64_t all = 1;
    for (int d = 0; d < kNumDims; ++d) {
      all *= sent[static_cast<size_t>(d)][static_cast<size_t>(coords[static_cast<size_t>(d)])];
    }
    const auto device = static_cast<size_t>(producer.devices[static_cast<size_t>(p)]);
    held[device] += all - local(consumer_on[device], p);
  }
  for (int q = 0; q < consumer_config.tiles(); ++q) {
    const auto device = static_cast<size_t>(consumer_config.devices[static_cast<size_t>(q)]);
    const Box need = required_input_box(graph, consumer, slot, tile_box(consumer.output, consumer_config.degrees, q));
    held[device] += need.volume() - local(q, producer_on[device]);
  }
  return held;
}

int64_t PlanMemory::peak() const {
  int64_t best = 0;
  for (const DeviceMemory& d : devices) best = std::max(best, d.peak);
  return best;
}

int PlanMemory::peak_device() const {
  int at = 0;
  for (size_t d = 0; d < devices.size(); ++d) {
    if (devices[d].peak > devices[static_cast<size_t>(at)].peak) at = static_cast<int>(d);
  }
  return at;
}

PlanMemory predict_plan_memory(const ModelGraph& graph, const std::vector<Configuration>& plan, int device_count,
                               int64_t bytes_per_element, const MemoryModelOptions& options) {
  PlanMemory memory = StepSimulator(graph, plan, device_count, options).run();
  for (DeviceMemory& d : memory.devices) {
    d.peak *= bytes_per_element;
    d.parameters *= bytes_per_element;
    d.momentum *= bytes_per_element;
    d.workspace *= bytes_per_element;
    d.activations *= bytes_per_element;
  }
  return memory;
}

int64_t layer_memory_lower_bound(const ModelGraph& graph, const Layer& layer, const Configuration& config,
                                 int64_t bytes_per_element, const MemoryModelOptions& options) {
  const Box box = tile_box(layer.output, config.degrees, 0);
  const int64_t shard = shard_elements(graph, layer, config);
  // Output and its gradient; parameters, momentum and the weight gradient.
  int64_t elements = 2 * box.volume() + shard * (options.momentum ? 3 : 2) + running_stat_elements(layer, config);
  for (int slot = 0; slot < static_cast<int>(layer.inputs.size()); ++slot) {
    const int producer = layer.inputs[static_cast<size_t>(slot)];
    const int64_t read = required_input_box(graph, layer, slot, box).volume();
    // The input gradient of every slot; the saved input once per distinct producer.
    const bool seen =
        std::find(layer.inputs.begin(), layer.inputs.begin() + slot, producer) != layer.inputs.begin() + slot;
    elements += read * (seen ? 1 : 2);
  }
  // A convolution's layout buffers are at least its own operands, forward and backward.
  if (layer.kind == LayerKind::kConv2d) {
    elements += 2 * (required_input_box(graph, layer, 0, box).volume() + shard + box.volume());
  }
  return elements * bytes_per_element;
}

int64_t layer_resident_bytes(const ModelGraph& graph, const Layer& layer, const Configuration& config,
                             int64_t bytes_per_element, const MemoryModelOptions& options) {
  const int64_t shard = shard_elements(graph, layer, config);
  const Box box = tile_box(layer.output, config.degrees, 0);
  int64_t elements = box.volume() + shard * (options.momentum ? 2 : 1) + running_stat_elements(layer, config);
  // Inputs as if gathered (read in place they are the producer's output, counted there).
  for (int slot = 0; slot < static_cast<int>(layer.inputs.size()); ++slot) {
    elements += required_input_box(graph, layer, slot, box).volume();
  }
  return elements * bytes_per_element;
}

int64_t usable_memory_bytes(const Device& device) {
  if (device.memory_bytes <= 0) return std::numeric_limits<int64_t>::max();  // unknown: nothing is checked
  return static_cast<int64_t>(device.memory_bytes - device.memory_reserve_bytes);
}

}  // namespace layerplan
