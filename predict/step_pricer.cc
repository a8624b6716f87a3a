#include "predict/step_pricer.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "predict/message_clock.h"
#include "runtime/executor/executor.h"
#include "topology/cluster_spec.h"

namespace layerplan {
namespace {

// The ranks as devices of one node joined by the link. The cost model prices the bytes;
// the messages' time is added by MessageClock, by the compute before each.
DeviceGraph one_node_of(int devices, const LinkFigures& link) {
  ClusterSpec spec;
  spec.nodes = 1;
  spec.gpus_per_node = devices;
  spec.intra_bandwidth_gbytes = link.gbytes;
  spec.intra_latency_us = 0;
  validate(spec);
  return build_device_graph(spec);
}

LayerTraffic layer_traffic(const ModelGraph& graph, const std::vector<Configuration>& plan, int devices,
                           const CostModel& cost, int id) {
  const Layer& layer = graph.layer(id);
  const Configuration& config = plan[static_cast<size_t>(id)];
  LayerTraffic traffic;
  for (size_t slot = 0; slot < layer.inputs.size(); ++slot) {
    const Configuration& producer = plan[static_cast<size_t>(layer.inputs[slot])];
    traffic.edges.push_back(cost.transfer(layer, static_cast<int>(slot), producer, config));
    const std::vector<PairVolume> volumes = transfer_volumes(graph, layer, static_cast<int>(slot), producer, config);
    traffic.forward_shapes.push_back(move_shape(volumes, devices, false));
    traffic.backward_shapes.push_back(move_shape(volumes, devices, true));
  }
  traffic.statistics_s = cost.batch_norm_statistics_time(layer, config);
  return traffic;
}

}  // namespace

// One step's communication in the order the executor sends it: forward, each layer's
// input moves then its compute; the loss; backward, each layer's compute, its input
// gradients' moves and the gradient buckets due after it; the buckets due at the end.
// The cost model prices the bytes without latency, so the bytes of a price are its
// seconds times the bandwidth.
//
// With overlap the walk also keeps the executor's thread's time (now_) and, per device, when
// its communication thread is free: a bucket's ring starts once it is issued and its devices'
// threads are free, and runs beside the backward; the step ends when both are done, so only
// the rings' time past the backward's end adds to it.
class StepPricer::Walk {
 public:
  Walk(const StepPricer& pricer, const MeasuredSteps& measured)
      : p_(pricer),
        n_(static_cast<size_t>(pricer.graph_.size())),
        bytes_per_s_(1e9 * pricer.link_.gbytes),
        clock_(pricer.link_, n_),
        compute_s_(measured.compute_s),
        forward_s_(n_),
        transfer_s_(n_, 0.0),
        sync_s_(n_, 0.0),
        computed_(static_cast<size_t>(pricer.device_count_), false),
        comm_free_(static_cast<size_t>(pricer.device_count_), 0.0) {
    for (size_t id = 0; id < n_; ++id) forward_s_[id] = std::min(compute_s_[id], measured.forward_s[id]);
  }

  void run() {
    for (size_t id = 0; id < n_; ++id) {
      edge_pass(id, false);
      compute_pass(id, forward_s_[id]);
    }
    reduce_loss();
    for (size_t id = n_; id-- > 0;) {
      compute_pass(id, compute_s_[id] - forward_s_[id]);
      edge_pass(id, true);
      reduce_buckets(static_cast<int>(id));
    }
    reduce_buckets(-1);
    if (p_.overlap_) {
      const double rings_end = *std::max_element(comm_free_.begin(), comm_free_.end());
      weight_sync_ = std::max(0.0, rings_end - now_);
      weight_sync_hidden_ = std::max(0.0, rings_s_ - weight_sync_);
    }
  }

  StepPrediction result(const MeasuredSteps& measured) const;

