#include "planner/cost_tables.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace layerplan {

namespace {

// Element-wise layers that take their producer's configuration: a ReLU, other activation,
// batch-norm or dropout whose producer feeds nothing else, when the producer's search node (`head`, the
// first layer of its chain) can split every dimension the element-wise layer could. This
// is a restriction of the space (docs/planner.md): it removes re-partitioning between a
// layer and its activation, which no plan of the zoo models gains from at 4-16 GPUs. Every
// baseline satisfies it, so the layer-wise optimum is never worse than a baseline.
bool joins_producer(const ModelGraph& graph, const Layer& layer, const Layer& head) {
  const bool elementwise = layer.kind == LayerKind::kRelu || layer.kind == LayerKind::kBatchNorm ||
                           layer.kind == LayerKind::kDropout || layer.kind == LayerKind::kActivation;
  if (!elementwise || layer.inputs.size() != 1) return false;
  const Layer& producer = graph.layer(layer.inputs[0]);
  if (producer.kind == LayerKind::kInput || graph.consumers(producer.id).size() != 1) return false;
  const auto head_dims = splittable_dims(head.kind);
  for (int d = 0; d < kNumDims; ++d) {
    if (layer.output[d] > 1 && !head_dims[static_cast<size_t>(d)]) return false;
  }
  return true;
}

// What a layer's costs depend on besides its configuration: kind, window, bias, groups
// and the shapes it reads and writes. Layers with equal signatures have equal cost tables.
std::string layer_signature(const ModelGraph& graph, const Layer& l) {
  std::string key(kind_name(l.kind));
  if (l.kind == LayerKind::kActivation) key += ":" + std::string(activation_name(l.activation));
  const Window& w = l.window;
  for (int v : {w.kernel_h, w.kernel_w, w.stride_h, w.stride_w, w.pad_h, w.pad_w, int{l.has_bias}}) {
    key += "," + std::to_string(v);
  }
  if (l.groups > 1) key += "/g" + std::to_string(l.groups);
  key += ">" + l.output.str();
  for (int in : l.inputs) key += "<" + graph.layer(in).output.str();
  return key;
}

// The extents a layer may be split along, "-" for the others: "512x-x56x56" for a concat.
std::string splittable_extents(const Layer& l) {
  const auto dims = splittable_dims(l.kind);
  std::string key;
  for (int d = 0; d < kNumDims; ++d) {
    key += (d > 0 ? "x" : "") + (dims[static_cast<size_t>(d)] ? std::to_string(l.output[d]) : std::string("-"));
  }
  return key;
}

// What an edge's transfer costs depend on besides the two configurations: the consumer's
// kind, window and groups, its output shape, this input's shape and, for a concat that can be
// split along channels, where this input starts in its output (for a channel slice, where
// its output starts in the input). Not the other inputs, so
// the inputs of a wide concat or add share one table; the key's length does not grow with
// the number of inputs. (A concat is never split along channels, docs/planner.md: each of
// its tiles reads every channel of every input, wherever the input starts and however many
// channels the concat has, so its key leaves its own channel count out: the concats of a
// dense block share their tables.)
std::string edge_signature(const ModelGraph& graph, const Layer& l, int slot) {
  std::string key(kind_name(l.kind));
  const Window& w = l.window;
  for (int v : {w.kernel_h, w.kernel_w, w.stride_h, w.stride_w, w.pad_h, w.pad_w}) key += "," + std::to_string(v);
  if (l.groups > 1) key += "/g" + std::to_string(l.groups);
  key += ">" + (l.kind == LayerKind::kConcat ? splittable_extents(l) : l.output.str());
  key += "<" + graph.input_shape(l, slot).str();
  if (l.kind == LayerKind::kConcat && splittable_dims(l.kind)[1]) {
    key += "@" + std::to_string(graph.channel_offset(l, slot));
  }
  // A channel slice reads its input's channels from first_channel on: which producer
  // tiles hold them depends on it.
  if (l.kind == LayerKind::kChannelSlice) key += "@" + std::to_string(l.first_channel);
  return key;
}

// What a unit's configuration list depends on: its first layer's splittable dimensions and
// their extents (enumerate_configurations() never splits the others, whatever their size).
std::string space_signature(const Layer& head) { return splittable_extents(head); }

// Fills the tables of a cost graph layer by layer, computing each distinct table once.
class CostGraphBuilder {
 public:
  CostGraphBuilder(const CostModel& model, const SearchUnits& units, bool share_tables, Deadline& deadline)
      : model_(model), units_(units), share_tables_(share_tables), deadline_(deadline) {
    for (const auto& configs : units_.space) {
      costs_.add_node(std::vector<double>(configs.size(), 0.0));
      parts_.node_sync.emplace_back(configs.size(), 0.0);
    }
    parts_.edge_of_input.resize(static_cast<size_t>(model_.graph().size()));
    for (int h : units_.head) unit_key_.push_back(space_signature(model_.graph().layer(h)));
  }

