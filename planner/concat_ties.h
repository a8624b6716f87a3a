#pragma once
// Which search units the elimination search may tie to one configuration
// (SearchOptions::tied): the concatenations of a dense block (docs/planner.md, §7 "Tied
// concatenations"). DenseNet concatenates every earlier output of a block again before each
// layer; those concats make a graph that node and edge elimination do not reduce.
#include <vector>

#include "model/model_graph.h"
#include "planner/cost_tables.h"

namespace layerplan {

// Groups of concat units that read a common producer unit, directly or through a chain of
// such sharing, and have equal configuration lists (so an index means one configuration
// for all of them). Groups of one are left out; unit ids ascend within a group.
std::vector<std::vector<int>> concat_tie_groups(const ModelGraph& graph, const SearchUnits& units);

}  // namespace layerplan
