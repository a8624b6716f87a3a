#include "planner/concat_ties.h"

#include <algorithm>
#include <numeric>

namespace layerplan {

namespace {

int find_root(std::vector<int>& parent, int v) {
  while (parent[static_cast<size_t>(v)] != v) {
    parent[static_cast<size_t>(v)] = parent[static_cast<size_t>(parent[static_cast<size_t>(v)])];
    v = parent[static_cast<size_t>(v)];
  }
  return v;
}

}  // namespace

std::vector<std::vector<int>> concat_tie_groups(const ModelGraph& graph, const SearchUnits& units) {
  const auto unit_count = static_cast<int>(units.head.size());
  std::vector<int> parent(static_cast<size_t>(unit_count));
  std::iota(parent.begin(), parent.end(), 0);
  // The first concat unit seen reading each producer unit, per distinct configuration list.
  std::vector<std::vector<int>> readers(static_cast<size_t>(unit_count));
  for (int u = 0; u < unit_count; ++u) {
    const Layer& head = graph.layer(units.head[static_cast<size_t>(u)]);
    if (head.kind != LayerKind::kConcat) continue;
    const std::vector<Configuration>& space = units.space[static_cast<size_t>(u)];
    for (int in : head.inputs) {
      std::vector<int>& seen = readers[static_cast<size_t>(units.unit_of_layer[static_cast<size_t>(in)])];
      const auto same_space = std::find_if(seen.begin(), seen.end(),
                                           [&](int other) { return units.space[static_cast<size_t>(other)] == space; });
      if (same_space == seen.end()) {
        seen.push_back(u);
      } else {
        parent[static_cast<size_t>(find_root(parent, u))] = find_root(parent, *same_space);
      }
    }
  }
  std::vector<std::vector<int>> members(static_cast<size_t>(unit_count));
  for (int u = 0; u < unit_count; ++u) members[static_cast<size_t>(find_root(parent, u))].push_back(u);
  std::vector<std::vector<int>> groups;
  for (std::vector<int>& group : members) {
    if (group.size() >= 2) groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace layerplan