  // Adds the layer's compute and sync to its unit and, for a unit's first layer, the edges into it.
  void add_layer(const Layer& l) {
    const auto u = unit(l.id);
    const std::string signature = layer_signature(model_.graph(), l);
    // The node table holds compute + sync per configuration, then the sync alone.
    const std::vector<double> node = node_table(l, u, "node " + signature + " " + unit_key_[u]);
    const size_t configs = node.size() / 2;
    for (size_t a = 0; a < configs; ++a) {
      costs_.node_cost[u][a] += node[a];
      parts_.node_sync[u][a] += node[configs + a];
    }
    std::vector<int>& edges = parts_.edge_of_input[static_cast<size_t>(l.id)];
    edges.assign(l.inputs.size(), -1);
    if (units_.head[u] != l.id) return;  // fused members read their own unit's output
    for (int slot = 0; slot < static_cast<int>(l.inputs.size()); ++slot) {
      const auto v = unit(l.inputs[static_cast<size_t>(slot)]);
      const std::string key =
          "edge " + edge_signature(model_.graph(), l, slot) + " " + unit_key_[v] + " " + unit_key_[u];
      edges[static_cast<size_t>(slot)] = static_cast<int>(costs_.edges.size());
      costs_.add_edge(static_cast<int>(v), static_cast<int>(u), edge_table(l, slot, v, u, key));
    }
  }

  CostGraph take() { return std::move(costs_); }
  CostGraphParts take_parts() { return std::move(parts_); }
  int64_t memo_bytes() const { return memo_bytes_; }

 private:
  size_t unit(int layer) const { return static_cast<size_t>(units_.unit_of_layer[static_cast<size_t>(layer)]); }

  std::vector<double> node_table(const Layer& l, size_t u, std::string key) {
    const std::vector<Configuration>& space = units_.space[u];
    if (const std::vector<double>* known = find(key)) return *known;
    std::vector<double> t(2 * space.size());
    for (size_t a = 0; a < space.size(); ++a) {
      deadline_.charge(int64_t{1} + space[a].tiles() * static_cast<int64_t>(l.inputs.size() + 1));
      const double sync = model_.sync(l, space[a]).time_s;
      t[a] = model_.compute_time(l, space[a]) + sync;
      t[space.size() + a] = sync;
    }
    return remember(std::move(key), std::move(t));
  }

  std::vector<double> edge_table(const Layer& l, int slot, size_t v, size_t u, std::string key) {
    const std::vector<Configuration>& from = units_.space[v];
    const std::vector<Configuration>& to = units_.space[u];
    if (const std::vector<double>* known = find(key)) return *known;
    std::vector<double> t(from.size() * to.size());
    for (size_t a = 0; a < from.size(); ++a) {
      for (size_t b = 0; b < to.size(); ++b) {
        deadline_.charge(int64_t{1} + from[a].tiles() + to[b].tiles());
        t[a * to.size() + b] = model_.transfer(l, slot, from[a], to[b]).time_s;
      }
    }
    return remember(std::move(key), std::move(t));
  }

  const std::vector<double>* find(const std::string& key) const {
    if (!share_tables_) return nullptr;
    const auto it = memo_.find(key);
    return it == memo_.end() ? nullptr : &it->second;
  }

  std::vector<double> remember(std::string key, std::vector<double> table) {
    if (share_tables_) {
      constexpr int64_t kMapNode = 64;  // the map's node, bucket and string header, about
      memo_bytes_ += kMapNode + static_cast<int64_t>(key.capacity() + table.size() * sizeof(double));
      memo_.emplace(std::move(key), table);
    }
    return table;
  }

