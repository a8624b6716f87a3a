#include "runtime/gpu/communicator_groups.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

#include "runtime/executor/gradient_buckets.h"

namespace layerplan {

std::vector<std::vector<int>> weight_reduction_groups(const ModelGraph& graph, const std::vector<Configuration>& plan,
                                                      int64_t bucket_bytes, int world) {
  std::set<std::vector<int>> groups;
  for (const GradientBucket& bucket : gradient_buckets(graph, plan, bucket_cap_elements(bucket_bytes))) {
    std::vector<int> devices = bucket.devices;
    std::sort(devices.begin(), devices.end());
    if (devices.size() >= 2 && static_cast<int>(devices.size()) < world) groups.insert(devices);
  }
  return {groups.begin(), groups.end()};
}

std::vector<CommSplit> plan_comm_splits(const std::vector<std::vector<int>>& groups, int world) {
  std::vector<CommSplit> splits;
  for (const std::vector<int>& group : groups) {
    for (const int rank : group) {
      if (rank < 0 || rank >= world)
        throw std::invalid_argument("communicator group: rank " + std::to_string(rank) + " outside a world of " +
                                    std::to_string(world));
    }
    auto fits = [&](const CommSplit& s) {
      return std::all_of(group.begin(), group.end(),
                         [&](int rank) { return s.color[static_cast<size_t>(rank)] == CommSplit::kNoColor; });
    };
    auto split = std::find_if(splits.begin(), splits.end(), fits);
    if (split == splits.end()) {
      splits.push_back({std::vector<int>(static_cast<size_t>(world), CommSplit::kNoColor),
                        std::vector<int>(static_cast<size_t>(world), 0),
                        {}});
      split = splits.end() - 1;
    }
    const int color = static_cast<int>(split->groups.size());
    for (size_t k = 0; k < group.size(); ++k) {
      split->color[static_cast<size_t>(group[k])] = color;
      split->key[static_cast<size_t>(group[k])] = static_cast<int>(k);
    }
    split->groups.push_back(group);
  }
  return splits;
}

}  // namespace layerplan
