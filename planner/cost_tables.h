#pragma once
// The elimination search's input for one model on one device graph: the search nodes
// ("units": a layer plus the element-wise layers fused into it), each unit's
// configurations, and the cost tables of units and edges that the cost model prices.
#include <cstdint>
#include <vector>

#include "model/geometry.h"
#include "model/model_graph.h"
#include "planner/config_space.h"
#include "planner/cost_model.h"
#include "planner/deadline.h"
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
// docs/planner.md), without their configurations (`space` is left empty).
SearchUnits group_units(const ModelGraph& graph, bool fuse_elementwise);

// Groups the layers into units and enumerates each unit's configurations.
SearchUnits make_search_units(const ModelGraph& graph, const DeviceGraph& devices, const SpaceOptions& space,
                              bool fuse_elementwise);
// The same, charging `deadline` (it throws DeadlinePassed when it has passed).
SearchUnits make_search_units(const ModelGraph& graph, const DeviceGraph& devices, const SpaceOptions& space,
                              bool fuse_elementwise, Deadline& deadline);

// What the search's input would hold for `units` (grouped, space not yet enumerated),
// counted from the degree vectors and the tables' keys alone, before anything is allocated.
struct SearchSize {
  int64_t configurations = 0;   // over all units
  int64_t device_ids = 0;       // in their device lists
  int64_t node_entries = 0;     // of the node cost tables
  int64_t edge_entries = 0;     // of the cost graph's edge tables, one per (unit head, input slot)
  int64_t shared_entries = 0;   // of the distinct edge tables that `share_tables` remembers
  int64_t working_entries = 0;  // of the search's working copy: parallel edges summed into one
  int64_t pricing_bytes = 0;    // a bound on one edge's overlap tables and node boxes (edge_traffic.h)

  int64_t bytes() const;
};
SearchSize estimate_search_size(const ModelGraph& graph, const SearchUnits& units, const DeviceGraph& devices,
                                const SpaceOptions& space, bool share_tables, Deadline& deadline);

// The cost graph of `units`: a node's table holds its layers' compute and sync time for
// each of its configurations, an edge's the transfer time for each pair. With
// `share_tables`, layers and edges of equal geometry (ResNet's and Inception's repeated
// blocks, the inputs of a wide concat or add) share one computed table. Charges
// `deadline` for every entry (it throws DeadlinePassed when it has passed).
// `memo_bytes`, when given, receives the bytes the memo of shared tables held at the end.
// `parts`, when given, receives what the step timeline needs besides the summed tables
// (planner/timeline_objective.h).
struct CostGraphParts {
  // Per unit and configuration: of the node cost, the share of bucket all-reduces (the
  // rest is compute); the timeline reduces buckets instead.
  std::vector<std::vector<double>> node_sync;
  // Per layer and input slot: the index in CostGraph::edges of the edge into it (-1 for the
  // inputs of fused members, which read their own unit's output).
  std::vector<std::vector<int>> edge_of_input;
};
CostGraph build_cost_graph(const CostModel& model, const SearchUnits& units, bool share_tables, Deadline& deadline,
                           int64_t* memo_bytes = nullptr, CostGraphParts* parts = nullptr);

// Bytes held by configuration lists and by a cost graph's tables (vector capacities).
int64_t configuration_bytes(const SearchUnits& units);
int64_t cost_graph_bytes(const CostGraph& graph);

}  // namespace layerplan