  const CostModel& model_;
  const SearchUnits& units_;
  const bool share_tables_;
  Deadline& deadline_;
  CostGraph costs_;
  CostGraphParts parts_;
  std::vector<std::string> unit_key_;
  std::unordered_map<std::string, std::vector<double>> memo_;
  int64_t memo_bytes_ = 0;
};

}  // namespace

SearchUnits group_units(const ModelGraph& graph, bool fuse_elementwise) {
  SearchUnits units;
  units.unit_of_layer.assign(static_cast<size_t>(graph.size()), -1);
  for (const Layer& l : graph.layers()) {
    const int producer_unit = l.inputs.empty() ? -1 : units.unit_of_layer[static_cast<size_t>(l.inputs[0])];
    if (fuse_elementwise && producer_unit >= 0 &&
        joins_producer(graph, l, graph.layer(units.head[static_cast<size_t>(producer_unit)]))) {
      units.unit_of_layer[static_cast<size_t>(l.id)] = producer_unit;
    } else {
      units.unit_of_layer[static_cast<size_t>(l.id)] = static_cast<int>(units.head.size());
      units.head.push_back(l.id);
    }
  }
  return units;
}

SearchUnits make_search_units(const ModelGraph& graph, const DeviceGraph& devices, const SpaceOptions& space,
                              bool fuse_elementwise) {
  Deadline never;
  return make_search_units(graph, devices, space, fuse_elementwise, never);
}

SearchUnits make_search_units(const ModelGraph& graph, const DeviceGraph& devices, const SpaceOptions& space,
                              bool fuse_elementwise, Deadline& deadline) {
  SearchUnits units = group_units(graph, fuse_elementwise);
  // Units with equal space signatures have equal configuration lists: enumerate each once.
  std::unordered_map<std::string, size_t> first_with;
  units.space.reserve(units.head.size());
  for (int h : units.head) {
    const auto [it, inserted] = first_with.try_emplace(space_signature(graph.layer(h)), units.space.size());
    if (!inserted) {
      deadline.charge(static_cast<int64_t>(units.space[it->second].size()));
      units.space.push_back(units.space[it->second]);
      continue;
    }
    units.space.push_back(
        enumerate_configurations(graph.layer(h), devices.device_count(), devices.gpus_per_node(), space, deadline));
  }
  return units;
}

int64_t SearchSize::bytes() const {
  constexpr int64_t kEntry = sizeof(double);
  const int64_t configs =
      configurations * static_cast<int64_t>(sizeof(Configuration)) + device_ids * static_cast<int64_t>(sizeof(int));
  return configs + pricing_bytes + kEntry * (node_entries + edge_entries + shared_entries + working_entries);
}

namespace {

// What one FactoredEdgeTraffic can hold on `devices`: its dense prefix sums up to their
// budget, per dimension and pair of degrees (divisors of D) six arrays of up to D + 1
// entries, the node boxes (first boxes and grid cells) of both sides' configurations and
// the tables of node classes.
int64_t pricing_bound(const DeviceGraph& devices, int64_t most_configs) {
  constexpr int64_t kTableHeader = 256, kMapNode = 64;
  const int64_t d = devices.device_count(), nodes = devices.nodes();
  int64_t divisors = 0;
  for (int64_t v = 1; v <= d; ++v) divisors += d % v == 0 ? 1 : 0;
  const int64_t tables = kNumDims * divisors * divisors * (kTableHeader + 6 * (d + 1) * int64_t{sizeof(int64_t)});
  const int64_t boxes = 2 * most_configs * (kMapNode + kTableHeader + nodes * (1 + 3 * 4 * kNumDims + 4));
  const int64_t classes = FactoredEdgeTraffic::most_class_bytes(devices.nodes(), devices.gpus_per_node());
  return FactoredEdgeTraffic::kDenseBudgetBytes + tables + boxes + classes + d * int64_t{sizeof(int)};
}

// Configurations and device ids of one unit from its degree vectors alone.
std::pair<int64_t, int64_t> count_configurations(const Layer& head, const DeviceGraph& devices,
                                                 const SpaceOptions& space, Deadline& deadline) {
  std::pair<int64_t, int64_t> count{0, 0};
  const int d = devices.device_count();
  for (const Degrees& degrees : candidate_degrees(head, d, devices.gpus_per_node(), deadline)) {
    if (!allowed_degrees(degrees, d, devices.gpus_per_node(), space)) continue;
    const int p = degrees.product();
    const int64_t blocks = space.placement == PlacementRule::kFirstBlock ? 1 : d / p;
    count.first += blocks;
    count.second += blocks * p;
  }
  return count;
}

}  // namespace

