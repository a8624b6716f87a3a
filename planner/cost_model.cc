#include "planner/cost_model.h"

#include <algorithm>
#include <limits>

#include "model/layer_math.h"
#include "planner/config_space.h"
#include "planner/kernel_efficiency.h"

namespace layerplan {

CostModel::CostModel(const ModelGraph& graph, const DeviceGraph& devices, SyncOptions sync_options,
                     std::shared_ptr<const DeviceProfile> profile)
    : graph_(graph),
      devices_(devices),
      element_bytes_(devices.device().bytes_per_element),
      sync_options_(sync_options),
      hardware_(layerplan::collective_hardware(devices.device().model)),
      gemm_hardware_(gemm_hardware(devices.device().peak_flops, hardware_.sms, devices.device().tensor_cores)),
      bucket_bytes_(
          static_cast<double>(bucket_cap_elements(sync_options.bucket_bytes, element_bytes_) * element_bytes_)),
      send_s_(static_cast<size_t>(devices.device_count())),
      recv_s_(static_cast<size_t>(devices.device_count())),
      net_out_(static_cast<size_t>(devices.nodes())),
      net_in_(static_cast<size_t>(devices.nodes())),
      profile_(graph, std::move(profile)) {
  const int g = devices.gpus_per_node();
  for (int a = 0; a < g; ++a) {
    for (int b = 0; b < g; ++b) {
      const Link &l = devices.intra_link(a, b), &first = devices.intra_link(0, g > 1 ? 1 : 0);
      if (a != b && (l.bandwidth != first.bandwidth || l.latency != first.latency)) uniform_intra_ = false;
    }
  }
}

double CostModel::roofline(double flops, double bytes, int kernels, double shape_efficiency) const {
  const Device& d = devices_.device();
  return std::max(flops / (d.peak_flops * d.compute_efficiency * shape_efficiency),
                  bytes / (d.memory_bandwidth * d.memory_efficiency)) +
         kernels * d.kernel_overhead_s;
}

PassEfficiency CostModel::gemm_efficiency(const Layer& layer, const Configuration& config) const {
  const bool gemm = layer.kind == LayerKind::kFullyConnected || (layer.kind == LayerKind::kConv2d && layer.groups == 1);
  if (!devices_.device().kernel_shape_model || !gemm) return {};
  // The slowest tile's GEMMs (docs/cost-model.md, "Kernel shape"): M output positions, N output
  // channels, K the reduction; the backward is the data gradient (M × C_in, K = C_out·kh·kw)
  // and the weight gradient (C_out × C_in·kh·kw, K = M), half of its FLOPs each.
  const Shape& in = graph_.input_shape(layer, 0);
  const Degrees& d = config.degrees;
  // The tile's extent along `dim` (every extent divides by its degree, docs/planner.md rule 2).
  const auto tile = [&](int dim) { return static_cast<double>(layer.output[dim]) / d[dim]; };
  const double n = tile(0);
  const double c_out = tile(1);
  const double window = layer.kind == LayerKind::kConv2d ? layer.window.kernel_h * layer.window.kernel_w : 1;
  const double m = layer.kind == LayerKind::kConv2d ? n * tile(2) * tile(3) : n;
  const double c_in =
      layer.kind == LayerKind::kConv2d ? static_cast<double>(in.c()) : static_cast<double>(in.c() * in.h() * in.w());
  if (winograd_applies(layer, devices_.device().tensor_cores)) {
    // F(2×2, 3×3): 16 GEMMs over the m/4 2×2 output tiles, K = channels, a 2.25th of the multiplies.
    const double forward = gemm_shape_efficiency({4 * m, c_out, c_in}, gemm_hardware_);
    const double data_grad = gemm_shape_efficiency({4 * m, c_in, c_out}, gemm_hardware_);
    const double weight_grad = gemm_shape_efficiency({c_out, c_in, 4 * m}, gemm_hardware_);
    return {kWinogradGain * forward, kWinogradGain * 2.0 / (1.0 / data_grad + 1.0 / weight_grad)};
  }
  const double forward = gemm_shape_efficiency({m, c_out, c_in * window}, gemm_hardware_);
  const double data_grad = gemm_shape_efficiency({m, c_in, c_out * window}, gemm_hardware_);
  const double weight_grad = gemm_shape_efficiency({c_out, c_in * window, m}, gemm_hardware_);
  return {forward, 2.0 / (1.0 / data_grad + 1.0 / weight_grad)};
}

namespace {

// Kernels launched per pass: none for layers that are views or pure data placement.
int kernels_per_pass(LayerKind kind) { return kind == LayerKind::kInput || kind == LayerKind::kFlatten ? 0 : 1; }

int64_t shard_parameters(const ModelGraph& graph, const Layer& layer, const Degrees& degrees) {
  const int64_t params = parameter_count(graph, layer);
  return channel_split_shards_weights(layer.kind) ? params / degrees[1] : params;
}

}  // namespace

double CostModel::compute_time(const Layer& layer, const Configuration& config) const {
  const PassTimes t = pass_times(layer, config);
  return t.forward_s + t.backward_s;
}

PassTimes CostModel::pass_times(const Layer& layer, const Configuration& config) const {
  if (layer.kind == LayerKind::kInput || layer.kind == LayerKind::kFlatten) return {};
  if (const ProfileTimes* measured = profile_.find(layer, config)) return {measured->forward_s, measured->backward_s};
  const double fraction = 1.0 / config.tiles();
  // Bytes of the slowest tile: the largest input region (halos are clipped at borders).
  // Required regions are products of per-dimension intervals that depend only on the
  // tile's index along that dimension, so the largest is the product of the per-dimension
  // maxima.
  int64_t widest_input = 0;
  for (int slot = 0; slot < static_cast<int>(layer.inputs.size()); ++slot) {
    int64_t volume = 1;
    for (int d = 0; d < kNumDims; ++d) {
      int64_t widest = 0;
      for (int i = 0; i < config.degrees[d]; ++i) {
        Box out = Box::whole(layer.output);
        const int64_t size = layer.output[d] / config.degrees[d];
        out.dim[static_cast<size_t>(d)] = {i * size, (i + 1) * size};
        for (int e = 0; e < kNumDims; ++e) {
          if (e != d) out.dim[static_cast<size_t>(e)].hi = layer.output[e] / config.degrees[e];
        }
        widest = std::max(widest, required_input_box(graph_, layer, slot, out).dim[static_cast<size_t>(d)].size());
      }
      volume *= widest;
    }
    widest_input += volume;
  }
  const int64_t out_elements = layer.output.elements() / config.tiles();
  const int64_t weights = shard_parameters(graph_, layer, config.degrees);
  const auto bytes = static_cast<double>((widest_input + out_elements + weights) * element_bytes_);
  const int kernels = kernels_per_pass(layer.kind);
  const PassEfficiency shape = gemm_efficiency(layer, config);
  const double fwd = roofline(forward_flops(graph_, layer) * fraction, bytes, kernels, shape.forward);
  // Backward reads the output gradient, input and weights and writes input and weight gradients.
  const double bwd = roofline(backward_flops(graph_, layer) * fraction, 2.0 * bytes, kernels, shape.backward);
  const PassTimes transposes = layout_transposes(layer, static_cast<double>(widest_input),
                                                 static_cast<double>(out_elements), static_cast<double>(weights));
  return {fwd + transposes.forward_s, bwd + transposes.backward_s};
}

PassTimes CostModel::layout_transposes(const Layer& layer, double input_elements, double output_elements,
                                       double weight_elements) const {
  const Device& d = devices_.device();
  const bool transposed = d.kernel_shape_model && d.tensor_cores && d.layout == TensorLayout::kChannelsFirst &&
                          layer.kind == LayerKind::kConv2d && layer.groups == 1;
  if (!transposed) return {};
  // cuDNN's tensor-core convolutions work on NHWC: on NCHW tensors each call transposes its
  // operands in and its result out, one memory-bound kernel per tensor that reads and writes
  // it (docs/cost-model.md, "Tensor layout"). Forward: x, w in and y out; backward: the data
  // gradient's dy, w in and dx out, the weight gradient's x, dy in and dw out.
  const double tensor_bytes = 2.0 * static_cast<double>(element_bytes_) / (d.memory_bandwidth * d.memory_efficiency);
  const double one_pass = (input_elements + output_elements + weight_elements) * tensor_bytes;
  constexpr int kTensorsPerPass = 3;
  return {one_pass + kTensorsPerPass * d.kernel_overhead_s, 2.0 * (one_pass + kTensorsPerPass * d.kernel_overhead_s)};
}

namespace {

// The devices of each of `shards` groups (sorted): group s holds the tiles whose channel
// coordinate is s (mod shards), the replicas of one weight shard or channel range.
std::vector<std::vector<int>> shard_groups(const Configuration& config, int shards) {
  std::vector<std::vector<int>> groups(static_cast<size_t>(shards));
  for (int t = 0; t < config.tiles(); ++t) {
    groups[static_cast<size_t>(tile_coords(config.degrees, t)[1] % shards)].push_back(
        config.devices[static_cast<size_t>(t)]);
  }
  for (auto& group : groups) std::sort(group.begin(), group.end());
  return groups;
}

}  // namespace

SyncCost CostModel::sync(const Layer& layer, const Configuration& config) const {
  const int64_t shard = shard_parameters(graph_, layer, config.degrees);
  const int shards = channel_split_shards_weights(layer.kind) ? config.degrees[1] : 1;
  const int replicas = config.tiles() / shards;
  SyncCost cost;
  if (shard == 0 || replicas == 1) return cost;
  const std::vector<std::vector<int>> groups = shard_groups(config, shards);
  const double bytes = static_cast<double>(shard * element_bytes_);
  cost.bytes = static_cast<int64_t>(shards) * 2 * (replicas - 1) * shard * element_bytes_;
  if (sync_options_.scheme == SyncScheme::kParameterServer) {
    cost.time_s = parameter_server_time(groups, bytes);
    return cost;
  }
  // The groups fill their buckets side by side and share the NICs while they reduce them.
  const std::vector<int> users = network_users(groups);
  const double priced_bytes = std::max(bytes, bucket_bytes_);
  CollectiveGroup last;  // a layer's groups are mostly alike: price each shape once
  double last_time = -1;
  for (const auto& group : groups) {
    const CollectiveGroup g = collective_group(group, users);
    if (last_time < 0 || g.ranks != last.ranks || g.nodes != last.nodes || g.intra_bandwidth != last.intra_bandwidth ||
        g.inter_bandwidth != last.inter_bandwidth) {
      last = g;
      last_time = fastest_collective(Collective::kAllReduce, g, hardware_, priced_bytes).time_s;
    }
    cost.time_s = std::max(cost.time_s, bytes >= bucket_bytes_ ? last_time : last_time * bytes / bucket_bytes_);
  }
  return cost;
}

double CostModel::parameter_server_sync_time(const Layer& layer, const Configuration& config) const {
  const int64_t shard = shard_parameters(graph_, layer, config.degrees);
  const int shards = channel_split_shards_weights(layer.kind) ? config.degrees[1] : 1;
  if (shard == 0 || config.tiles() == shards) return 0.0;
  return parameter_server_time(shard_groups(config, shards), static_cast<double>(shard * element_bytes_));
}

std::vector<int> CostModel::network_users(const std::vector<std::vector<int>>& groups) const {
  std::vector<int> users(static_cast<size_t>(devices_.nodes()), 0);
  for (const auto& group : groups) {
    if (group.empty() || devices_.same_node(group.front(), group.back())) continue;
    int last_node = -1;
    for (const int d : group) {  // sorted, so a node's members are adjacent
      if (devices_.node_of(d) != last_node) ++users[static_cast<size_t>(devices_.node_of(d))];
      last_node = devices_.node_of(d);
    }
  }
  return users;
}

CollectiveGroup CostModel::collective_group(const std::vector<int>& devices,
                                            const std::vector<int>& network_users) const {
  CollectiveGroup g;
  g.ranks = static_cast<int>(devices.size());
  g.nodes = 0;
  g.intra_bandwidth = std::numeric_limits<double>::infinity();
  g.inter_bandwidth = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < devices.size(); ++i) {
    const int node = devices_.node_of(devices[i]);
    if (i == 0 || node != devices_.node_of(devices[i - 1])) {
      ++g.nodes;
      const int users = std::max(1, network_users.empty() ? 1 : network_users[static_cast<size_t>(node)]);
      g.inter_bandwidth = std::min(g.inter_bandwidth, devices_.network().bandwidth / users);
    } else {
      g.intra_bandwidth = std::min(g.intra_bandwidth, devices_.intra_link(devices[i - 1], devices[i]).bandwidth);
    }
  }
  return g;
}

