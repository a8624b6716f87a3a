#include "runtime/executor/gradient_buckets.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "model/layer_math.h"
#include "runtime/kernels/params.h"

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

int64_t bucket_cap_elements(int64_t bytes) { return std::max<int64_t>(1, bytes / static_cast<int64_t>(sizeof(float))); }

std::vector<GradientBucket> gradient_buckets(const ModelGraph& graph, const std::vector<Configuration>& plan,
                                             int64_t cap_elements) {
  std::vector<GradientBucket> reduced, open;
  for (int id = graph.size() - 1; id >= 0; --id) {
    const Layer& layer = graph.layer(id);
    if (!has_params(layer.kind)) continue;
    const Configuration& config = plan[static_cast<size_t>(id)];
    const std::vector<std::vector<int>> groups = replica_groups(layer, config);
    const int64_t elements = shard_elements(graph, layer, config);
    for (size_t g = 0; g < groups.size(); ++g) {
      if (groups[g].size() < 2 || elements == 0) continue;
      std::vector<int> devices;
      for (int t : groups[g]) devices.push_back(config.devices[static_cast<size_t>(t)]);
      std::sort(devices.begin(), devices.end());
      auto bucket =
          std::find_if(open.begin(), open.end(), [&](const GradientBucket& b) { return b.devices == devices; });
      if (bucket == open.end()) {
        open.push_back({devices, {}, -1});
        bucket = open.end() - 1;
      }
      bucket->segments.push_back({id, static_cast<int>(g), elements});
    }
    // Full buckets are reduced after this layer, in the order they were opened.
    for (auto it = open.begin(); it != open.end();) {
      if (it->elements() >= cap_elements) {
        it->reduce_after_layer = id;
        reduced.push_back(std::move(*it));
        it = open.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (GradientBucket& b : open) reduced.push_back(std::move(b));
  return reduced;
}

}  // namespace layerplan
