#pragma once
// The elimination search's input for one model on one device graph: the search nodes
// ("units": a layer plus the element-wise layers fused into it), each unit's
// configurations, and the cost tables of units and edges that the cost model prices.
#include <chrono>
#include <optional>
#include <vector>

#include "model/geometry.h"
#include "model/model_graph.h"
#include "planner/config_space.h"
#include "planner/cost_model.h"
#include "planner/search.h"
#include "topology/device_graph.h"

namespace layerplan {

struct SearchUnits {
  std::vector<int> unit_of_layer;                 // search node of each layer
  std::vector<int> head;                          // unit -> its first layer
  std::vector<std::vector<Configuration>> space;  // unit -> the configurations it may take
};

// Groups the layers into units (an element-wise layer joins its producer's unit when
// `fuse_elementwise` and joining restricts nothing it could be split along,
// docs/planner.md) and enumerates each unit's configurations.
SearchUnits make_search_units(const ModelGraph& graph, const DeviceGraph& devices, const SpaceOptions& space,
                              bool fuse_elementwise);

// The cost graph of `units`: a node's table holds its layers' compute and sync time for
// each of its configurations, an edge's the transfer time for each pair. With
// `share_tables`, layers and edges of equal geometry (ResNet's and Inception's repeated
// blocks) share one computed table. Returns nullopt when `deadline` passed first.
std::optional<CostGraph> build_cost_graph(const CostModel& model, const SearchUnits& units, bool share_tables,
                                          std::optional<std::chrono::steady_clock::time_point> deadline);

}  // namespace layerplan