CollectiveEstimate CostModel::all_reduce(const std::vector<int>& devices, double bytes,
                                         const std::vector<int>& network_users) const {
  return fastest_collective(Collective::kAllReduce, collective_group(devices, network_users), hardware_, bytes);
}

double CostModel::batch_norm_statistics_time(const Layer& layer, const Configuration& config) const {
  const int shards = config.degrees[1];
  if (layer.kind != LayerKind::kBatchNorm || config.tiles() == shards) return 0;
  const int64_t channels_per_shard = layer.output.c() / shards;
  const double bytes = 2.0 * 8.0 * static_cast<double>(channels_per_shard);
  return 2 * direct_all_reduce_time(shard_groups(config, shards), bytes);
}

double CostModel::loss_reduction_time(const std::vector<int>& used_devices) const {
  if (used_devices.size() < 2) return 0;
  return direct_all_reduce_time({used_devices}, 8.0);
}

double CostModel::direct_all_reduce_time(const std::vector<std::vector<int>>& groups, double bytes) const {
  double slowest = 0.0;
  for (const auto& group : groups) {
    for (const int a : group) {
      double send_s = 0.0, latency = 0.0;
      for (const int b : group) {
        if (a == b) continue;
        const Link& link = devices_.link(a, b);
        send_s += bytes / link.bandwidth;
        latency = std::max(latency, link.latency);
      }
      slowest = std::max(slowest, send_s + latency);
    }
  }
  return slowest;
}