 private:
  // Layer `id` computing for one pass (forward or backward), its statistics reduced halfway.
  void compute_pass(size_t id, double seconds) {
    for (int d : p_.plan_[id].devices) {
      computed_[static_cast<size_t>(d)] = computed_[static_cast<size_t>(d)] || seconds > 0;
    }
    const double statistics_s = p_.traffic_[id].statistics_s;
    now_ += seconds;
    if (statistics_s > 0) {
      clock_.compute(seconds / 2);
      const double sync = statistics_s / 2 + clock_.message(id, statistics_s / 2 * bytes_per_s_);
      sync_s_[id] += sync;
      now_ += sync;
      clock_.compute(seconds / 2);
    } else {
      clock_.compute(seconds);
    }
  }

  // One pass of layer `id`'s input edges: half of their bytes, and a message each where
  // they move any.
  void edge_pass(size_t id, bool backward) {
    const LayerTraffic& traffic = p_.traffic_[id];
    const std::vector<MoveShape>& shapes = backward ? traffic.backward_shapes : traffic.forward_shapes;
    for (size_t slot = 0; slot < traffic.edges.size(); ++slot) {
      const TransferCost& c = traffic.edges[slot];
      transfer_s_[id] += c.time_s / 2;
      now_ += c.time_s / 2;
      if (c.bytes == 0) continue;
      const double message = clock_.message(id, c.time_s / 2 * bytes_per_s_, shapes[slot]);
      transfer_s_[id] += message;
      now_ += message;
      for (int d : shapes[slot].devices) computed_[static_cast<size_t>(d)] = false;
    }
  }

  // The executor reduces the loss among the devices the plan uses. Between two devices, one
  // of which has waited with nothing to compute since its last message, the other finds
  // that one's part there when it arrives: a one-way message back to back, not an exchange
  // after computing. With more devices, Gloo's all-reduce takes several rounds among them
  // and keeps the exchange's figure (docs/BENCHMARKS.md, "Why predict prices things as it
  // does").
  void reduce_loss() {
    const std::vector<int>& used = p_.used_;
    if (used.size() <= 1) return;
    loss_sync_ = p_.cost_.loss_reduction_time(used);
    const bool one_waited =
        used.size() == 2 && computed_[static_cast<size_t>(used[0])] != computed_[static_cast<size_t>(used[1])];
    if (one_waited) clock_.forget_gap();
    loss_sync_ += clock_.message(n_, loss_sync_ * bytes_per_s_, {one_waited, 1, {}});
    now_ += loss_sync_;
  }

  // The buckets due at one point (after layer `after`, or at the end: -1), in order; a
  // bucket's ring starts once all its devices are free, so buckets of disjoint devices
  // overlap.
  void reduce_buckets(int after) {
    if (p_.overlap_) return overlap_buckets(after);
    std::vector<double> busy(static_cast<size_t>(p_.device_count_), 0.0);
    bool any = false;
    for (const GradientBucket& b : p_.buckets_) {
      if (b.reduce_after_layer != after) continue;
      reduce_bucket(b, busy);
      any = true;
    }
    if (!any) return;
    weight_sync_ += *std::max_element(busy.begin(), busy.end());
    now_ += *std::max_element(busy.begin(), busy.end());
    clock_.forget_gap();
  }

  // With overlap: the buckets due at one point, issued to the communication threads at now_;
  // the executor's thread goes on at once.
  void overlap_buckets(int after) {
    for (const GradientBucket& b : p_.buckets_) {
      if (b.reduce_after_layer != after) continue;
      double start = now_;
      for (int d : b.devices) start = std::max(start, comm_free_[static_cast<size_t>(d)]);
      const double t = ring_time(b, start == now_);
      rings_s_ += t;
      for (int d : b.devices) comm_free_[static_cast<size_t>(d)] = start + t;
    }
  }

  // A bucket's ring: its bytes as the cost model prices them and its 2(p-1) steps.
  double ring_time(const GradientBucket& b, bool after_gap) {
    double t = p_.cost_.ring_all_reduce_time({b.devices}, 4.0 * static_cast<double>(b.elements()));
    for (size_t step = 0; step < 2 * (b.devices.size() - 1); ++step) t += clock_.ring_step(step == 0 && after_gap);
    return t;
  }