SearchSize estimate_search_size(const ModelGraph& graph, const SearchUnits& units, const DeviceGraph& devices,
                                const SpaceOptions& space, bool share_tables, Deadline& deadline) {
  // Configurations and device ids per space signature, from the degree vectors alone.
  std::unordered_map<std::string, std::pair<int64_t, int64_t>> counted;
  std::vector<int64_t> configs;
  std::vector<std::string> unit_key;
  SearchSize size;
  for (int h : units.head) {
    unit_key.push_back(space_signature(graph.layer(h)));
    const auto [it, inserted] = counted.try_emplace(unit_key.back());
    if (inserted) it->second = count_configurations(graph.layer(h), devices, space, deadline);
    configs.push_back(it->second.first);
    size.configurations += it->second.first;
    size.device_ids += it->second.second;
  }
  size.pricing_bytes = pricing_bound(devices, configs.empty() ? 0 : *std::max_element(configs.begin(), configs.end()));
  std::unordered_set<std::string> keys;
  std::unordered_set<int64_t> unit_pairs;
  for (const Layer& l : graph.layers()) {
    const auto u = static_cast<size_t>(units.unit_of_layer[static_cast<size_t>(l.id)]);
    size.node_entries += 2 * configs[u];  // the node table and its sync share (CostGraphParts)
    if (units.head[u] != l.id) continue;
    for (int slot = 0; slot < static_cast<int>(l.inputs.size()); ++slot) {
      deadline.charge();
      const auto v = static_cast<size_t>(units.unit_of_layer[static_cast<size_t>(l.inputs[static_cast<size_t>(slot)])]);
      const int64_t entries = configs[v] * configs[u];
      size.edge_entries += entries;
      const std::string key = edge_signature(graph, l, slot) + " " + unit_key[v] + " " + unit_key[u];
      if (!share_tables || keys.insert(key).second) size.shared_entries += entries;
      const int64_t pair = static_cast<int64_t>(std::min(u, v)) * static_cast<int64_t>(units.head.size()) +
                           static_cast<int64_t>(std::max(u, v));
      if (unit_pairs.insert(pair).second) size.working_entries += entries;
    }
  }
  return size;
}

CostGraph build_cost_graph(const CostModel& model, const SearchUnits& units, bool share_tables, Deadline& deadline,
                           int64_t* memo_bytes, CostGraphParts* parts) {
  CostGraphBuilder builder(model, units, share_tables, deadline);
  for (const Layer& l : model.graph().layers()) builder.add_layer(l);
  if (memo_bytes) *memo_bytes = builder.memo_bytes();
  if (parts) *parts = builder.take_parts();
  return builder.take();
}

int64_t configuration_bytes(const SearchUnits& units) {
  auto bytes = static_cast<int64_t>(units.space.capacity() * sizeof(std::vector<Configuration>));
  for (const std::vector<Configuration>& configs : units.space) {
    bytes += static_cast<int64_t>(configs.capacity() * sizeof(Configuration));
    for (const Configuration& c : configs) bytes += static_cast<int64_t>(c.devices.capacity() * sizeof(int));
  }
  return bytes;
}

int64_t cost_graph_bytes(const CostGraph& graph) {
  auto bytes = static_cast<int64_t>(graph.node_cost.capacity() * sizeof(std::vector<double>) +
                                    graph.edges.capacity() * sizeof(CostEdge));
  for (const std::vector<double>& n : graph.node_cost) bytes += static_cast<int64_t>(n.capacity() * sizeof(double));
  for (const CostEdge& e : graph.edges) bytes += static_cast<int64_t>(e.cost.capacity() * sizeof(double));
  return bytes;
}

}  // namespace layerplan