double CostModel::ring_all_reduce_time(const std::vector<std::vector<int>>& groups, double bytes) const {
  std::vector<int> leaving(static_cast<size_t>(devices_.nodes()), 0);  // ring hops out of each node
  for (const auto& ring : groups) {
    for (size_t i = 0; i < ring.size(); ++i) {
      const int a = ring[i], b = ring[(i + 1) % ring.size()];
      if (!devices_.same_node(a, b)) ++leaving[static_cast<size_t>(devices_.node_of(a))];
    }
  }
  double slowest = 0.0;
  for (const auto& ring : groups) {
    const double r = static_cast<double>(ring.size());
    double bottleneck = std::numeric_limits<double>::infinity();
    double latency = 0.0;
    for (size_t i = 0; i < ring.size(); ++i) {
      const int a = ring[i], b = ring[(i + 1) % ring.size()];
      const Link& link = devices_.link(a, b);
      const double bw = devices_.same_node(a, b) ? link.bandwidth
                                                 : link.bandwidth / leaving[static_cast<size_t>(devices_.node_of(a))];
      bottleneck = std::min(bottleneck, bw);
      latency = std::max(latency, link.latency);
    }
    slowest = std::max(slowest, 2.0 * (r - 1) / r * bytes / bottleneck + 2.0 * (r - 1) * latency);
  }
  return slowest;
}