  // One bucket's ring: its bytes as the cost model prices them, and 2(p-1) messages, a
  // chunk each, the first after the compute gap if no earlier ring holds its devices, the
  // others back to back. A ring's steps are priced at the small-message figure, not the
  // figure of their chunk's size: Gloo's ring sends a chunk while it receives the next and
  // sums the one before, so the chunks' time beyond their bytes overlaps (docs/BENCHMARKS.md,
  // "Why predict prices things as it does").
  void reduce_bucket(const GradientBucket& b, std::vector<double>& busy) {
    double start = 0;
    bool first = true;
    for (int d : b.devices) {
      start = std::max(start, busy[static_cast<size_t>(d)]);
      first = first && busy[static_cast<size_t>(d)] == 0;
    }
    const double t = ring_time(b, first);
    for (int d : b.devices) busy[static_cast<size_t>(d)] = start + t;
  }

  const StepPricer& p_;
  size_t n_;            // layers
  double bytes_per_s_;  // the link's bandwidth
  MessageClock clock_;
  const std::vector<double>& compute_s_;
  std::vector<double> forward_s_, transfer_s_, sync_s_;  // per layer
  std::vector<bool> computed_;                           // per device: whether it has computed since its last message
  double weight_sync_ = 0, loss_sync_ = 0;
  double now_ = 0;                 // the executor's thread's time into the step
  std::vector<double> comm_free_;  // with overlap, per device: when its communication thread is free
  double rings_s_ = 0;             // with overlap: every ring's time
  double weight_sync_hidden_ = 0;  // with overlap: the rings' time within the backward
};

StepPrediction StepPricer::Walk::result(const MeasuredSteps& measured) const {
  StepPrediction out;
  out.sync_s = weight_sync_ + loss_sync_;
  for (size_t id = 0; id < n_; ++id) {
    out.compute_s += compute_s_[id];
    out.transfer_s += transfer_s_[id];
    out.sync_s += sync_s_[id];
    out.layers.push_back({p_.graph_.layer(static_cast<int>(id)).name, compute_s_[id], forward_s_[id], transfer_s_[id],
                          sync_s_[id], clock_.layer_messages()[id]});
  }
  out.overhead_s = measured.overhead_s;
  out.data_s = measured.data_s;
  out.step_s = out.compute_s + out.overhead_s + out.data_s + out.transfer_s + out.sync_s;
  out.weight_sync_s = weight_sync_;
  out.weight_sync_hidden_s = weight_sync_hidden_;
  out.overlap = p_.overlap_;
  out.loss_sync_s = loss_sync_;
  out.buckets = p_.buckets_.size();
  out.messages = clock_.messages();
  return out;
}

StepPricer::StepPricer(const ModelGraph& graph, const std::vector<Configuration>& plan, int devices,
                       const LinkFigures& link, bool overlap)
    : graph_(graph),
      plan_(plan),
      device_count_(devices),
      link_(link),
      overlap_(overlap),
      devices_(one_node_of(devices, link)),
      cost_(graph, devices_),
      buckets_(gradient_buckets(graph, plan, bucket_cap_elements(ExecutorOptions{}.gradient_bucket_bytes))),
      used_(devices_used(plan)) {
  for (int id = 0; id < graph.size(); ++id) traffic_.push_back(layer_traffic(graph, plan, devices, cost_, id));
}

StepPrediction StepPricer::price(const MeasuredSteps& measured) const {
  const auto layers = static_cast<size_t>(graph_.size());
  if (measured.compute_s.size() != layers || measured.forward_s.size() != layers) {
    throw std::invalid_argument("StepPricer::price: measurements of " + std::to_string(measured.compute_s.size()) +
                                " layers for a graph of " + std::to_string(layers));
  }
  Walk walk(*this, measured);
  walk.run();
  return walk.result(measured);
}

StepPrediction predict_step(const ModelGraph& graph, const std::vector<Configuration>& plan, int devices,
                            const MeasuredSteps& measured, const LinkFigures& link, bool overlap) {
  return StepPricer(graph, plan, devices, link, overlap).price(measured);
}

}  // namespace layerplan
