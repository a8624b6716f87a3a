#include "model/gradient_buckets.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "model/layer_math.h"

namespace layerplan {

int64_t GradientBucket::elements() const {
  int64_t n = 0;
  for (const GradientSegment& s : segments) n += s.elements;
  return n;
}

std::vector<std::vector<int>> replica_groups(const Layer& layer, const Configuration& config) {
  const bool by_channel = channel_split_shards_weights(layer.kind);
  std::map<int, std::vector<int>> groups;
  for (int t = 0; t < config.tiles(); ++t) groups[by_channel ? tile_coords(config.degrees, t)[1] : 0].push_back(t);
  std::vector<std::vector<int>> out;
  out.reserve(groups.size());
  for (auto& [channel, members] : groups) out.push_back(std::move(members));
  return out;
}

int64_t shard_elements(const ModelGraph& graph, const Layer& layer, const Configuration& config) {
  const int64_t all = parameter_count(graph, layer);
  return channel_split_shards_weights(layer.kind) ? all / config.degrees[1] : all;
}

int64_t bucket_cap_elements(int64_t bytes, int64_t element_bytes) {
  return std::max<int64_t>(1, bytes / std::max<int64_t>(1, element_bytes));
}

std::vector<GradientBucket> gradient_buckets(const ModelGraph& graph, const std::vector<Configuration>& plan,
                                             int64_t cap_elements) {
  std::vector<GradientBucket> reduced, open;
  std::vector<int64_t> open_elements;          // of each open bucket
  std::map<std::vector<int>, size_t> open_at;  // an open bucket's index, by its devices
  for (int id = graph.size() - 1; id >= 0; --id) {
    const Layer& layer = graph.layer(id);
    if (!channel_split_shards_weights(layer.kind)) continue;  // the kinds with weights
    const Configuration& config = plan[static_cast<size_t>(id)];
    const std::vector<std::vector<int>> groups = replica_groups(layer, config);
    const int64_t elements = shard_elements(graph, layer, config);
    bool filled = false;
    for (size_t g = 0; g < groups.size(); ++g) {
      if (groups[g].size() < 2 || elements == 0) continue;
      std::vector<int> devices;
      for (int t : groups[g]) devices.push_back(config.devices[static_cast<size_t>(t)]);
      std::sort(devices.begin(), devices.end());
      const auto [at, opened] = open_at.try_emplace(devices, open.size());
      if (opened) {
        open.push_back({std::move(devices), {}, -1});
        open_elements.push_back(0);
      }
      open[at->second].segments.push_back({id, static_cast<int>(g), elements});
      open_elements[at->second] += elements;
      filled |= open_elements[at->second] >= cap_elements;
    }
    if (!filled) continue;
    // Full buckets are reduced after this layer, in the order they were opened.
    std::vector<GradientBucket> still_open;
    std::vector<int64_t> still_open_elements;
    open_at.clear();
    for (size_t b = 0; b < open.size(); ++b) {
      if (open_elements[b] >= cap_elements) {
        open[b].reduce_after_layer = id;
        reduced.push_back(std::move(open[b]));
      } else {
        open_at.emplace(open[b].devices, still_open.size());
        still_open.push_back(std::move(open[b]));
        still_open_elements.push_back(open_elements[b]);
      }
    }
    open = std::move(still_open);
    open_elements = std::move(still_open_elements);
  }
  for (GradientBucket& b : open) reduced.push_back(std::move(b));
  return reduced;
}

}  // namespace layerplan