double CostModel::parameter_server_time(const std::vector<std::vector<int>>& groups, double bytes) const {
  // The group's first device is its server: every other replica sends it the gradient and
  // receives the updated shard. The server's intra-node links and each node's network
  // carry those bytes; push and pull take the same time.
  std::vector<double> net_in(static_cast<size_t>(devices_.nodes()), 0.0), net_out(net_in.size(), 0.0);
  double slowest = 0.0, latency = 0.0;
  for (const auto& group : groups) {
    const int server = group.front();
    double server_s = 0.0;
    for (size_t i = 1; i < group.size(); ++i) {
      const Link& link = devices_.link(group[i], server);
      latency = std::max(latency, link.latency);
      if (devices_.same_node(group[i], server)) {
        server_s += bytes / link.bandwidth;
      } else {
        net_in[static_cast<size_t>(devices_.node_of(server))] += bytes;
        net_out[static_cast<size_t>(devices_.node_of(group[i]))] += bytes;
      }
    }
    slowest = std::max(slowest, server_s);
  }
  for (size_t k = 0; k < net_in.size(); ++k) {
    slowest = std::max(slowest, std::max(net_in[k], net_out[k]) / devices_.network().bandwidth);
  }
  return 2.0 * (slowest + latency);
}

namespace {

// Both layers split by samples alone, the same way on the same devices: every tile reads
// only samples its own device produced (every kind keeps samples apart), so nothing moves.
// Data parallelism is this on every edge; at 1024 devices the shortcut saves pricing 1024
// tiles per edge.
bool same_sample_split(const Configuration& producer, const Configuration& consumer) {
  for (int d = 1; d < kNumDims; ++d) {
    if (producer.degrees[d] != 1 || consumer.degrees[d] != 1) return false;
  }
  return producer.degrees[0] == consumer.degrees[0] && producer.devices == consumer.devices;
}

}  // namespace

TransferCost CostModel::transfer(const Layer& consumer, int slot, const Configuration& producer,
                                 const Configuration& consumer_config) const {
  if (same_sample_split(producer, consumer_config)) return {};
  if (!uniform_intra_) return transfer_over_pair_links(consumer, slot, producer, consumer_config);
  if (!factored_ || factored_->consumer_id() != consumer.id || factored_->slot() != slot) {
    pricing_bytes_peak_ = pricing_bytes_peak();
    factored_.reset();  // before the next edge's tables, so the two never coexist
    factored_ = std::make_unique<FactoredEdgeTraffic>(graph_, consumer, slot, devices_);
  }
  TrafficSummary summary;
  if (!factored_->summary(producer, consumer_config, summary)) {
    edge_traffic_by_pairs(graph_, consumer, slot, producer, consumer_config, devices_, traffic_);
    summary = summarize(traffic_);
  }
  return price_traffic(summary);
}

int64_t CostModel::pricing_bytes_peak() const {
  return std::max(pricing_bytes_peak_, factored_ ? factored_->bytes() : int64_t{0});
}

TransferCost CostModel::price_traffic(const TrafficSummary& traffic) const {
  TransferCost cost;
  if (traffic.total == 0) return cost;
  const Link& intra = devices_.intra_link(0, devices_.gpus_per_node() > 1 ? 1 : 0);
  const int64_t busiest_device = traffic.busiest_device, busiest_node = traffic.busiest_node;
  const auto b = static_cast<double>(element_bytes_);
  const double slowest =
      std::max(busiest_device > 0 ? static_cast<double>(busiest_device) * b / intra.bandwidth : 0.0,
               busiest_node > 0 ? static_cast<double>(busiest_node) * b / devices_.network().bandwidth : 0.0);
  const double latency =
      std::max(busiest_device > 0 ? intra.latency : 0.0, busiest_node > 0 ? devices_.network().latency : 0.0);
  cost.time_s = 2.0 * (slowest + latency);
  cost.bytes = 2 * traffic.total * element_bytes_;
  return cost;
}

TransferCost CostModel::transfer_over_pair_links(const Layer& consumer, int slot, const Configuration& producer,
                                                 const Configuration& consumer_config) const {
  std::fill(send_s_.begin(), send_s_.end(), 0.0);
  std::fill(recv_s_.begin(), recv_s_.end(), 0.0);
  std::fill(net_out_.begin(), net_out_.end(), 0.0);
  std::fill(net_in_.begin(), net_in_.end(), 0.0);
  int64_t elements = 0;
  double latency = 0.0;
  for_each_transfer(graph_, consumer, slot, producer, consumer_config, [&](int src, int dst, int64_t n) {
    elements += n;
    const double bytes = static_cast<double>(n * element_bytes_);
    const Link& link = devices_.link(src, dst);
    latency = std::max(latency, link.latency);
    if (devices_.same_node(src, dst)) {
      send_s_[static_cast<size_t>(src)] += bytes / link.bandwidth;
      recv_s_[static_cast<size_t>(dst)] += bytes / link.bandwidth;
    } else {
      net_out_[static_cast<size_t>(devices_.node_of(src))] += bytes;
      net_in_[static_cast<size_t>(devices_.node_of(dst))] += bytes;
    }
  });
  TransferCost cost;
  if (elements == 0) return cost;
  double slowest = 0.0;
  for (size_t d = 0; d < send_s_.size(); ++d) slowest = std::max({slowest, send_s_[d], recv_s_[d]});
  for (size_t k = 0; k < net_out_.size(); ++k) {
    slowest = std::max(slowest, std::max(net_out_[k], net_in_[k]) / devices_.network().bandwidth);
  }
  cost.time_s = 2.0 * (slowest + latency);
  cost.bytes = 2 * elements * element_bytes_;
  return cost;
}

}  // namespace layerplan
